"""int8, int16, uint8, uint16, uint32, uint64 (kernels/smallints.pydd) compiled
vs the same kernels run as Python with NumPy (NEP 50 promotion): scalar and
array arithmetic with wrap-around, floor division and modulo (by zero and
negative), weak literals, shifts, conversions, reductions' result types, a
bigCLAM-style int8 adjacency kernel, unsigned index arrays, the Python
boundary (no copies, dtype and range errors) and printing.

The promotion of every pair of the 11 element types is the library matrix's
"smallints" family (library_cases.py)."""

import itertools

import numpy as np
import pytest

from same import same

RNG = np.random.default_rng(1313)
NEW_INTS = (np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64)


def extremes(t):
    info = np.iinfo(t)
    vals = {info.min, info.max, info.min + 1, info.max - 1, 0, 1, 2, 3, 7, info.max // 2}
    if info.min < 0:
        vals |= {-1, -2, -3, -7, info.min // 2}
    return [t(v) for v in sorted(vals)]


@pytest.mark.parametrize("name,t", [("scalar_i8", np.int8), ("scalar_u8", np.uint8), ("scalar_i16", np.int16),
                                    ("scalar_u16", np.uint16), ("scalar_u32", np.uint32),
                                    ("scalar_u64", np.uint64)])
def test_scalar_wraparound_and_floor_division(build, opt, name, t):
    comp, ref = build("smallints", opt)
    vals = extremes(t)
    for a, b in itertools.product(vals, vals):
        if b == 0:
            continue  # a scalar division by zero raises (below), where NumPy gives 0
        same(getattr(comp, name), getattr(ref, name), a, b)
    # The values themselves, not only agreement with the reference: NumPy's
    # wrap-around and floor semantics.
    got = getattr(comp, name)(t(np.iinfo(t).max), t(2))
    assert got[0] == (np.iinfo(t).min + 1 if np.iinfo(t).min < 0 else 1)  # max + 2 wraps
    assert got[3] == int(t(-np.int64(np.iinfo(t).max)) if np.iinfo(t).min < 0 else
                         np.iinfo(t).max + 1 - np.iinfo(t).max)  # -max (unsigned: 1)
    with pytest.raises(ZeroDivisionError):
        getattr(comp, name)(t(3), t(0))


def test_signed_floor_division_and_modulo(build, opt):
    comp, _ = build("smallints", opt)
    # (a, b) -> a // b, a % b with Python's signs; -128 // -1 wraps to -128.
    for a, b, q, r in [(-7, 2, -4, 1), (7, -2, -4, -1), (-7, -2, 3, -1), (-128, -1, -128, 0), (127, -128, -1, -1)]:
        got = comp.scalar_i8(np.int8(a), np.int8(b))
        assert (got[4], got[5]) == (q, r), (a, b)
    # abs(-128) is -128 in int8, as NumPy's.
    assert comp.scalar_i8(np.int8(-128), np.int8(1))[6] == -128
    assert comp.scalar_u8(np.uint8(200), np.uint8(1))[6] == 200


def test_mixed_scalars_promote_as_numpy(build, opt):
    comp, ref = build("smallints", opt)
    for _ in range(30):
        args = [t(RNG.integers(np.iinfo(t).min, np.iinfo(t).max, endpoint=True, dtype=t))
                for t in (np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64)]
        args += [np.float32(RNG.normal() * 100), np.uint16(RNG.integers(0, 65536))]
        if args[1] == 0:
            args[1] = np.uint8(1)
        got, _ = same(comp.scalar_mixed, ref.scalar_mixed, *args)
        expected = ref.scalar_mixed(*args)
        assert [type(g) for g in got] == [float if isinstance(e, np.floating) else
                                          bool if isinstance(e, np.bool_) else int for e in expected]
    # int8 + uint8 is int16: 127 + 255 does not wrap.
    assert comp.scalar_mixed(np.int8(127), np.uint8(255), *[np.int32(0), np.uint32(0), np.int64(0),
                             np.uint64(0), np.float32(0), np.uint16(0)])[0] == 382


def test_weak_literals_shifts_and_conversions(build, opt):
    comp, ref = build("smallints", opt)
    for a, b, c, d in [(0, 0, 0, 0), (55, 43, 1, 2**63), (255, -128, 65535, 2**64 - 1), (100, 127, 0, 3)]:
        same(comp.weak_literals, ref.weak_literals, np.uint8(a), np.int8(b), np.uint16(c), np.uint64(d))
    assert comp.weak_literals(np.uint8(100), np.int8(50), np.uint16(0), np.uint64(0))[:3] == (44, -106, 65535)
    for a, b, k in itertools.product([0, 1, 0x5A, 255], [-32768, -5, 0, 300, 32767], [0, 1, 3, 7]):
        same(comp.bits, ref.bits, np.uint8(a), np.int16(b), np.uint8(k))
    for n, x in [(0, 0.0), (1, 1.5), (100, 4e9), (127, 255.9)]:
        same(comp.convert_scalars, ref.convert_scalars, n, x)
    # Conversions of wider values keep the low bits, as NumPy's astype.
    assert comp.convert_scalars(300, 0.0)[:4] == (44, 44, 300, 300)
    assert comp.convert_scalars(-1, 0.0)[5] == 2**64 - 1


def test_accumulator_wraps(build, opt):
    comp, ref = build("smallints", opt)
    x = RNG.integers(0, 256, 1000).astype(np.uint8)
    got, _ = same(comp.accumulate_u8, ref.accumulate_u8, x)
    assert got == (int(x.sum()) % 256, int(x.sum()))


def int_arrays(t, n, nonzero=False):
    info = np.iinfo(t)
    x = RNG.integers(info.min, info.max, n, endpoint=True, dtype=t)
    x[:4] = ([info.min, info.max, 0, 1] if info.min == 0 else [info.min, info.max, -1, 0])[:n]
    if nonzero:
        x[x == 0] = 1
    return x


@pytest.mark.parametrize("name,t", [("arrays_i8", np.int8), ("arrays_u8", np.uint8), ("arrays_u32", np.uint32),
                                    ("arrays_u64", np.uint64)])
def test_array_arithmetic(build, opt, name, t):
    comp, ref = build("smallints", opt)
    x, y = int_arrays(t, 300), int_arrays(t, 300)
    y[10:20] = 0  # // and % by zero give 0, as NumPy's
    if np.iinfo(t).min < 0:
        y[20:30] = -1
        x[20] = np.iinfo(t).min  # MIN // -1 wraps
    got, _ = same(getattr(comp, name), getattr(ref, name), x, y)
    q = got[3] if name != "arrays_u64" else got[2]
    assert (q[10:20] == 0).all()
    if np.iinfo(t).min < 0:
        assert q[20] == np.iinfo(t).min


def test_arrays_weak_and_mixed(build, opt):
    comp, ref = build("smallints", opt)
    for n in (0, 1, 37):
        same(comp.arrays_weak, ref.arrays_weak, int_arrays(np.uint8, n), int_arrays(np.int16, n) % 1000)
        args = [int_arrays(t, n, nonzero=t == np.uint8) for t in (np.int8, np.uint8, np.int32, np.uint32,
                                                                  np.int64, np.uint64)]
        args += [RNG.normal(size=n).astype(np.float32) * 100, int_arrays(np.uint16, n)]
        got, _ = same(comp.arrays_mixed, ref.arrays_mixed, *args)
        assert [g.dtype for g in got] == [np.int16, np.int64, np.float64, np.float32, np.float64, np.float64,
                                          np.int16, np.int32]
    got, _ = same(comp.allocate, ref.allocate, 4)
    assert [g.dtype for g in got] == [np.uint8, np.int16, np.uint32, np.uint64, np.int8]


def test_reduction_types(build, opt):
    comp, ref = build("smallints", opt)
    x = RNG.integers(-128, 128, 500).astype(np.int8)
    got, _ = same(comp.reduce_i8, ref.reduce_i8, x, rtol=1e-12)
    assert got[0] == int(x.astype(np.int64).sum())  # int64 accumulator: no wrap past 127
    assert got[7].dtype == np.int64
    same(comp.reduce_i8, ref.reduce_i8, np.zeros(0, np.int8))  # ValueError: empty min
    X = RNG.integers(0, 65536, (7, 9)).astype(np.uint16)
    got, _ = same(comp.reduce_u16, ref.reduce_u16, X, rtol=1e-12)
    assert got[0] == int(X.astype(np.uint64).sum())
    assert [got[4].dtype, got[5].dtype, got[6].dtype] == [np.uint64, np.uint16, np.uint64]
    big = np.array([2**64 - 1, 2**63, 5], np.uint64)
    got, _ = same(comp.reduce_u64, ref.reduce_u64, big, rtol=1e-12)
    assert got[:3] == ((2**64 - 1 + 2**63 + 5) % 2**64, 2**64 - 1, 5)
    same(comp.reduce_typed, ref.reduce_typed, int_arrays(np.int16, 99), int_arrays(np.uint32, 99), rtol=1e-12)


def test_bigclam_int8_adjacency(build, opt):
    comp, ref = build("smallints", opt)
    n, k = 40, 4
    upper = np.triu(RNG.random((n, n)) < 0.2, 1)
    A = (upper | upper.T).astype(np.int8)
    F = RNG.random((n, k)) * 0.5 + 0.05
    for u in (0, 7, n - 1):
        got, _ = same(comp.bigclam_gradient, ref.bigclam_gradient, A, F, u, rtol=1e-12)
        assert got.dtype == np.float64
    # 200 neighbours: int8 row sums must not wrap at 127.
    dense = np.ones((3, 200), np.int8)
    got, _ = same(comp.bigclam_degrees, ref.bigclam_degrees, dense)
    assert list(got[0]) == [200] * 3 and got[0].dtype == np.int64
    same(comp.bigclam_degrees, ref.bigclam_degrees, A)


def test_unsigned_index_arrays(build, opt):
    comp, ref = build("smallints", opt)
    x = RNG.normal(size=50)
    idx = RNG.integers(0, 50, 80).astype(np.uint32)
    got, _ = same(comp.gather_u32, ref.gather_u32, x, idx)
    assert np.array_equal(got, x[idx])
    same(comp.gather_loop, ref.gather_loop, x, idx)
    same(comp.gather_u32, ref.gather_u32, x, np.array([3, 50], np.uint32))  # IndexError
    same(comp.scatter_add, ref.scatter_add, np.zeros(20), RNG.integers(0, 20, 60).astype(np.uint16), RNG.normal(size=60))
    same(comp.scatter_store, ref.scatter_store, np.zeros(10, np.int64), np.array([1, -1, 3, -10], np.int8), 7)
    X = RNG.normal(size=(6, 5))
    same(comp.subscript_by, ref.subscript_by, X, np.uint8(5), np.int16(-1), np.uint64(2))


def test_boundary(build, opt):
    comp, _ = build("smallints", opt)
    assert comp.echo_u8(255) == 255 and comp.echo_u8(np.uint8(7)) == 7 and comp.echo_u8(np.int64(9)) == 9
    assert comp.echo_u64(2**64 - 1) == 2**64 - 1
    for fn, bad in [(comp.echo_u8, 256), (comp.echo_u8, -1), (comp.echo_u64, -1), (comp.echo_u64, 2**64)]:
        with pytest.raises(OverflowError, match=r"parameter 'x' = .* does not fit in uint"):
            fn(bad)
    with pytest.raises(TypeError, match=r"parameter 'x'"):
        comp.echo_u8(1.5)
    # Arrays pass without a copy, and come back with their dtype.
    x = RNG.integers(0, 256, (4, 5)).astype(np.uint8)
    out = comp.scale_u8(x, 3)
    assert out.dtype == np.uint8 and np.array_equal(out, x * np.uint8(3))
    with pytest.raises(TypeError, match=r"scale_u8\(\): parameter 'x' expects a numpy.ndarray of uint8"):
        comp.scale_u8(x.astype(np.int8), 3)
    with pytest.raises(TypeError, match=r"parameter 'x' expects a numpy.ndarray of uint8"):
        comp.scale_u8(x.astype(np.uint16), 3)
    with pytest.raises(OverflowError, match=r"parameter 'k'"):
        comp.scale_u8(x, 256)
    y = np.zeros(10, np.uint64)[::2]
    comp.fill_u64(y, 2**64 - 2)  # a strided view of the caller's array, written in place
    assert (y == 2**64 - 2).all() and y.base is not None and y.base[1] == 0
    assert comp.total_u32([1, 2, 2**32 - 1]) == 2**32 + 2
    with pytest.raises(OverflowError, match=r"'xs' element 1 = -1 does not fit in uint32"):
        comp.total_u32([1, -1])


def test_print(build, opt, capsys):
    comp, ref = build("smallints", opt)
    args = (np.uint8(255), np.int16(-300), np.uint64(2**64 - 1), np.array([0, 7, 2**32 - 1], np.uint32),
            np.array([-128, 5, 127], np.int8))
    comp.show(*args)
    got = capsys.readouterr().out
    ref.show(*args)
    assert got == capsys.readouterr().out == "255 -300 18446744073709551615 [         0          7 4294967295] [-128    5  127]\n"


def test_sparse_element_types(build, opt):
    import scipy.sparse as sp
    comp, ref = build("smallints", opt)
    S = sp.random(6, 7, density=0.4, format="csr", random_state=5)
    S.data = (S.data * 255).astype(np.uint8)
    x, y = RNG.normal(size=7), RNG.integers(0, 256, 7).astype(np.uint8)
    got = comp.sparse_ops(S, x, y)
    exp = ref.sparse_ops(S, x, y)
    assert np.allclose(got[0], exp[0], rtol=1e-12) and got[0].dtype == np.float64
    assert got[1].dtype == exp[1].dtype == np.uint8 and np.array_equal(got[1], exp[1])  # wraps as SciPy's
    assert got[2] == exp[2] == int(S.data.astype(np.uint64).sum())
    assert got[3].dtype == np.uint8 and np.array_equal(got[3].toarray(), exp[3].toarray())
    assert got[4].dtype == np.uint8 and np.array_equal(got[4], exp[4])
    assert got[5].dtype == np.uint64 and np.array_equal(got[5], np.asarray(exp[5]).ravel())
    T = comp.sparse_build(4, np.int16(-300))
    assert T.dtype == np.int16 and np.array_equal(T.toarray(), ref.sparse_build(4, np.int16(-300)).toarray())
    with pytest.raises(TypeError, match=r"parameter 'S'"):
        comp.sparse_ops(S.astype(np.int8), x, y)


HOST_MAIN = r"""
#include <cstdio>
#include "smallints_host.h"
int main() {
  pydd::Array<uint16_t, 1> x = pydd::Array<uint16_t, 1>::zeros({3});
  x(0) = 65535; x(1) = 65535; x(2) = 2;
  auto [s, t] = smallints_host::mix(int8_t(-128), uint8_t(255), x);
  pydd::Array<uint32_t, 1> y = pydd::Array<uint32_t, 1>::zeros({1});
  y(0) = 4000000000u;
  pydd::Array<uint32_t, 1> z = smallints_host::wrap(y, 2u);
  std::printf("%d %llu %u\n", int(s), (unsigned long long)t, (unsigned)z(0));
}
"""


def test_host_cpp_header(tmp_path):
    from conftest import KERNELS, run_cpp_host, run_pyddc
    built = run_pyddc("--host=cpp", KERNELS / "smallints_host.pydd", "-o", tmp_path)
    assert built.returncode == 0, built.stderr
    header = (tmp_path / "smallints_host.h").read_text().replace("[[maybe_unused]] ", "")
    assert "std::tuple<int16_t, uint64_t> mix(int8_t a, uint8_t b, const pydd::Array<uint16_t, 1>& x" in header
    stdout = run_cpp_host(tmp_path, HOST_MAIN, tmp_path / "libsmallints_host.a")
    # int8 + uint8 is int16 (127); uint16's sum is uint64 (no wrap); uint32 wraps.
    assert stdout.split() == ["127", "131072", str(4000000000 * 2 % 2**32)]
