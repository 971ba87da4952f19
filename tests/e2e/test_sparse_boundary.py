"""SparseMat at the Python boundary (kernels: sparse_boundary.pydd).

In: a scipy.sparse CSR matrix is borrowed (its data, and int64 index arrays,
without a copy); int32 indices become int64 copies; other formats go through
.tocsr(); anything else, or the wrong dtype, is a TypeError naming the
parameter. A kernel that may write the matrix (spm_set_item) gets a copy, so
the caller's matrix never changes. Out: a scipy.sparse.csr_matrix whose
arrays are the kernel's own buffers (int64 indices, no copy)."""

import ctypes
import gc
import mmap

import numpy as np
import pytest
import scipy.sparse as sp

KERNEL = "sparse_boundary"


@pytest.fixture
def k(build, opt):
    return build(KERNEL, opt)[0]


def random_csr(m=7, n=5, density=0.4, seed=0, dtype=np.float64):
    A = sp.random(m, n, density, format="csr", random_state=seed, dtype=dtype)
    A.sort_indices()
    return A


def with_int64_indices(A):
    B = A.copy()
    B.indices = B.indices.astype(np.int64)
    B.indptr = B.indptr.astype(np.int64)
    return B


def same_matrix(R, E):
    assert R.shape == E.shape
    assert (R != E).nnz == 0
    np.testing.assert_array_equal(R.toarray(), E.toarray())


def owns_kernel_memory(a):
    return type(a.base).__name__ == "PyCapsule"


# ---- arguments


def test_nnz_and_shape(k):
    A = random_csr()
    assert A.indices.dtype == np.int32
    assert k.nnz_of(A) == A.nnz
    assert k.rows_of(A) == 7
    assert k.nnz_of(with_int64_indices(A)) == A.nnz


def test_csr_int64_is_borrowed_without_copy(k):
    A = with_int64_indices(random_csr(seed=1))
    R = k.ident(A)
    # The kernel returned the argument itself: every array is the caller's.
    assert np.shares_memory(R.data, A.data)
    assert np.shares_memory(R.indices, A.indices)
    assert np.shares_memory(R.indptr, A.indptr)
    same_matrix(R, A)


def test_int32_indices_are_accepted(k):
    A = random_csr(seed=2)
    R = k.ident(A)
    # The values are still borrowed; the indices are int64 copies.
    assert np.shares_memory(R.data, A.data)
    assert R.indices.dtype == np.int64 and R.indptr.dtype == np.int64
    assert A.indices.dtype == np.int32 and A.indptr.dtype == np.int32
    same_matrix(R, A)
    for r in range(A.shape[0]):
        for c in range(A.shape[1]):
            assert k.get_item(A, r, c) == A[r, c]


def test_csr_array_is_accepted(k):
    A = random_csr(seed=3)
    R = k.ident(sp.csr_array(A))
    assert np.shares_memory(R.data, A.data)
    same_matrix(R, A)


@pytest.mark.parametrize("fmt", ["csc", "coo", "lil", "dok", "bsr", "dia"])
def test_other_formats_are_converted(k, fmt):
    A = random_csr(seed=4)
    M = A.asformat(fmt)
    assert k.nnz_of(M) == M.tocsr().nnz
    same_matrix(k.ident(M), A)
    same_matrix(k.tr(M), A.T)


def test_coo_duplicates_are_summed(k):
    C = sp.coo_matrix(([1.0, 2.0, 4.0], ([0, 0, 1], [1, 1, 2])), shape=(2, 3))
    assert k.get_item(C, 0, 1) == 3.0
    assert k.nnz_of(C) == 2


def test_read_only_matrix_is_fine_when_not_written(k):
    A = with_int64_indices(random_csr(seed=5))
    for a in (A.data, A.indices, A.indptr):
        a.setflags(write=False)
    same_matrix(k.tr(A), A.T)
    assert np.shares_memory(k.ident(A).data, A.data)


def test_arrays_longer_than_nnz(k):
    A = with_int64_indices(random_csr(seed=6))
    B = sp.csr_matrix(A.shape)
    B.indptr = A.indptr
    B.indices = np.concatenate([A.indices, [0, 0, 0]])
    B.data = np.concatenate([A.data, [9.0, 9.0, 9.0]])
    assert k.nnz_of(B) == A.nnz
    same_matrix(k.ident(B), A)


def test_non_contiguous_data(k):
    A = random_csr(seed=7)
    strided = np.repeat(A.data, 2)[::2]
    B = sp.csr_matrix((strided, A.indices, A.indptr), shape=A.shape, copy=False)
    assert not B.data.flags.c_contiguous
    same_matrix(k.ident(B), A)


def test_empty_matrices(k):
    for shape in [(0, 0), (3, 0), (0, 4), (3, 4)]:
        E = sp.csr_matrix(shape)
        assert k.nnz_of(E) == 0
        same_matrix(k.ident(E), E)
        same_matrix(k.tr(E), E.T)


def test_other_dtypes(k):
    F = random_csr(seed=8, dtype=np.float32)
    R = k.tr32(F)
    assert R.dtype == np.float32
    same_matrix(R, F.T)
    I = sp.csr_matrix(np.array([[0, 3], [4, 0]], dtype=np.int64))
    assert k.nnz_i64(I) == 2


BAD = {
    "dense": lambda A: A.toarray(),
    "None": lambda A: None,
    "list": lambda A: A.toarray().tolist(),
    "float32": lambda A: A.astype(np.float32),
    "int64": lambda A: A.astype(np.int64),
    "complex": lambda A: A.astype(np.complex128),
    "np.matrix": lambda A: A.todense(),
}


@pytest.mark.parametrize("bad", BAD)
def test_wrong_argument_is_type_error_naming_the_parameter(k, bad):
    A = random_csr(seed=9)
    with pytest.raises(TypeError, match=r"nnz_of\(\): parameter 'S' expects a scipy\.sparse matrix of float64"):
        k.nnz_of(BAD[bad](A))


def test_wrong_dtype_message_names_the_dtype(k):
    with pytest.raises(TypeError, match=r"got csr_matrix of float32"):
        k.nnz_of(random_csr(dtype=np.float32))
    with pytest.raises(TypeError, match=r"tr32\(\): parameter 'S' expects a scipy\.sparse matrix of float32"):
        k.tr32(random_csr())


def test_wrong_element_in_a_list(k):
    A = random_csr(seed=10)
    with pytest.raises(TypeError, match=r"parameter 'L' element 1 expects a scipy\.sparse matrix of float64"):
        k.total_nnz([A, A.toarray()])


@pytest.mark.parametrize("index", ["int32", "int64"])
@pytest.mark.parametrize("bad", [-1, 3])
def test_invalid_column_is_value_error(k, index, bad):
    """Column indices are checked where the kernel first reads them: spmv in
    its own pass, a row loop per index, transpose up front; nnz never reads
    them (as scipy's A.nnz)."""
    A = random_csr(seed=11)
    if index == "int64":
        A = with_int64_indices(A)
    A.indices[0] = A.shape[1] + bad if bad > 0 else bad
    x = np.ones(A.shape[1])
    msg = "column index values must be >= 0" if bad < 0 else f"column index values must be < {A.shape[1]}"
    for call in (lambda: k.spmv_of(A, x), lambda: k.row_loop(A, x), lambda: k.tr(A)):
        with pytest.raises(ValueError, match=msg):
            call()
    assert k.nnz_of(A) == A.nnz


@pytest.mark.parametrize("index", ["int32", "int64"])
def test_spmv_long_rows(k, index):
    """spmv sums two rows at a time where rows average 24 entries or more
    over at most 16384 columns, else row by row: SciPy's result bit for bit
    on both sides of both limits, with empty rows, a full row, unsorted rows
    with duplicates and a strided x. A column out of range raises SciPy's
    error from either half of the rows, and from a wide matrix."""
    rng = np.random.default_rng(43)
    for m, n, per_row in ((300, 2000, 60), (61, 400, 30), (2, 50, 40), (400, 300, 20), (200, 20000, 40)):
        counts = rng.poisson(per_row, m)
        counts[rng.integers(0, m, m // 10)] = 0
        counts[m // 3] = n
        counts = np.minimum(counts, n)
        order = np.concatenate([rng.permutation(np.r_[rng.choice(n, c, replace=False), rng.integers(0, n, c // 8)])
                                for c in counts])
        indptr = np.concatenate([[0], np.cumsum(counts + counts // 8)])
        data = rng.normal(size=len(order)) * 10.0 ** rng.integers(-4, 5, len(order))
        A = sp.csr_matrix((data, order, indptr), shape=(m, n))
        if index == "int64":  # scipy keeps int32 indices where they fit
            A = with_int64_indices(A)
        assert A.indices.dtype == np.dtype(index)
        x = rng.normal(size=2 * n)[::2]
        np.testing.assert_array_equal(k.spmv_of(A, x), A @ x, err_msg=f"{m}x{n}, {per_row} a row")
        for row in sorted({0, m // 2 + 1, m - 1} - {m}):
            for bad, msg in ((-1, ">= 0"), (n, f"< {n}")):
                B = A.copy()
                if B.indptr[row + 1] > B.indptr[row]:
                    B.indices[B.indptr[row + 1] - 1] = bad
                    with pytest.raises(ValueError, match=f"column index values must be {msg}"):
                        k.spmv_of(B, x)


def ending_at_unreadable_page(values):
    """A copy of the 1-D array `values` whose last element ends where a page
    that cannot be read begins: reading one element past it crashes."""
    page = mmap.PAGESIZE
    pages = -(-values.nbytes // page) + 1
    buf = mmap.mmap(-1, pages * page)
    start = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.mprotect(ctypes.c_void_p(start + (pages - 1) * page), ctypes.c_size_t(page), 0) == 0
    guarded = np.frombuffer(buf, values.dtype, len(values), (pages - 1) * page - values.nbytes)
    guarded[:] = values
    return guarded


@pytest.mark.parametrize("index", ["int32", "int64"])
def test_gathers_prefetched(k, index):
    """Loops that read x at each entry's column (over S.row(i) and
    S.nonzeros(), and spmv) prefetch x ahead where it spans 256 KiB or
    more: SciPy's result bit for bit below and above that, with a strided
    and a reversed x, a float32 y, empty rows and unsorted rows with
    duplicates. The column indices end where an unreadable page begins, so
    a prefetch that read an entry past the last would crash. A bad column
    in the last row raises SciPy's error."""
    rng = np.random.default_rng(44)
    for m, n in ((500, 30000), (3000, 40000), (2000, 70000)):  # x: 240, 320, 560 KiB
        counts = rng.poisson(12, m)
        counts[rng.integers(0, m, m // 10)] = 0
        counts[-1] = 3
        cols = np.concatenate([rng.integers(0, n, c) for c in counts])
        data = rng.normal(size=len(cols))
        data[::7] = 0.5  # skipped by gathered_into
        A = sp.csr_matrix((data, cols, np.r_[0, np.cumsum(counts)]), shape=(m, n))
        A.indptr = A.indptr.astype(index)
        A.indices = ending_at_unreadable_page(A.indices.astype(index))
        y = rng.normal(size=n).astype(np.float32)
        for x in (rng.normal(size=n), rng.normal(size=2 * n)[::2], rng.normal(size=n)[::-1]):
            what = f"{m}x{n}, x strides {x.strides}"
            want = A @ x
            np.testing.assert_array_equal(k.gathered_rows(A, x), want, err_msg=what)
            np.testing.assert_array_equal(k.gathered_nonzeros(A, x), want, err_msg=what)
            np.testing.assert_array_equal(k.spmv_of(A, x), want, err_msg=what)
            # Each row's terms summed in order, skipped ones as + 0.0.
            terms = np.where(data != 0.5, data * x[cols] + y[cols].astype(np.float64), 0.0)
            want = sp.csr_matrix((terms, A.indices, A.indptr), shape=A.shape) @ np.ones(n)
            np.testing.assert_array_equal(k.gathered_into(A, x, y), want, err_msg=what)
        for bad, msg in ((-1, ">= 0"), (n, f"< {n}")):
            B = A.copy()
            B.indices = ending_at_unreadable_page(np.r_[A.indices[:-1], bad].astype(index))
            for f in (k.gathered_rows, k.gathered_nonzeros, k.spmv_of):
                with pytest.raises(ValueError, match=f"column index values must be {msg}"):
                    f(B, x)


@pytest.mark.parametrize("index", ["int32", "int64"])
def test_both_index_widths_compute_the_same(k, index):
    A = random_csr(40, 30, density=0.2, seed=13)
    if index == "int64":
        A = with_int64_indices(A)
    x = np.random.default_rng(0).random(30)
    np.testing.assert_allclose(k.spmv_of(A, x), A @ x, rtol=1e-13)
    assert k.row_loop(A, x) == pytest.approx(float((A @ x).sum()), rel=1e-12)
    same_matrix(k.tr(A), A.T)


@pytest.mark.parametrize("index", ["int32", "int64"])
def test_row_loop_in_strips(k, index):
    # A loop over every row runs in strips of rows (one Ctrl-C check each):
    # runs of empty rows longer than a strip, short rows, rows longer than a
    # strip's work alone and rows just under it; every row once, in order.
    rng = np.random.default_rng(5)
    lengths = np.concatenate([np.zeros(700, int), rng.integers(0, 20, 500), [5000, 4080, 4079, 1],
                              np.zeros(300, int), rng.integers(0, 300, 200), [9000], np.zeros(3, int)])
    n = 9500
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    cols = np.concatenate([np.sort(rng.choice(n, m, replace=False)) for m in lengths])
    A = sp.csr_matrix((rng.random(indptr[-1]) - 0.5, cols, indptr), shape=(len(lengths), n))
    if index == "int64":
        A = with_int64_indices(A)
    x = rng.random(n)
    np.testing.assert_allclose(k.row_products(A, x), A @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("index", ["int32", "int64"])
def test_row_loop_break_and_continue(k, index):
    # Empty rows, rows of one entry and long rows; negative values skipped.
    A = sp.random(60, 50, 0.15, format="csr", random_state=3)
    A.data -= 0.3
    A = sp.csr_matrix(A.multiply(np.arange(60)[:, None] % 7 != 0))  # empty rows
    A.eliminate_zeros()
    A.sort_indices()
    want = []
    for i in range(A.shape[0]):
        cols, vals = A.indices[A.indptr[i]:A.indptr[i + 1]], A.data[A.indptr[i]:A.indptr[i + 1]]
        want.append(next((int(j) for j, v in zip(cols, vals) if v >= 0.0 and j > i), -1))
    assert min(np.diff(A.indptr)) == 0 and -1 in want and max(want) > 0
    if index == "int64":
        A = with_int64_indices(A)
    np.testing.assert_array_equal(k.first_above_diagonal(A), want)


def test_loop_holds_its_matrix(k):
    A = sp.csr_matrix(np.array([[0.0, 2.5, 1.0], [3.0, 0.0, 0.0]]))
    assert k.reassign_while_iterating(A) == 2.5 + 2 + 1.0 + 2


def test_invalid_structure_is_value_error(k):
    B = with_int64_indices(random_csr(seed=11))
    B.indptr[2] = B.indptr[1] - 1 if B.indptr[1] > 0 else 99
    with pytest.raises(ValueError):
        k.nnz_of(B)


# ---- results


def test_result_is_a_csr_matrix_of_kernel_memory(k):
    A = random_csr(8, 6, seed=12)
    R = k.tr(A)
    assert type(R) is sp.csr_matrix
    assert R.format == "csr"
    same_matrix(R, A.T)
    # The kernel's buffers, as they are: int64 indices, no copy by SciPy.
    assert R.indices.dtype == np.int64 and R.indptr.dtype == np.int64
    assert owns_kernel_memory(R.data) and owns_kernel_memory(R.indices) and owns_kernel_memory(R.indptr)
    assert not np.shares_memory(R.data, A.data)
    assert R.has_sorted_indices


def test_result_outlives_its_input(k):
    A = random_csr(9, 4, seed=13)
    expected = A.T.toarray()
    R = k.tr(A.tocoo())
    del A
    gc.collect()
    np.testing.assert_array_equal(R.toarray(), expected)


@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")
def test_result_works_with_scipy(k):
    A = random_csr(6, 6, seed=14)
    R = k.tr(A)
    x = np.arange(6.0)
    np.testing.assert_allclose(R @ x, A.T @ x)
    same_matrix(R + R, (A.T + A.T).tocsr())
    same_matrix(R.tocsc(), A.T)
    assert R.sum() == pytest.approx(A.sum())
    R2 = R.copy()
    R2[0, 0] = 42.0  # SciPy may restructure its own copy
    assert R2[0, 0] == 42.0


def test_new_matrix_from_the_kernel(k):
    R = k.eye_spm(5)
    assert type(R) is sp.csr_matrix
    same_matrix(R, sp.diags(np.arange(1.0, 6.0)).tocsr())
    assert owns_kernel_memory(R.data)
    E = k.eye_spm(0)
    assert E.shape == (0, 0) and E.nnz == 0


def test_in_a_tuple_result(k):
    A = random_csr(seed=15)
    R, n = k.with_count(A)
    assert n == A.nnz
    assert type(R) is sp.csr_matrix
    same_matrix(R, A.T)


def test_list_of_matrices(k):
    A = random_csr(seed=16)
    B = random_csr(4, 9, seed=17)
    assert k.total_nnz([A, B.tocsc(), with_int64_indices(A)]) == 2 * A.nnz + B.nnz
    assert k.total_nnz([]) == 0


# ---- writes never reach the caller's matrix


def snapshot(A):
    return A.data.copy(), A.indices.copy(), A.indptr.copy()


def unchanged(A, snap):
    for a, b in zip((A.data, A.indices, A.indptr), snap):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("int64", [False, True], ids=["int32", "int64"])
def test_set_item_copies_the_argument(k, int64):
    A = random_csr(seed=18)
    if int64:
        A = with_int64_indices(A)
    snap = snapshot(A)
    dense = A.toarray()
    # Overwrite an existing entry and insert a new one.
    r, c = np.argwhere(dense != 0)[0]
    R = k.set_one(A, int(r), int(c), 5.0)
    unchanged(A, snap)
    assert not np.shares_memory(R.data, A.data)
    dense[r, c] = 5.0
    np.testing.assert_array_equal(R.toarray(), dense)
    zr, zc = np.argwhere(dense == 0)[0]
    R = k.set_one(A, int(zr), int(zc), 7.0)
    unchanged(A, snap)
    assert R[zr, zc] == 7.0


def test_set_item_through_a_helper_copies(k):
    A = with_int64_indices(random_csr(seed=19))
    snap = snapshot(A)
    assert k.set_via_helper(A) == 5.0
    unchanged(A, snap)


def test_reference_agrees(build, opt):
    comp, ref = build(KERNEL, opt)
    A = random_csr(6, 8, seed=20)
    same_matrix(comp.tr(A), ref.tr(A))
    assert comp.nnz_of(A.tocsc()) == ref.nnz_of(A.tocsc())
    same_matrix(comp.set_one(A, 1, 2, 3.0), ref.set_one(A.copy(), 1, 2, 3.0))
    same_matrix(comp.eye_spm(4), ref.eye_spm(4))


# ---- memory


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_no_leaks_over_many_calls(k):
    big = random_csr(3000, 3000, 0.003, seed=21)  # ~27k entries
    big64 = with_int64_indices(big)
    coo = big.tocoo()
    dense = np.zeros((3, 3))

    def churn(n):
        for _ in range(n):
            k.tr(big)
            k.ident(big64)
            k.nnz_of(coo)
            k.eye_spm(500)
            k.set_one(big64, 3, 4, 1.0)
            k.with_count(big)
            k.total_nnz([big, big64])
            with pytest.raises(TypeError):
                k.nnz_of(dense)

    churn(50)
    gc.collect()
    before = rss_bytes()
    churn(300)
    gc.collect()
    # Each round allocates a few MB; anything retained would add up to
    # hundreds of MB.
    assert rss_bytes() - before < 16 << 20


def test_set_item_through_an_alias_copies(k):
    A = with_int64_indices(random_csr(seed=22))
    snap = snapshot(A)
    assert k.set_alias(A) == 9.0
    unchanged(A, snap)


def test_set_item_unsafe_copies(k):
    A = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    A.indices = A.indices.astype(np.int64)
    A.indptr = A.indptr.astype(np.int64)
    snap = snapshot(A)
    R = k.append_last(A, 4.0)
    unchanged(A, snap)
    np.testing.assert_array_equal(R.toarray(), [[1.0, 0.0, 2.0], [0.0, 3.0, 4.0]])
    assert R.indptr.tolist() == [0, 2, 4]


MAIN_CPP = r"""
#include "sparse_boundary.h"
#include <cstdio>
int main() {
  pydd::SparseMat<double> S = sparse_boundary::eye_spm(4);
  pydd::SparseMat<double> T = sparse_boundary::tr(S);
  std::printf("%lld %lld %g\n", static_cast<long long>(sparse_boundary::nnz_of(T)),
              static_cast<long long>(T.rows()), sparse_boundary::get_item(T, 2, 2));
}
"""


def test_host_cpp_uses_the_runtime_type(tmp_path):
    import shlex
    import shutil
    import subprocess

    from conftest import KERNELS, run_pyddc

    built = run_pyddc("--host=cpp", KERNELS / f"{KERNEL}.pydd", "-o", tmp_path)
    assert built.returncode == 0, built.stderr
    header = (tmp_path / f"{KERNEL}.h").read_text()
    assert '#include "pydd/sparse.h"' in header
    assert "pydd::SparseMat<double> tr(" in header.replace("[[maybe_unused]] ", "")
    (tmp_path / "main.cpp").write_text(MAIN_CPP)
    flags = shlex.split(run_pyddc("--cxxflags").stdout) + ["-I", str(tmp_path)]
    ldflags = shlex.split(run_pyddc("--ldflags").stdout)
    exe = tmp_path / "main"
    cc = subprocess.run([shutil.which("c++"), *flags, str(tmp_path / "main.cpp"), str(tmp_path / f"lib{KERNEL}.a"),
                         *ldflags, "-o", str(exe)], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["4", "4", "3"]


def test_set_item_on_a_read_only_matrix(k):
    A = with_int64_indices(random_csr(seed=23))
    for a in (A.data, A.indices, A.indptr):
        a.setflags(write=False)
    R = k.set_one(A, 0, 0, 6.0)
    assert R[0, 0] == 6.0
