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
