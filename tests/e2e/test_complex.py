"""Complex numbers (kernels/complex.pydd): every kernel compiled at -O0 and
-O3 against the same file run as Python with NumPy, plus the Python
boundary (complex arrays without a copy, Python complex scalars in and out,
TypeErrors naming the parameter)."""

import cmath

import numpy as np
import pytest

from conftest import run_cpp_host, run_pyddc

# NumPy warns where it divides by zero or overflows (log(0), inf - inf); the
# values are compared.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

C64_RTOL = 2e-6
C128_RTOL = 1e-13


def crandom(rng, shape, dtype=np.complex128):
    return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)


def close(got, exp, rtol=C128_RTOL, where=""):
    """Same type and dtype; values equal within rtol of the magnitude (inf and
    nan in the same parts)."""
    if isinstance(exp, (list, tuple)):
        assert type(got) is type(exp) and len(got) == len(exp), where
        for i, (g, e) in enumerate(zip(got, exp)):
            close(g, e, rtol, f"{where}[{i}]")
        return
    if isinstance(exp, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == exp.dtype and got.shape == exp.shape, \
            f"{where}: got {got!r}, expected {exp!r}"
        if exp.dtype.kind in "biu":
            np.testing.assert_array_equal(got, exp, err_msg=where)
            return
        rtol = C64_RTOL if exp.dtype in (np.complex64, np.float32) else rtol
    elif isinstance(exp, (bool, np.bool_)):
        assert isinstance(got, bool) and got == exp, where
        return
    elif isinstance(exp, (complex, np.complexfloating)):
        assert isinstance(got, complex), f"{where}: got {type(got).__name__} {got!r}"
    elif isinstance(exp, (float, np.floating)):
        assert isinstance(got, float), f"{where}: got {type(got).__name__} {got!r}"
    g, e = np.asarray(got), np.asarray(exp)
    for part in (np.real, np.imag):
        gp, ep = part(g).astype(np.float64), part(e).astype(np.float64)
        assert np.array_equal(np.isnan(gp), np.isnan(ep)), f"{where}: got {got!r}, expected {exp!r}"
        fin = np.isfinite(ep)
        assert np.array_equal(gp[~fin & ~np.isnan(ep)], ep[~fin & ~np.isnan(ep)]), f"{where}: {got!r} vs {exp!r}"
        scale = np.abs(e).astype(np.float64) + 1e-300
        assert np.all(np.abs(gp - ep)[fin] <= rtol * scale[fin] + 1e-300), f"{where}: got {got!r}, expected {exp!r}"


SCALARS = [1 + 2j, -3.5 + 0.25j, 2j, -1.0 + 0j, 0.5 - 4j, complex(1e-3, -10)]


def test_literals_and_conversions(build, opt):
    comp, ref = build("complex", opt)
    got, exp = comp.literals(), ref.literals()
    close(got, exp)
    assert [repr(z) for z in got] == [repr(z) for z in exp]  # the signs of zero parts too
    for x, i, f in [(1.5, 3, np.float32(0.25)), (-2.0, -7, np.float32(1e-3))]:
        close(comp.to_complex(x, i, f), ref.to_complex(x, i, f))


def test_scalar_arithmetic(build, opt):
    comp, ref = build("complex", opt)
    for a in SCALARS:
        for b in SCALARS:
            close(comp.scalar_ops(a, b), ref.scalar_ops(a, b), where=f"{a}, {b}")
            close(comp.scalar_compare(a, b), ref.scalar_compare(a, b), where=f"{a}, {b}")
        close(comp.scalar_functions(a), ref.scalar_functions(a), rtol=1e-12, where=str(a))
        close(comp.scalar_truth(a), ref.scalar_truth(a))
    assert comp.scalar_truth(0j) == ref.scalar_truth(0j) == 0


def test_scalar_promotion(build, opt):
    comp, ref = build("complex", opt)
    args = (np.complex64(1.5 - 2j), np.float32(0.1), np.int32(7), np.float64(0.3))
    got, exp = comp.scalar_mixed(*args), ref.scalar_mixed(*args)
    # complex64 results are rounded to complex64 as NumPy's are
    assert [type(np.asarray(e)[()]) for e in exp] == [np.complex64, np.complex128, np.complex128, np.complex64,
                                                      np.complex64]
    for g, e in zip(got, exp):
        assert isinstance(g, complex)
        assert g == complex(e), (got, exp)


def test_scalar_division_by_zero_raises_as_python(build, opt):
    comp, ref = build("complex", opt)
    for a in [1 + 1j, 0j]:
        with pytest.raises(ZeroDivisionError):
            ref.scalar_div(a, 0j)
        with pytest.raises(ZeroDivisionError, match="complex division by zero"):
            comp.scalar_div(a, 0j)


def test_scalar_parts(build, opt):
    comp, ref = build("complex", opt)
    for z in SCALARS:
        args = (z, np.complex64(z), 2.5)
        got, exp = comp.scalar_parts(*args), ref.scalar_parts(*args)
        assert [type(g) for g in got] == [float, float, float, float, float, complex, float, float]
        assert got == tuple(complex(e) if isinstance(e, complex) else float(e) for e in exp)


def test_array_arithmetic(build, opt):
    comp, ref = build("complex", opt)
    rng = np.random.default_rng(1)
    a, b = crandom(rng, (3, 4)), crandom(rng, 4)
    b[1] = 0.5  # a real divisor
    close(comp.array_ops(a, b), ref.array_ops(a, b), rtol=1e-12)
    close(comp.array_compare(a[0], b), ref.array_compare(a[0], b))
    same = a[0].copy()
    same[::2] = b[::2]
    close(comp.array_compare(same, b), ref.array_compare(same, b))
    # strided and broadcast views
    close(comp.array_ops(a[:, ::2], b[::2]), ref.array_ops(a[:, ::2], b[::2]), rtol=1e-12)


def test_array_promotion(build, opt):
    comp, ref = build("complex", opt)
    rng = np.random.default_rng(2)
    n = 6
    args = (crandom(rng, n, np.complex64), rng.normal(size=n).astype(np.float32), rng.normal(size=n),
            rng.integers(-5, 5, n).astype(np.int32), rng.random(n) < 0.5)
    close(comp.array_promote(*args), ref.array_promote(*args))


def test_array_division_by_zero_as_numpy(build, opt):
    comp, ref = build("complex", opt)
    a = np.array([1 + 1j, 1, 0j, -2 + 0j, 1j, np.inf])
    b = np.zeros(6, complex)
    got = comp.array_div(a, b)
    with np.errstate(all="ignore"):
        exp = ref.array_div(a, b)
    np.testing.assert_array_equal(got, exp)
    assert np.array_equal(np.isnan(got), np.isnan(exp))


def test_functions(build, opt):
    comp, ref = build("complex", opt)
    rng = np.random.default_rng(3)
    z = np.concatenate([crandom(rng, 8), [0j, 1 + 0j, -1 + 0j, 1j, -2j, 0.5 + 1e-9j]])
    with np.errstate(all="ignore"):  # log(0)
        exp = ref.array_functions(z)
    close(comp.array_functions(z), exp, rtol=1e-12)
    z64 = crandom(rng, (3, 5), np.complex64)
    close(comp.array_functions64(z64), ref.array_functions64(z64))


def test_parts_and_abs(build, opt):
    comp, ref = build("complex", opt)
    rng = np.random.default_rng(4)
    z, x = crandom(rng, (3, 4), np.complex64), rng.normal(size=5)
    close(comp.array_parts(z, x), ref.array_parts(z, x))
    # the parts are views: their strides step over the other part
    re, im = comp.array_parts(z, x)[:2]
    assert re.strides == z.real.strides and im.strides == z.imag.strides


def test_stores_through_parts_change_the_array(build, opt):
    comp, ref = build("complex", opt)
    rng = np.random.default_rng(5)
    z1 = crandom(rng, (3, 3))
    z2 = z1.copy()
    assert comp.store_through_parts(z1) == pytest.approx(ref.store_through_parts(z2), rel=1e-14)
    np.testing.assert_array_equal(z1, z2)
    assert z1[0, 0].real == 7.0


def test_allocation_and_loops(build, opt):
    comp, ref = build("complex", opt)
    close(comp.new_arrays(4), ref.new_arrays(4))
    rng = np.random.default_rng(6)
    z = crandom(rng, 7)
    close(comp.element_loop(z), ref.element_loop(z))
    z1, x = crandom(rng, 5), rng.normal(size=5)
    z2 = z1.copy()
    close(comp.inplace(z1, x), ref.inplace(z2, x))
    np.testing.assert_allclose(z1, z2, rtol=1e-15)


def test_fused_elementwise(build, opt):
    comp, ref = build("complex", opt)
    rng = np.random.default_rng(7)
    a, b, c = crandom(rng, 50), crandom(rng, 50), rng.normal(size=50)
    close(comp.fused(a, b, c), ref.fused(a, b, c), rtol=1e-12)


def test_reductions(build, opt):
    comp, ref = build("complex", opt)
    rng = np.random.default_rng(8)
    for shape in [(3, 4), (40, 30), (0, 3)]:
        z, w = crandom(rng, shape), crandom(rng, shape[0] * 7, np.complex64)
        with np.errstate(all="ignore"):
            exp = ref.reductions(z, w)
        close(comp.reductions(z, w), exp, rtol=1e-12, where=str(shape))


def test_products(build, opt):
    comp, ref = build("complex", opt)
    rng = np.random.default_rng(9)
    a, b, v = crandom(rng, (4, 3)), crandom(rng, (3, 5)), crandom(rng, 3)
    s, t = crandom(rng, (5, 6), np.complex64), crandom(rng, 6, np.complex64)
    close(comp.products(a, b, v, s, t), ref.products(a, b, v, s, t), rtol=1e-12)
    # strided operands
    close(comp.products(a[::2, :], b[:, ::2], v, s[:, ::2], t[::2]),
          ref.products(a[::2, :], b[:, ::2], v, s[:, ::2], t[::2]), rtol=1e-12)


def test_print(build, opt, capsys):
    comp, ref = build("complex", opt)
    cases = [(1 + 2j, np.complex64(0.1 + 0.2j), np.array([1 + 2j, -3.5 - 1e-5j, 2j]),
              np.array([1 + 2j, 3 - 1j], np.complex64)),
             (complex(-0.0, 1), np.complex64(-1.5j), np.array([np.nan + 1j, 1 + np.inf * 1j, -np.inf]),
              np.array([], np.complex64)),
             (1e20 - 0j, np.complex64(3), np.arange(12) * (0.1 + 1j), (np.arange(3) * 1e-5j).astype(np.complex64))]
    for args in cases:
        comp.show(*args)
        got = capsys.readouterr().out
        ref.show(*args)
        assert got == capsys.readouterr().out


def test_mandelbrot(build, opt):
    comp, ref = build("complex", opt)
    xs, ys = np.linspace(-2.0, 0.6, 13), np.linspace(-1.2, 1.2, 9)
    got = comp.mandelbrot(xs, ys, 40)
    np.testing.assert_array_equal(got, ref.mandelbrot(xs, ys, 40))
    assert got.min() < 5 and got.max() == 40


def test_polyval_and_dft(build, opt):
    comp, ref = build("complex", opt)
    rng = np.random.default_rng(10)
    coeffs, x = crandom(rng, 6), crandom(rng, 9)
    close(comp.polyval(coeffs, x), ref.polyval(coeffs, x), rtol=1e-12)
    np.testing.assert_allclose(comp.polyval(coeffs, x), np.polyval(coeffs, x), rtol=1e-12)
    signal = rng.normal(size=16)
    close(comp.dft(signal), ref.dft(signal), rtol=1e-12)
    np.testing.assert_allclose(comp.dft(signal), np.fft.fft(signal), atol=1e-12)
    zs = crandom(rng, 16)
    close(comp.dft_matrix(zs), ref.dft_matrix(zs), rtol=1e-12)
    np.testing.assert_allclose(comp.dft_matrix(zs), np.fft.fft(zs), atol=1e-12)


# ---- the Python boundary ---------------------------------------------------------------------

def test_arrays_pass_without_copy(build):
    comp, _ = build("complex", 0)
    z = np.zeros(4, complex)
    x = np.ones(4)
    comp.inplace(z, x)
    np.testing.assert_array_equal(z, np.array([1, 1 + 2j, 1 + 2j, 1 + 2j]))
    # a view of a complex64 array's real part shares its memory
    w = np.zeros((2, 3), np.complex64)
    re = comp.array_parts(w, x)[0]
    assert np.shares_memory(re, w)


def test_scalars_in_and_out(build):
    comp, _ = build("complex", 0)
    assert comp.scalar_div(1 + 2j, 2) == (0.5 + 1j)  # an int where complex128 is expected
    assert comp.scalar_div(np.complex64(3j), 1.5) == 2j
    assert comp.scalar_div(np.float32(3.0), True) == 3 + 0j
    assert type(comp.scalar_div(1j, 1j)) is complex
    got = comp.scalar_mixed(np.complex64(1j), 1.0, 2, 3.0)
    assert all(type(g) is complex for g in got)


def test_wrong_dtype_is_a_type_error(build):
    comp, _ = build("complex", 0)
    with pytest.raises(TypeError, match="'b'"):
        comp.array_div(np.zeros(3, complex), np.zeros(3))
    with pytest.raises(TypeError, match="'z'"):
        comp.element_loop(np.zeros(3, np.complex64))
    with pytest.raises(TypeError, match="'x'"):
        comp.to_complex(1j, 1, np.float32(1))
    with pytest.raises(TypeError, match="'a'"):
        comp.scalar_div("1j", 1j)


def test_cmath_agrees_on_scalar_sqrt(build):
    comp, _ = build("complex", 0)
    for z in SCALARS:
        assert abs(comp.scalar_functions(z)[0] - cmath.sqrt(z)) <= 1e-15 * abs(z) + 1e-300


# ---- host=cpp ----------------------------------------------------------------------------------

CPP_KERNEL = """from pydd import *

def scale(z: Array(complex128, 1), a: complex64) -> complex128:
    z *= a
    return sum(z)
"""

CPP_MAIN = r"""#include "ck.h"
#include <cstdio>
int main() {
  std::complex<double> buf[3] = {{1, 2}, {3, -1}, {0, 1}};
  auto z = pydd::Array<std::complex<double>, 1>::borrow(buf, {3});
  std::complex<double> s = ck::scale(z, std::complex<float>(0, 1));
  std::printf("%g %g %g %g\n", s.real(), s.imag(), buf[0].real(), buf[0].imag());
  return 0;
}
"""


def test_host_cpp_uses_std_complex(tmp_path):
    (tmp_path / "ck.pydd").write_text(CPP_KERNEL)
    built = run_pyddc("--host=cpp", tmp_path / "ck.pydd", "-o", tmp_path)
    assert built.returncode == 0, built.stderr
    header = (tmp_path / "ck.h").read_text().replace("[[maybe_unused]] ", "")
    assert "std::complex<double> scale(const pydd::Array<std::complex<double>, 1>& z, std::complex<float> a);" in header
    stdout = run_cpp_host(tmp_path, CPP_MAIN, tmp_path / "libck.a")
    # (1+2j, 3-1j, 1j) * 1j = (-2+1j, 1+3j, -1): the sum and the first element, changed in place
    assert stdout.split() == ["-2", "4", "-2", "1"]


def test_parallel_reductions(build, opt):
    comp, ref = build("complex", opt)
    rng = np.random.default_rng(11)
    z = crandom(rng, 20000)
    s, p = comp.parallel_sums(z)
    s_ref, p_ref = ref.parallel_sums(z)
    assert abs(s - s_ref) <= 1e-12 * np.abs(z * z).sum()
    assert abs(p - p_ref) <= 1e-3  # a product of 20000 complex64 numbers of modulus 1
