"""The optimizer's passes against the Python run (kernels/optimizer.pydd), at
every -O level and, under the e2e-passes ctest entry, with each pass
disabled: fused loops and their fallbacks (size-1 broadcasting, shapes that
do not broadcast, stores overlapping their operands), hoisting out of loops
that write an alias, run zero times or exit early, and reused allocations."""

import numpy as np
import pytest

from conftest import OptLevel
from same import same

RNG = np.random.default_rng(10)


def normal(*shape):
    return RNG.normal(size=shape)


def test_fused_expressions(build, opt):
    comp, ref = build("optimizer", opt)
    for n in (0, 1, 7, 1000):
        a, b, c = normal(n), normal(n), normal(n)
        same(comp.fma, ref.fma, a, b, c)
    same(comp.fma, ref.fma, normal(5), normal(1), normal(5))  # size-1 broadcasting: the fallback
    same(comp.fma, ref.fma, normal(5), normal(4), normal(5))  # ValueError naming mul
    same(comp.fma, ref.fma, normal(5), normal(5), normal(3))  # ValueError naming add
    same(comp.fma, ref.fma, normal(9)[::2], normal(5), normal(10)[::-2])  # strided operands
    for X, mu in ((normal(4, 6), normal(6)), (normal(4, 6), normal(1)), (normal(4, 1), normal(6)),
                  (normal(4, 6).T.copy().T, normal(6)), (normal(3, 5), normal(4))):
        same(comp.center_scale, ref.center_scale, X, mu, 0.5)
    ints = RNG.integers(-100, 100, size=9)
    same(comp.int_mix, ref.int_mix, ints, RNG.integers(-100, 100, size=9))
    same(comp.f32_mix, ref.f32_mix, normal(8).astype(np.float32), normal(8).astype(np.float32))
    same(comp.rebind, ref.rebind, normal(6))
    same(comp.reduce_tree, ref.reduce_tree, normal(6), normal(6))
    same(comp.reduce_tree, ref.reduce_tree, normal(6), normal(5))


def test_folded_reductions(build, opt):
    comp, ref = build("optimizer", opt)

    def ints(*shape):
        return RNG.integers(-2**31, 2**31 - 1, size=shape, dtype=np.int32)

    for rows, cols in ((0, 3), (1, 1), (4, 6), (50, 33)):
        X, mu = normal(rows, cols), normal(cols)
        same(comp.folded, ref.folded, X, mu, ints(cols), ints(cols))
        same(comp.folded, ref.folded, X * 10, normal(1), ints(cols), ints(1))  # size-1: the general loop
    same(comp.folded, ref.folded, normal(3, 4), normal(5), ints(4), ints(4))  # ValueError naming sub
    same(comp.folded, ref.folded, normal(3, 4), normal(4), ints(4), ints(3))  # ValueError naming mul


def test_row_folds(build, opt):
    """A sum along the last axis of an element-wise tree, one row at a time:
    bit for bit NumPy's, with rows longer than a 8192-element window too."""
    comp, ref = build("optimizer", opt)
    special = normal(4, 9)
    special[1, 2], special[2, 3], special[3, :] = np.nan, np.inf, -0.0
    for X, y in ((normal(0, 3), normal(3)), (normal(3, 0), normal(0)), (normal(1, 1), normal(1)),
                 (normal(30, 20000), normal(20000)), (special, normal(9)), (normal(5, 6).T, normal(5)),
                 (normal(4, 6), normal(1)), (normal(4, 6), normal(5))):  # size 1: the general loop; 5: ValueError
        same(comp.row_distances, ref.row_distances, X, y)
    for X, w in ((normal(7, 3), normal(7, 3)), (normal(2, 9000), normal(2, 9000)), (normal(7, 3), normal(1, 3)),
                 (normal(7, 3), normal(7, 1)), (normal(7, 3), normal(6, 3)), (normal(7, 3)[::2], normal(4, 3))):
        same(comp.row_sums, ref.row_sums, X, w)
        same(comp.row_sums_kept, ref.row_sums_kept, X, w)

    def ints(*shape):
        return RNG.integers(-2**31, 2**31 - 1, size=shape, dtype=np.int32)

    same(comp.row_sums_int, ref.row_sums_int, ints(6, 50), ints(6, 50))
    same(comp.row_sums_int, ref.row_sums_int, ints(6, 50), ints(1, 50))
    a = normal(5, 10000).astype(np.float32)
    same(comp.row_sums_f32, ref.row_sums_f32, a, normal(10000).astype(np.float32))


def test_forward_substitution(build, opt):
    """Arrays that only the next statement reads, computed inside it."""
    comp, ref = build("optimizer", opt)
    vecs = normal(6, 5)
    for X, k in ((normal(4, 5), 2), (normal(0, 5), 0), (normal(4, 5), 6), (normal(4, 1), -1), (normal(4, 3), 1)):
        same(comp.subst_distances, ref.subst_distances, X, vecs, k)  # 6: IndexError; (4, 3): ValueError
    for n in (0, 1, 4):
        same(comp.subst_in_loop, ref.subst_in_loop, normal(7), n)
    xs = [1, 2, 3]
    for a, b, k in ((normal(3), normal(3), 1), (normal(3), normal(3), 5), (normal(3), normal(2), 5)):
        same(comp.subst_error_order, ref.subst_error_order, a, b, xs, k)  # ValueError before IndexError
    for a, b, c in ((normal(3), normal(3), normal(3)), (normal(3), normal(2), normal(4)), (normal(3), normal(3), normal(4))):
        same(comp.subst_first_error, ref.subst_first_error, a, b, c)


def test_folded_truth_values(build, opt):
    comp, ref = build("optimizer", opt)
    zeros, ones = np.zeros(1000), np.ones(1000)
    one_nan, one_hit = zeros.copy(), zeros.copy()
    one_nan[999], one_hit[500] = np.nan, -0.5
    for a, b in ((zeros, ones), (ones, ones), (one_nan, ones), (one_hit, ones), (np.zeros(0), np.zeros(0)),
                 (ones, one_hit), (normal(7), normal(7)), (ones, normal(1)), (ones, normal(3))):
        same(comp.any_returned, ref.any_returned, a, b)
        same(comp.all_returned, ref.all_returned, a, b)


def test_fused_where(build, opt):
    comp, ref = build("optimizer", opt)
    for z, t in ((normal(50), np.abs(normal(50))), (normal(0), normal(0)), (normal(6), normal(1)),
                 (normal(6), normal(4)), (normal(9)[::2], np.abs(normal(10))[::-2])):
        same(comp.soft_threshold, ref.soft_threshold, z, t)
    for z, t in ((normal(400, 300), np.abs(normal(300))), (normal(4, 5), normal(4)), (normal(4, 5).T, normal(4))):
        same(comp.soft_threshold_2d, ref.soft_threshold_2d, z, t)
    c = np.array([True, False, True])
    same(comp.where_raises, ref.where_raises, c, np.array([2, 3, 4]), np.array([2, 1, 3]))
    same(comp.where_raises, ref.where_raises, c, np.array([2, 3, 4]), np.array([2, -1, 3]))  # ValueError
    same(comp.where_raises, ref.where_raises, c, np.array([2, 3]), np.array([2, 1, 3]))  # ValueError: shapes
    for flag, x in ((True, 3), (False, 3), (False, 0), (True, 0)):  # 7 // 0 raises either way
        same(comp.where_scalar, ref.where_scalar, flag, x)


def test_hoisted_fresh_operand(build, opt):
    comp, ref = build("optimizer", opt)
    for n in (0, 1, 5, 300):
        same(comp.fresh_rows, ref.fresh_rows, n)


def test_fused_stores(build, opt):
    comp, ref = build("optimizer", opt)
    for i in (0, 2, -1, 3, -4):  # 3 and -4 are out of range: IndexError
        same(comp.update_row, ref.update_row, normal(3, 4), normal(4), i, 0.1)
    same(comp.update_row, ref.update_row, normal(3, 4), normal(1), 1, 0.1)
    same(comp.update_row, ref.update_row, normal(3, 4), normal(3), 1, 0.1)
    x = normal(6)
    same(comp.accumulate, ref.accumulate, x, normal(6))
    # x += y * 2.0 where y is x itself, or a view overlapping it.
    for make in (lambda v: (v, v), lambda v: (v[1:], v[:-1]), lambda v: (v[::-1], v)):
        c_arr, r_arr = normal(7), None
        r_arr = c_arr.copy()
        comp.accumulate(*make(c_arr))
        ref.accumulate(*make(r_arr))
        np.testing.assert_array_equal(c_arr, r_arr)
    same(comp.shifted, ref.shifted, normal(6))
    same(comp.rows_from_rows, ref.rows_from_rows, normal(3, 4))


def test_hoisting(build, opt):
    comp, ref = build("optimizer", opt)
    X, w = normal(4, 5), normal(5)
    for n in (0, 1, 6):
        same(comp.invariant_sum, ref.invariant_sum, X, w, n, rtol=1e-12)
        same(comp.written_in_loop, ref.written_in_loop, normal(3, 3), n, rtol=1e-12)
        same(comp.early_exit, ref.early_exit, normal(4), n, 2)
    same(comp.invariant_sum, ref.invariant_sum, X, normal(4), 0)  # no iteration: no ValueError
    same(comp.invariant_sum, ref.invariant_sum, X, normal(4), 3)
    same(comp.early_exit, ref.early_exit, np.zeros(0), 5, 0)  # max of empty after a break: none
    same(comp.early_exit, ref.early_exit, np.zeros(0), 5, 1)  # ValueError
    a = normal(5)
    for n in (0, 3):
        c_a, r_a = a.copy(), a.copy()
        assert comp.alias_written(c_a, c_a, n) == ref.alias_written(r_a, r_a, n)
        np.testing.assert_array_equal(c_a, r_a)
    A = (RNG.random((6, 6)) < 0.4).astype(np.int64)
    same(comp.rows_loop, ref.rows_loop, normal(6, 3), A, rtol=1e-12)


def test_reused_allocations(build, opt):
    comp, ref = build("optimizer", opt)
    for reps in (0, 1, 4):
        same(comp.per_iteration, ref.per_iteration, normal(5), reps)
        same(comp.kept, ref.kept, 3, reps)
    same(comp.kept, ref.kept, -1, 2)  # negative dimensions: ValueError


def test_optimized_ir_is_pydd_that_compiles_and_agrees(build, tmp_path):
    """--emit=ir after every pass prints pydd source (fused loops, hoisted
    temporaries, refills, run-time tests) that compiles and computes what
    the original does."""
    import pydd
    from conftest import KERNELS, run_pyddc

    proc = run_pyddc("--emit=ir", "-O3", KERNELS / "optimizer.pydd")
    assert proc.returncode == 0, proc.stderr
    assert "for i__0 in range(0, n__0, 1):" in proc.stdout and "fill(acc, 0)" in proc.stdout
    src = tmp_path / "optimizer_ir.pydd"
    src.write_text(proc.stdout)
    printed = pydd.compile(src, out_dir=tmp_path, opt=0)
    _, ref = build("optimizer", 0)

    def build_printed(name, opt):
        return printed, ref

    for check in (test_fused_expressions, test_fused_stores, test_hoisting, test_reused_allocations):
        check(build_printed, 0)


def test_filtered_where_loops(build, opt):
    """Loops over where(c) that test c's elements instead (opt/FilterLoops)."""
    comp, ref = build("optimizer", opt)
    A = (RNG.random((9, 9)) < 0.3).astype(np.int32)
    A = np.triu(A, 1) + np.triu(A, 1).T
    F = RNG.random((9, 4))
    for i in (0, 4, 8, -1, -9, 9, -10):  # 9 and -10: IndexError from A[i]
        same(comp.filter_neighbours, ref.filter_neighbours, A, F, i)
    same(comp.filter_neighbours, ref.filter_neighbours, np.zeros((3, 3), np.int32), F[:3], 1)
    for t in (-9.0, 0.0, 0.5, 9.0):
        x = normal(12)
        same(comp.filter_body_writes, ref.filter_body_writes, x, t)
        same(comp.filter_written_between, ref.filter_written_between, normal(12), t)
    for t, stop in ((0.0, -1), (-0.5, 6), (0.2, 4), (9.0, 0)):
        same(comp.filter_control, ref.filter_control, normal(15), t, stop)
    for x in (np.array([0.0, np.nan, -0.0, 2.0, 0.0]), np.zeros(4), np.zeros(0), normal(6)):
        same(comp.filter_float, ref.filter_float, x)
    X = normal(5, 20)
    for r in (0, 3, -5, 5):  # 5: IndexError
        same(comp.filter_band, ref.filter_band, X, r, -0.5, 0.5)
    same(comp.filter_band, ref.filter_band, X[:, ::3], 2, -1.0, 0.2)  # a strided row
    same(comp.filter_int_power, ref.filter_int_power, np.array([0, 1, 2]), np.zeros(3))


def test_filtered_loops_across_chunks(build, opt):
    """Filtered loops test a chunk of 1024 indices before running the bodies
    of the taken ones (For::testsFirst): lengths around the chunk size, masks
    from empty to full, taken indices at the chunks' edges."""
    comp, ref = build("optimizer", opt)
    for n in (1023, 1024, 1025, 2048, 3001):
        for density in (0.0, 0.09, 0.5, 0.91, 1.0):
            x = np.where(RNG.random(n) < density, RNG.random(n) + 1.0, 0.0)
            x[[k for k in (1023, 1024, 2047) if k < n]] = 3.0
            same(comp.filter_float, ref.filter_float, x)
            same(comp.filter_band, ref.filter_band, x[None, :], 0, 0.5, 2.5)
            for last in (-1, 1024, n - 1):
                same(comp.filter_skip, ref.filter_skip, x, 0.5, last)
    # A share of taken indices that changes from chunk to chunk, so that
    # chunks go from the branching form to the mixed one and back (a chunk
    # that took nearly all its indices is followed by a branching one), and
    # the same values through a strided view (the tests' strided copy).
    shares = (1.0, 0.09, 1.0, 1.0, 0.0, 0.5, 0.97, 0.0, 1.0)
    x = np.concatenate([np.where(RNG.random(1024) < s, RNG.random(1024) + 1.0, 0.0) for s in shares])
    for v in (x, np.repeat(x, 2)[::2]):
        same(comp.filter_float, ref.filter_float, v)
        same(comp.filter_band, ref.filter_band, v[None, :], 0, 0.5, 2.5)
        same(comp.filter_skip, ref.filter_skip, v, 0.5, 4 * 1024 + 7)
    A = (RNG.random((1500, 1500)) < 0.09).astype(np.int32)
    F = RNG.random((1500, 4))
    for i in (0, 1024, 1499):
        same(comp.filter_neighbours, ref.filter_neighbours, A, F, i)
    # Bodies that run a loop (every chunk is mixed): a row whose share of
    # ones changes from chunk to chunk, rows short enough for promoted
    # accumulators and too long for them.
    A = np.stack([(x != 0).astype(np.int32), (x == 0).astype(np.int32)])
    for width in (4, 13):
        F = RNG.random((len(x), width))
        for i in (0, 1):
            same(comp.filter_neighbours, ref.filter_neighbours, A, F, i)
    # 2 ** -2 raises ValueError before the loop writes anything (same does
    # not compare arguments after an exception).
    _, args = same(comp.filter_int_power, ref.filter_int_power, np.array([0, 1, -2]), np.zeros(3))
    assert not args[1].any(), args[1]


def test_windowed_float_sums(build, opt):
    """Float sums of trees equal NumPy's bit for bit: windows of 8192
    elements in C order, rows straddling windows, the last window partial."""
    comp, ref = build("optimizer", opt)
    for n in (0, 1, 7, 8191, 8192, 8193, 3 * 8192 + 5, 100003):
        a, b = normal(n), normal(n)
        same(comp.window_dot, ref.window_dot, a, b)
    same(comp.window_dot, ref.window_dot, normal(20000)[::2], normal(10000))  # strided: the general loop
    same(comp.window_dot, ref.window_dot, normal(5), normal(4))  # ValueError
    for shape in ((0, 4), (4, 0), (1, 1), (500, 500), (3, 8192), (7, 9001), (9001, 7), (2, 3)):
        same(comp.window_sq_dev, ref.window_sq_dev, normal(*shape), normal(shape[1]))
    # A transposed operand: NumPy's result is F-ordered and summed in that
    # memory order, pydd's C-ordered (at -O0 too), so the last bits differ.
    same(comp.window_sq_dev, ref.window_sq_dev, normal(300, 40).T, normal(300), rtol=1e-12)
    same(comp.window_sq_dev, ref.window_sq_dev, normal(30, 40), normal(1))  # size-1 broadcasting
    for shape in ((2, 3, 4), (5, 100, 70), (0, 2, 2), (1, 1, 9000), (3, 4097, 2)):
        same(comp.window_cube, ref.window_cube, normal(*shape).astype(np.float32), np.float32(0.5))


def test_short_dot_products(build, opt):
    """a @ b of float64 vectors: computed inline below 16 elements, by BLAS
    from 16 on or when strided; NumPy's result (the same OpenBLAS) bit for
    bit on each side of the boundary."""
    comp, ref = build("optimizer", opt)
    for n in (0, 1, 2, 3, 4, 7, 15, 16, 17, 40):
        for _ in range(50):
            a, b = normal(n), normal(n)
            assert comp.vector_dot(a, b) == np.dot(a, b), n
    a, b = normal(12), normal(6)
    assert comp.vector_dot(a[::2], b) == np.dot(a[::2], b)
    same(comp.vector_dot, ref.vector_dot, normal(4), normal(5))  # ValueError


def test_gram_matrix(build, opt):
    """X @ X.T: the triangle syrk computes, mirrored tile by tile onto the
    other one (sizes around and across the library's 32-row tiles), is
    symmetric and NumPy's bit for bit where NumPy's OpenBLAS runs the syrk
    on one thread. pydd always does below 2^23 multiply-adds; a threaded
    syrk rounds some elements differently (as NumPy's own result differs
    between 1 and 2 threads), so (500, 4) agrees within rounding."""
    comp, _ = build("optimizer", opt)
    for shape in ((1, 4), (2, 1), (31, 3), (32, 4), (33, 5), (70, 2), (256, 4), (500, 4)):
        X = normal(*shape)
        got = comp.gram(X)
        assert np.array_equal(got, got.T), shape
        if shape[0] <= 256:
            assert np.array_equal(got, X @ X.T), shape
        else:
            np.testing.assert_allclose(got, X @ X.T, rtol=1e-14, atol=1e-14)


def test_merged_loops(build, opt):
    """Runs of fused loops merged into one, with arrays made scalars: the
    Python run's results, for empty, strided and (2-D, threaded) large
    operands."""
    comp, ref = build("optimizer", opt)
    for n in (0, 1, 5, 1000):
        t = RNG.integers(0, 50, size=n)
        same(comp.merged_chain, ref.merged_chain, t, 60)
        same(comp.merged_chain, ref.merged_chain, t[::-2], 60)
    for shape in ((0, 3), (3, 4), (300, 301)):
        T = RNG.integers(-5, 50, size=shape)
        same(comp.merged_grid, ref.merged_grid, T, 60)
        same(comp.merged_grid, ref.merged_grid, T.T, 61)
    same(comp.merged_kept, ref.merged_kept, normal(7))
    same(comp.merged_kept, ref.merged_kept, normal(7)[::3])
    for reps in (0, 1, 3):
        same(comp.merged_in_loop, ref.merged_in_loop, normal(9), reps)
    same(comp.merged_rebinds, ref.merged_rebinds, normal(50))


def same_bits(got, exp, rtol=0.0):
    """Equal (within rtol), with the same sign on every number (zeros too)
    and NaN at the same places."""
    got, exp = np.asarray(got), np.asarray(exp)
    assert np.allclose(got, exp, rtol=rtol, atol=0, equal_nan=True), f"got {got!r}\nexpected {exp!r}"
    numbers = ~np.isnan(exp)
    assert np.array_equal(np.signbit(got[numbers]), np.signbit(exp[numbers])), f"signs: {got!r} vs {exp!r}"


def test_zero_products(build, opt, _builds):
    """A product whose costly factor is skipped where the mask is zero: the
    bits of the build without the pass, zero signs and NaNs included, on
    random data and at the edges of the range where the factor is finite
    (and beyond them); and NumPy's values on the random data. (NumPy's own
    exp and log round differently from glibc's, by an ulp, and `1 - exp(-s)`
    cancels: at s near 7 that ulp is 1e-13 of the result, and more for
    larger s. The unguarded build is the exact reference.)"""
    comp, ref = build("optimizer", opt)
    plain = _builds.compiled("optimizer", OptLevel("3-zeromul"))

    def same_as_references(kernel, args, random):
        got = getattr(comp, kernel)(*args)
        for expect, rtol in ((plain, 0.0), (ref, 1e-6)) if random else ((plain, 0.0),):
            want = getattr(expect, kernel)(*args)
            for g, w in zip(got, want) if isinstance(got, tuple) else ((got, want),):
                same_bits(g, w, rtol)

    edges = np.array([0.0, -0.0, 1e-300, 1e-17, 1e-16, 4.99e-16, 5e-16, 6e-16, 1e-10, 0.5, 1.0, 30.0, 37.4,
                      37.43, 37.44, 40.0, 1e300, np.inf, -np.inf, np.nan, -1e-300, -1.0])
    x_edges = np.concatenate([edges, -edges, [-373.0, -372.0, 355.0, 356.0, -1.0 + 1e-16, -0.999999, 1e308]])
    with np.errstate(all="ignore"):
        for S, random in ((RNG.exponential(2.0, size=(3, 300)), True), (np.tile(edges, (3, 1)), False)):
            A = RNG.choice(np.array([0, 0, 0, 1, 2, -1], dtype=np.int32), size=S.shape)
            A[0] = 0
            for args in ((A, S), (A[:, ::-2], S[:, ::-2]), (A[:0], S[:0])):
                same_as_references("zero_products", args, random)
        for shape in ((4, 3000), (2, 1024), (3, 1025), (1, 2049)):  # chunks of 1024, windows of 8192
            for S, random in ((RNG.exponential(2.0, size=shape), True), (np.resize(edges, shape), False)):
                for mask in ((0, 0, 0, 0, 0, 0, 0, 0, 0, 1), (0, 1), (1, 2, -1), (0,)):
                    A = RNG.choice(np.array(mask, dtype=np.int32), size=shape)
                    same_as_references("zero_products_sum", (A, S), random)
            # Rows whose share of ones changes from chunk to chunk (all ones
            # then few: a branching chunk after a mixed one, and back).
            A = np.concatenate([(RNG.random((shape[0], 1024)) < share).astype(np.int32)
                                for share in (1.0, 0.09, 1.0, 0.0, 0.5, 1.0)], axis=1)
            same_as_references("zero_products_sum", (A, RNG.exponential(2.0, size=A.shape)), True)
        for x, random in ((RNG.normal(0, 200, size=300), True), (x_edges, False)):
            m = RNG.choice(np.array([0.0, -0.0, 1.0, np.nan, np.inf]), size=x.size)
            same_as_references("zero_products_float", (m, x), random)
        for x, random in ((RNG.exponential(size=300), True), (x_edges, False)):
            a = RNG.choice(np.array([0, 0, 1, 3]), size=x.size)
            same_as_references("zero_products_loop", (a, x), random)


def test_proven_fusion_tests(build, opt):
    """Fused stores without the tests that analyses prove (ValueRanges,
    PrivateArrays) and with the ones they do not: a destination read
    reversed gets NumPy's copy semantics, a negative row index wraps, one
    out of range raises IndexError."""
    comp, ref = build("optimizer", opt)
    for rows, cols in ((7, 5), (1, 1), (4, 0)):
        G = RNG.normal(size=(rows, cols))
        for i in (0, rows - 1, -1, -rows):
            np.testing.assert_allclose(comp.proven_rows(G, i), ref.proven_rows(G, i), rtol=1e-13, atol=1e-13)
        for i in (rows, -rows - 1):
            with pytest.raises(IndexError):
                comp.proven_rows(G, i)


def test_short_dots(build, opt):
    """Dot products of rows: NumPy's result bit for bit (OpenBLAS's ddot,
    which the loop reproduces below 16 elements), on contiguous and strided
    rows, short and long, with negative indices; IndexError and ValueError
    as NumPy raises them."""
    comp, ref = build("optimizer", opt)
    for cols in (0, 1, 4, 15, 16, 40):
        G = RNG.normal(size=(9, cols))
        for F in (G, G[:, ::2], G[::-1]):
            for i in (0, 3, -1, -F.shape[0]):
                assert np.array_equal(comp.row_dots(F, i), ref.row_dots(F, i))
            with pytest.raises(IndexError):
                comp.row_dots(F, F.shape[0])
        x, y = RNG.normal(size=cols), RNG.normal(size=cols)
        assert comp.dot_of_vectors(x, y) == ref.dot_of_vectors(x, y) == x @ y
        with pytest.raises(ValueError):
            comp.dot_of_vectors(x, RNG.normal(size=cols + 1))


def test_promoted_accumulators(build, opt, _builds):
    """Short accumulators kept in registers: NumPy's results, and the bits of
    the build without the pass, for lengths on both sides of the register
    count (8), empty ones, the broadcasting path that spills them, and an
    early exit."""
    comp, ref = build("optimizer", opt)
    plain = _builds.compiled("optimizer", OptLevel("3-promote"))
    for C in (0, 1, 3, 4, 8, 9, 20):
        for cols in {C, 1}:
            G = RNG.normal(size=(50, cols))
            keep = RNG.integers(0, 2, size=50)
            got = comp.accumulate_rows(G, keep, C)
            assert np.array_equal(got, plain.accumulate_rows(G, keep, C))
            np.testing.assert_allclose(got, ref.accumulate_rows(G, keep, C), rtol=1e-13, atol=1e-13)
        if C:
            with pytest.raises(ValueError):
                comp.accumulate_rows(RNG.normal(size=(5, C + 1)), np.ones(5, dtype=np.int64), C)
        X = RNG.normal(size=(60, C))
        labels = RNG.integers(0, 3, size=60)
        labels[45] = -1
        for k in (0, 2, 5):
            got = comp.accumulate_columns(X, labels, k)
            assert np.array_equal(got, plain.accumulate_columns(X, labels, k))
            np.testing.assert_allclose(got, ref.accumulate_columns(X, labels, k), rtol=1e-13, atol=1e-13)


def test_overwritten_zeros(build, opt):
    """`overwrite`: an array of zeros that a loop writes whole, allocated
    empty, in a loop too (with `alloc` hoisting it); and loops that leave an
    element unwritten (a `continue`, a range from 1, a list popped between
    the allocation and the loop), whose zeros stay. The
    buffers are big enough (2^15 elements) to come back from the runtime's
    buffer cache holding another array's values."""
    comp, ref = build("optimizer", opt)
    for n in (0, 1, 5, 1 << 15):
        x = normal(n)
        same(comp.overwritten, ref.overwritten, x, 3)
        same(comp.overwritten, ref.overwritten, x, 0)
        for skip in (0, n // 2, n + 1):
            same(comp.partly_overwritten, ref.partly_overwritten, x, skip)
        if n:
            same(comp.shrunk_list, ref.shrunk_list, list(x))


def test_division_checks_after_the_loop(build, opt):
    """Loops whose only error is a float division by zero test the divisors
    as they go and raise after the loop (divcheck): Python's error where a
    divisor is zero, its values where none is."""
    comp, ref = build("optimizer", opt)
    for n, d in ((0, 4.0), (1, 1.0), (10, 0.5), (10, 4.0), (10, 100.0), (1000, 2.0), (1000, 961.0), (1000, -0.0)):
        same(comp.inverse_squares, ref.inverse_squares, n, d)
    for n, z, stop in ((10, 5, 100.0), (10, 5, -10.0), (10, 0, 0.0), (10, 20, 0.0), (0, 0, 0.0), (100, 99, 1e9)):
        same(comp.inverse_until, ref.inverse_until, n, z, stop)
    for n, z in ((0, 0), (10, 0), (10, 5), (10, 9), (100, 50)):
        same(comp.inverse_where_nonzero, ref.inverse_where_nonzero, n, z)
    # float32: NumPy's scalars give inf where pydd's `/` raises, as Python's.
    for n, d in ((10, 0.5), (1000, 2.0)):
        same(comp.inverse_squares_f32, ref.inverse_squares_f32, n, np.float32(d))
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        comp.inverse_squares_f32(1000, np.float32(961.0))
    assert comp.inverse_squares(10, 0.5) == ref.inverse_squares(10, 0.5)  # still usable after the error


def test_scan_loops(build, opt):
    """While loops that step an index through an array (scan) run with no
    Ctrl-C check and, from a non-negative index, without wrapping it:
    Python's results from every start, negative ones (which wrap) included,
    and with the index running off the low end into a[-1]."""
    comp, ref = build("optimizer", opt)
    a = np.array([0.5, 0.1, 0.9, 0.3, 0.7, 0.2, 0.8])
    for i, j, pivot in ((0, 6, 0.6), (-7, 6, 0.6), (-3, -1, 0.75), (2, 4, 0.15), (0, 6, 0.9), (5, 3, 0.3)):
        same(comp.partition_scans, ref.partition_scans, a, i, j, pivot)
    # j runs from 3 down past 0 to -1, where a[-1] = 0.05 stops it.
    b = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.05])
    assert comp.partition_scans(b, 0, 3, 0.5) == ref.partition_scans(b, 0, 3, 0.5) == (0, -1)
    A = np.arange(24.0).reshape(3, 8) - 10.0
    for r, start, x, most in ((0, 0, 100.0, 100), (1, 1, -4.0, 100), (2, -8, 100.0, 3), (0, -3, 0.0, 100), (2, 0, -100.0, 1)):
        same(comp.negate_below, ref.negate_below, A, r, start, x, most)
    rng = np.random.default_rng(3)
    for n in (1, 2, 10, 1000):
        for data in (rng.random(n), np.repeat(rng.random(3), n), np.arange(n, 0, -1.0)):
            same(comp.quicksort, ref.quicksort, data, 0, n - 1)
        same(comp.quicksort, ref.quicksort, rng.random(n), -n, -1)  # negative bounds wrap


def test_nonzero_rows(build, opt):
    """Sums into out[r] over S.nonzeros() and over S.row(r) run row by row
    (nzrows): Python's results bit for bit, on int32 and int64 indices,
    empty and unsorted rows and duplicate entries, and with out shorter
    than S's rows (the loop as written)."""
    import scipy.sparse as sp
    comp, ref = build("optimizer", opt)
    rng = np.random.default_rng(12)
    for m, n, density in ((40, 30, 0.2), (200, 150, 0.02), (5, 5, 0.0), (1, 300, 0.5)):
        S = sp.random(m, n, density=density, format="csr", random_state=int(rng.integers(1 << 30)))
        S.data = rng.normal(size=S.nnz) * 10.0 ** rng.integers(-4, 5, S.nnz)
        S.data[::7] = -0.0
        S.indices = S.indices.astype(np.int32)
        x = rng.normal(size=n)
        wide = S.copy()
        wide.indices, wide.indptr = S.indices.astype(np.int64), S.indptr.astype(np.int64)
        # unsorted rows with duplicate entries: each row's entries twice, shuffled
        data, cols = [], []
        for i in range(m):
            lo, hi = S.indptr[i], S.indptr[i + 1]
            order = rng.permutation(2 * (hi - lo))
            data.append(np.concatenate([S.data[lo:hi], S.data[lo:hi] * 0.5])[order])
            cols.append(np.concatenate([S.indices[lo:hi], S.indices[lo:hi]])[order])
        dup = sp.csr_matrix((np.concatenate(data), np.concatenate(cols).astype(np.int32), 2 * S.indptr), shape=(m, n))
        assert dup.nnz == 2 * S.nnz
        for M in (S, wide):
            same(comp.row_sums_into, ref.row_sums_into, M, x)
            same(comp.nonzero_row_sums, ref.nonzero_row_sums, M, x, m)
            same(comp.nonzero_row_sums, ref.nonzero_row_sums, M, x, m + 3)
            I = sp.csr_matrix((np.round(M.data * 100).astype(np.int64), M.indices, M.indptr), shape=M.shape)
            same(comp.nonzero_row_ints, ref.nonzero_row_ints, I, m)
            same(comp.nonzero_row_squares_f32, ref.nonzero_row_squares_f32, M.astype(np.float32), m)
        same(comp.nonzero_row_sums, ref.nonzero_row_sums, dup, x, m)
        same(comp.row_sums_into, ref.row_sums_into, dup, x)
        # out shorter than S's rows: the loop as written (the last rows are empty)
        short = sp.vstack([S, sp.csr_matrix((3, n))]).tocsr()
        same(comp.nonzero_row_sums, ref.nonzero_row_sums, short, x, m)


def long_rows(rng, m, n, per_row, index_type):
    """An m x n csr_matrix of about per_row entries a row, some rows empty
    and one row full, its values of mixed magnitude with -0.0 among them."""
    import scipy.sparse as sp
    counts = rng.poisson(per_row, m)
    counts[rng.integers(0, m, m // 10)] = 0
    counts[m // 3] = n
    cols = np.concatenate([rng.choice(n, min(c, n), replace=False) for c in counts])
    indptr = np.concatenate([[0], np.cumsum(np.minimum(counts, n))])
    data = rng.normal(size=len(cols)) * 10.0 ** rng.integers(-4, 5, len(cols))
    data[::11] = -0.0
    return sp.csr_matrix((data, cols.astype(index_type), indptr.astype(index_type)), shape=(m, n))


def test_row_folds_in_pairs(build, opt):
    """Row loops that fold each row into out[i] run two rows at a time
    (pairs) on rows of 24 entries or more over at most 16384 columns:
    Python's results bit for bit on int32 and int64 indices, empty rows, a
    full row, unsorted rows with duplicates, and S.nonzeros() sums (nzrows'
    row loop); as written on short rows and wide matrices."""
    import scipy.sparse as sp
    comp, ref = build("optimizer", opt)
    rng = np.random.default_rng(31)
    for m, n, per_row in ((300, 2000, 60), (61, 400, 30), (2, 50, 40), (500, 20000, 40), (400, 300, 5)):
        for index_type in (np.int32, np.int64):
            S = long_rows(rng, m, n, per_row, index_type)
            x = rng.normal(size=n)
            same(comp.row_folds, ref.row_folds, S, x)
            same(comp.row_quotients, ref.row_quotients, S, x)
            same(comp.nonzero_row_sums, ref.nonzero_row_sums, S, x, m)
            same(comp.row_sums_into, ref.row_sums_into, S, x)
            I = sp.csr_matrix((np.round(S.data * 100).astype(np.int64), S.indices, S.indptr), shape=S.shape)
            same(comp.row_folds_max, ref.row_folds_max, I, rng.integers(-10**6, 10**6, m))
        # each row's entries twice, in shuffled order
        order = np.concatenate([rng.permutation(np.arange(S.indptr[i], S.indptr[i + 1]).repeat(2))
                                for i in range(m)]).astype(np.int64)
        dup = sp.csr_matrix((S.data[order], S.indices[order], 2 * S.indptr), shape=S.shape)
        same(comp.row_folds, ref.row_folds, dup, x)
        same(comp.nonzero_row_sums, ref.nonzero_row_sums, dup, x, m)
        same(comp.row_sums_into, ref.row_sums_into, dup, x)


def test_row_folds_in_pairs_raise_in_row_order(build, opt):
    """Two rows at a time reach a row of the second half before a row of
    the first: the error raised is still the one of the earlier row, as
    the loop as written raises it. (The Python run is no reference here:
    NumPy's float64 divides by zero without raising, and it reads a column
    out of range as an IndexError of x.)"""
    comp, _ = build("optimizer", opt)
    rng = np.random.default_rng(32)
    m, n = 200, 500
    S = long_rows(rng, m, n, 50, np.int32)
    early = next(r for r in range(85, m) if S.indptr[r + 1] > S.indptr[r])
    late = next(r for r in range(120, m) if S.indptr[r + 1] > S.indptr[r])
    # The second half starts at the row of the middle entry, between them.
    middle = np.searchsorted(S.indptr, S.nnz // 2, side="right") - 1
    assert early < middle <= late - 20
    x = rng.normal(size=n) + 3.0
    x[7] = 0.0
    S.indices[S.indptr[early]] = 7  # a division by zero
    S.indices[S.indptr[late]] = n + 5  # a column out of range
    with pytest.raises(ZeroDivisionError):
        comp.row_quotients(S, x)
    # A negative column comes first; nzrows' row loop reads out[r] and is
    # not run again: the columns are checked in order.
    S.indices[S.indptr[early]] = -1
    with pytest.raises(ValueError, match=">= 0"):
        comp.nonzero_row_sums(S, x, m)
    with pytest.raises(ValueError, match=">= 0"):
        comp.row_folds(S, x)
