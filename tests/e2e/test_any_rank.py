"""Array(T) parameters without a rank (issue 13; kernels/any_rank.pydd):
compiled for ranks 1 to 4 where the body uses the array whole, for rank k
where it subscripts it with k indices, dispatched on ndim from Python, and
the same results as the file run as Python, at every rank."""
import numpy as np
import pytest

from conftest import KERNELS, run_cpp_host, run_pyddc
from same import same

RANKS = (1, 2, 3, 4)


def _array(rank, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    shape = (5, 3, 2, 3)[:rank]
    return (rng.standard_normal(shape) * 10).astype(dtype)


@pytest.mark.parametrize("rank", RANKS)
def test_whole_array_functions_take_every_rank(build, opt, rank):
    comp, ref = build("any_rank", opt)
    x = _array(rank, rank)
    for name, args in [("scale", (x, 1.5)), ("stats", (x,)), ("normalized", (x,)), ("scaled_twice", (x,)),
                       ("axpy", (2.0, x, _array(rank, 7))), ("add_bias", (x, _array(1, 8)[:x.shape[-1]])),
                       ("count_positive", (x.astype(np.int32),)), ("halves", (x, 3)),
                       ("positive_total", (x,))]:
        got, _ = same(getattr(comp, name), getattr(ref, name), *args, rtol=1e-12)
        if isinstance(got, np.ndarray):
            assert got.ndim == rank, name
    # In place, through every alias, with a default argument.
    xi = np.arange(3 ** rank, dtype=np.int64).reshape((3,) * rank)
    same(comp.bump, ref.bump, xi)
    view = xi.T  # any strides
    comp.bump(view, by=5)
    assert xi.flat[0] == 5


def test_subscripted_parameters_take_their_rank(build, opt):
    comp, ref = build("any_rank", opt)
    A, B = _array(2, 1), _array(2, 2)
    same(comp.trace, ref.trace, A)
    same(comp.diagonal_sum, ref.diagonal_sum, A, B)
    same(comp.sum_rows, ref.sum_rows, _array(1, 3))


def test_unsupported_rank_is_a_type_error(build, opt):
    comp, _ = build("any_rank", opt)
    with pytest.raises(TypeError, match=r"scale\(\): parameter 'x' expects a numpy.ndarray of float64 with 1, 2, 3 or 4 "
                                        r"dimensions, got numpy.ndarray of float64 with 5 dimensions"):
        comp.scale(np.zeros((1,) * 5), 2.0)
    # A rank an instance takes, of the wrong dtype: the message still lists
    # every rank, not only the one of the instance the ndim picked.
    with pytest.raises(TypeError, match=r"scale\(\): parameter 'x' expects a numpy.ndarray of float64 with 1, 2, 3 or 4 "
                                        r"dimensions, got numpy.ndarray of int32 with 2 dimensions"):
        comp.scale(np.zeros((2, 2), dtype=np.int32), 2.0)
    with pytest.raises(TypeError, match=r"parameter 'x' expects a numpy.ndarray of float64 with 1, 2, 3 or 4 dimensions, got list"):
        comp.stats([1.0, 2.0])
    # A subscripted parameter takes exactly its rank.
    with pytest.raises(TypeError, match=r"trace\(\): parameter 'A' expects a numpy.ndarray of float64 with 2 dimensions, "
                                        r"got numpy.ndarray of float64 with 3 dimensions"):
        comp.trace(np.zeros((2, 2, 2)))
    with pytest.raises(TypeError, match=r"sum_rows\(\): parameter 'x' expects a numpy.ndarray of float64 with 1 dimension"):
        comp.sum_rows(np.zeros((2, 2)))
    # Rank-less parameters share one rank.
    with pytest.raises(TypeError, match=r"axpy\(\) does not take arrays of these ranks together \(x: 2 dimensions, "
                                        r"y: 1 dimension\); it takes these numbers of dimensions: \(1, 1\), \(2, 2\), "
                                        r"\(3, 3\), \(4, 4\)"):
        comp.axpy(1.0, np.zeros((2, 2)), np.zeros(2))


def test_one_python_function_per_source_function(build):
    comp, _ = build("any_rank", 0)
    assert comp.scale.__doc__ == "scale(x: Array(float64), a: float64) -> Array(float64)"
    assert comp.normalized.__doc__ == "normalized(x: Array(float64))"
    assert comp.trace.__doc__ == "trace(A: Array(float64, 2)) -> float64"
    assert not [n for n in dir(comp) if "__rank" in n]


MAIN_CPP = r"""
#include "any_rank.h"
#include <cstdio>
int main() {
  double data[6] = {1, 2, 3, 4, 5, 6};
  auto v = pydd::Array<double, 1>::borrow(data, {6});
  auto m = pydd::Array<double, 2>::borrow(data, {2, 3});
  // One overload per rank.
  pydd::Array<double, 1> v2 = any_rank::scale(v, 2.0);
  pydd::Array<double, 2> m2 = any_rank::scale(m, 3.0);
  std::printf("%g %g %g %g\n", v2(5), m2(1, 2), any_rank::stats(m), any_rank::trace(m));
}
"""


def test_host_cpp_overloads_each_rank(tmp_path):
    built = run_pyddc("--host=cpp", KERNELS / "any_rank.pydd", "-o", tmp_path)
    assert built.returncode == 0, built.stderr
    header = (tmp_path / "any_rank.h").read_text().replace("[[maybe_unused]] ", "")
    assert "/// scale(x: Array(float64), a: float64) -> Array(float64) for x: Array(float64, 3)\n" in header
    assert "pydd::Array<double, 3> scale(const pydd::Array<double, 3>& x, double a);" in header
    stdout = run_cpp_host(tmp_path, MAIN_CPP, tmp_path / "libany_rank.a")
    # stats(m): sum 21 + max 6 - min 1 + mean 3.5 + len 2 + shape 2 + size 6
    assert stdout.split() == ["12", "18", "39.5", "6"]
