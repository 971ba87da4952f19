"""Every version of every benchmark kernel agrees with its Python original on
the small data (correctness only; nothing is timed)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suite.kernels import VERSIONS, discover  # noqa: E402
from suite.measure import measure_kernel  # noqa: E402

KERNELS = [k.name for k in discover()]


@pytest.fixture(autouse=True)
def bench_build_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("PYDD_BENCH_BUILD", str(tmp_path_factory.getbasetemp() / "bench"))


@pytest.mark.parametrize("name", KERNELS)
def test_versions_agree_with_python(name):
    kernel, = discover([name])
    records = measure_kernel(kernel, "small", VERSIONS, runs=0, validate_only=True,
                             strict=True, log=lambda s: None)
    assert set(records) == set(VERSIONS)


# ---- bench/pairs/: whole-array and loop versions agree with NumPy -------------

sys.path.insert(0, str(Path(__file__).resolve().parent / "pairs"))
import specs as pair_specs  # noqa: E402


def _pairs_harness():
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_pairs_harness", Path(__file__).resolve().parent / "pairs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("name", list(pair_specs.PAIRS))
def test_pairs_agree_with_numpy(name, opt):
    """Both versions of a pair, compiled at -O0 and -O3, agree with the same
    functions run as Python with NumPy, and with each other, on the small
    inputs (bench/pairs.py's check; pyddc's compile cache makes reruns quick)."""
    import pydd
    harness = _pairs_harness()
    path = Path(__file__).resolve().parent / "pairs" / f"{name}.pydd"
    compiled = pydd.compile(path, opt=opt)
    reference = pydd.load_python(path, module_name=f"pairs_numpy_{name}")
    assert harness.check_small(name, compiled, reference, pair_specs) == []
