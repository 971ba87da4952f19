"""Element indexing: Python's negative indices always; range checks only
with --bounds-check, which raises IndexError with NumPy's message."""

import numpy as np
import pytest

import pydd
from conftest import KERNELS


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    out = tmp_path_factory.mktemp("indexing")
    src = KERNELS / "indexing.pydd"
    checked_src = out / "indexing_checked.pydd"
    checked_src.write_bytes(src.read_bytes())
    plain = pydd.compile(src, out_dir=out / "plain", opt=3)
    checked = pydd.compile(checked_src, out_dir=out / "checked", opt=3, extra_args=("--bounds-check",))
    return plain, checked, pydd.load_python(src, "indexing_ref")


def test_negative_indices_match_python(modules):
    plain, checked, ref = modules
    A = np.arange(7.0)
    B = np.arange(12, dtype=np.int32).reshape(3, 4)
    for mod in (plain, checked):
        for i in range(-7, 7):
            assert mod.get(A, i) == ref.get(A, i)
        for i in range(-3, 3):
            for j in range(-4, 4):
                assert mod.get2(B, i, j) == ref.get2(B, i, j)
        C1, C2 = np.zeros((3, 2)), np.zeros((3, 2))
        mod.set_last(C1, 5.0)
        ref.set_last(C2, 5.0)
        assert np.array_equal(C1, C2)
        D = np.arange(10, dtype=np.int64)
        assert mod.reverse_sum(D) == ref.reverse_sum(D)


@pytest.mark.parametrize("i", [7, -8, 100])
def test_bounds_check_raises_index_error(modules, i):
    _, checked, ref = modules
    A = np.arange(7.0)
    with pytest.raises(IndexError) as reference_error:
        ref.get(A, i)
    with pytest.raises(IndexError) as ours:
        checked.get(A, i)
    # NumPy's own wording: "index 7 is out of bounds for axis 0 with size 7".
    assert str(ours.value) == str(reference_error.value)


def test_bounds_check_names_the_axis(modules):
    _, checked, _ = modules
    B = np.zeros((3, 4), dtype=np.int32)
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 4"):
        checked.get2(B, 0, 4)
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with size 3"):
        checked.get2(B, -4, 0)
