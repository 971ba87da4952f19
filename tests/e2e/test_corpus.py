"""The NumPy-style corpus (tests/e2e/corpus/*.pydd): kernels written the way
NumPy users write them (`import numpy as np`, np.-prefixed calls, methods,
slices), in the style of public NumPy benchmark collections, written for this
project. Each compiles at -O0 and -O3 and matches the same file run as
Python with NumPy; the ones listed in corpus/cases.py UNSUPPORTED must still
fail to compile, with a pyddc diagnostic (never a C++ error), so that list
stays true. bench/corpus.py reports coverage and speed over the same files."""

import sys

import numpy as np
import pytest

from conftest import E2E, run_pyddc
from same import same
import pydd

sys.path.insert(0, str(E2E / "corpus"))
from cases import ARGS, CORPUS, UNSUPPORTED  # noqa: E402

NAMES = sorted(p.stem for p in CORPUS.glob("*.pydd"))


def test_every_kernel_has_inputs():
    assert sorted(ARGS) == NAMES


@pytest.mark.parametrize("name", [n for n in NAMES if n not in UNSUPPORTED])
@pytest.mark.parametrize("opt", [0, 3], ids=["O0", "O3"])
def test_corpus_kernel_matches_numpy(tmp_path, name, opt):
    src = tmp_path / f"{name}_O{opt}.pydd"
    src.write_text((CORPUS / f"{name}.pydd").read_text())
    comp = pydd.compile(src, out_dir=tmp_path, opt=opt)
    ref = pydd.load_python(CORPUS / f"{name}.pydd", f"{name}_ref")
    args = ARGS[name](np.random.default_rng(7), "test")
    same(getattr(comp, name), getattr(ref, name), *args, rtol=1e-9)


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_kernels_fail_with_a_diagnostic(name):
    r = run_pyddc("--emit=cpp", CORPUS / f"{name}.pydd")
    assert r.returncode == 1 and f"{name}.pydd:" in r.stderr and ": error: " in r.stderr, r.stderr
