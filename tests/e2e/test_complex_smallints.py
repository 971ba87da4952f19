"""Complex numbers together with int8 ... uint64 (kernels/complex_smallints.pydd):
what neither feature branch tested alone. Compiled kernels against the same
kernels run as Python with NumPy (NEP 50 promotion)."""

import numpy as np
import pytest

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def check(got, exp, where="result"):
    if isinstance(exp, tuple):
        assert isinstance(got, tuple) and len(got) == len(exp), where
        for i, (g, e) in enumerate(zip(got, exp)):
            check(g, e, f"{where}[{i}]")
        return
    if isinstance(exp, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == exp.dtype and got.shape == exp.shape, \
            f"{where}: {got!r} vs {exp!r}"
        assert np.array_equal(got, exp), f"{where}: {got!r} vs {exp!r}"
        return
    if isinstance(exp, (complex, np.complexfloating)):
        assert type(got) is complex, f"{where}: {got!r} vs {exp!r}"
        assert got == complex(exp), f"{where}: {got!r} vs {exp!r}"
        return
    if isinstance(exp, (int, np.integer)) and not isinstance(exp, (bool, np.bool_)):
        assert type(got) is int and got == int(exp), f"{where}: {got!r} vs {exp!r}"
        return
    assert type(got) is float and got == float(exp), f"{where}: {got!r} vs {exp!r}"


def test_scalar_promotion(build, opt):
    comp, ref = build("complex_smallints", opt)
    args = (np.complex64(1.5 - 2j), np.int8(-128), np.uint8(255), np.int16(-300), np.uint16(65535),
            np.uint32(4000000000), np.uint64(2**64 - 1))
    exp = ref.promote_scalars(*args)
    assert [np.asarray(e).dtype.name for e in exp] == ["complex64"] * 4 + ["complex128"] * 4
    check(comp.promote_scalars(*args), exp)


def test_conversions(build, opt):
    comp, ref = build("complex_smallints", opt)
    for args in [(np.int8(-7), np.uint16(65535), np.uint64(2**63 + 5), 3 - 4j),
                 (np.int8(127), np.uint16(0), np.uint64(255), -0.5j)]:
        check(comp.convert_scalars(*args), ref.convert_scalars(*args))


def test_abs(build, opt):
    comp, ref = build("complex_smallints", opt)
    x = np.array([-128, -1, 0, 5, 127], np.int8)
    got = comp.abs_small(np.int8(-128), np.uint8(200), x)
    check(got, ref.abs_small(np.int8(-128), np.uint8(200), x))
    assert got[0] == -128 and got[2][0] == -128


def test_astype(build, opt):
    comp, ref = build("complex_smallints", opt)
    x = np.array([-1, 0, 255, 256, -32768, 32767], np.int16)
    z = np.array([1 + 2j, -3.5j, 0], np.complex64)
    b = np.array([0, 1, 200, 255], np.uint8)
    got = comp.astype_mix(x, z, b)
    check(got, ref.astype_mix(x, z, b))
    assert got[0].tolist() == [255, 0, 255, 0, 0, 255]


def test_sums_promote_as_numpy(build, opt):
    comp, ref = build("complex_smallints", opt)
    rng = np.random.default_rng(13)
    x = rng.integers(0, 256, 300).astype(np.uint8)
    y = rng.integers(-128, 128, 300).astype(np.int8)
    z = (rng.integers(-4, 5, 300) + 1j * rng.integers(-4, 5, 300)).astype(np.complex64)
    u = rng.integers(0, 2**32, 300, dtype=np.uint64).astype(np.uint32)
    exp = ref.sums(x, y, z, u)
    assert [np.asarray(e).dtype.name for e in exp] == ["uint64", "int64", "complex64", "float64", "complex64",
                                                       "complex128"]
    got = comp.sums(x, y, z, u)
    check(got[:4], exp[:4])
    # Sums of products: exact in these small integers.
    check(got[4:], exp[4:])


def test_arrays_mixed(build, opt):
    comp, ref = build("complex_smallints", opt)
    z = np.array([1 + 1j, -2.5 + 0.5j, 3j, 0], np.complex64)
    a = np.array([-128, 127, -1, 3], np.int8)
    u = np.array([0, 1, 4000000000, 7], np.uint32)
    q = np.array([0, 1, 2**53, 9], np.uint64)
    exp = ref.arrays_mixed(z, a, u, q)
    assert [e.dtype.name for e in exp] == ["complex64", "complex128", "complex128", "complex128"]
    check(comp.arrays_mixed(z, a, u, q), exp)


def test_store_small_into_complex(build, opt):
    comp, ref = build("complex_smallints", opt)
    z1 = np.array([9j, 9j, 1 + 1j], np.complex64)
    z2 = z1.copy()
    comp.store_small(z1, np.int8(-5), np.uint8(250))
    ref.store_small(z2, np.int8(-5), np.uint8(250))
    np.testing.assert_array_equal(z1, z2)
    assert z1.tolist() == [-5, 250, -5 - 5j]


def test_print(build, opt, capsys):
    comp, ref = build("complex_smallints", opt)
    args = (np.complex64(1.5 - 2j), np.int8(-3), np.uint64(2**64 - 1), np.array([0, 7, 255], np.uint8),
            np.array([1j, -2, 0.5 + 0.25j], np.complex64))
    comp.show(*args)
    got = capsys.readouterr().out
    ref.show(*args)
    assert got == capsys.readouterr().out
