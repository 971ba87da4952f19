// pydd runtime: library templates compiled once, into libpydd_runtime.a.
//
// A reduction or a matrix product instantiated in a kernel costs g++ 0.3 to
// 0.9 s at -O3 (pairwise summation, the NaN-aware vector loops and the BLAS
// dispatch are large), which dominated the build of array-heavy kernels.
// The common instantiations below are compiled once, with the kernels' -O3
// flags, and every kernel sees them as explicit instantiation declarations
// (`extern template`): g++ neither instantiates nor optimizes them again,
// the linker takes them from the library. Other instantiations (other
// ranks, element types) are still made in the kernel, as before.
#pragma once

#include <cstdint>

#include "pydd/abi.h"
#include "pydd/elementwise.h"
#include "pydd/linalg.h"
#include "pydd/reduce.h"
#include "pydd/sparse.h"

// PYDD_INSTANCE(declaration) is `extern template declaration;` here and
// `template declaration;` in runtime/src/instances_*.cpp.

/// Reductions of one element type T at rank N: S is the type sum and prod
/// accumulate in, M the type of mean (NumPy's rules; see stdlib/Reductions).
#define PYDD_REDUCTIONS_OF(T, S, M, N)                                   \
  PYDD_INSTANCE(S sum<S, T, N>(const Array<T, N>&))                     \
  PYDD_INSTANCE(S prod<S, T, N>(const Array<T, N>&))                    \
  PYDD_INSTANCE(M mean<M, T, N>(const Array<T, N>&))                    \
  PYDD_INSTANCE(T min<T, N>(const Array<T, N>&))                        \
  PYDD_INSTANCE(T max<T, N>(const Array<T, N>&))                        \
  PYDD_INSTANCE(int64_t argmin<T, N>(const Array<T, N>&))               \
  PYDD_INSTANCE(int64_t argmax<T, N>(const Array<T, N>&))               \
  PYDD_INSTANCE(bool any<T, N>(const Array<T, N>&))                     \
  PYDD_INSTANCE(bool all<T, N>(const Array<T, N>&))

/// Reductions along one axis of a rank-N array (N >= 2).
#define PYDD_AXIS_REDUCTIONS_OF(T, S, M, N)                                        \
  PYDD_INSTANCE(Array<S, N - 1> sum_axis<S, T, N>(const Array<T, N>&, int64_t))   \
  PYDD_INSTANCE(Array<M, N - 1> mean_axis<M, T, N>(const Array<T, N>&, int64_t))  \
  PYDD_INSTANCE(Array<T, N - 1> min_axis<T, N>(const Array<T, N>&, int64_t))      \
  PYDD_INSTANCE(Array<T, N - 1> max_axis<T, N>(const Array<T, N>&, int64_t))

#define PYDD_ALL_REDUCTIONS_OF(T, S, M) \
  PYDD_REDUCTIONS_OF(T, S, M, 1)        \
  PYDD_REDUCTIONS_OF(T, S, M, 2)        \
  PYDD_REDUCTIONS_OF(T, S, M, 3)        \
  PYDD_AXIS_REDUCTIONS_OF(T, S, M, 2)   \
  PYDD_AXIS_REDUCTIONS_OF(T, S, M, 3)   \
  PYDD_INSTANCE(Array<int64_t, 1> nonzero<T>(const Array<T, 1>&))

#define PYDD_REDUCTION_INSTANCES                     \
  PYDD_ALL_REDUCTIONS_OF(bool, int64_t, double)      \
  PYDD_ALL_REDUCTIONS_OF(int32_t, int64_t, double)   \
  PYDD_ALL_REDUCTIONS_OF(int64_t, int64_t, double)   \
  PYDD_ALL_REDUCTIONS_OF(float, float, float)        \
  PYDD_ALL_REDUCTIONS_OF(double, double, double)

/// The products behind `@` (matmul's rank dispatch stays inline).
#define PYDD_PRODUCTS_OF(T)                                                                 \
  PYDD_INSTANCE(Array<T, 2> detail::matrix_product<T>(const Array<T, 2>&, const Array<T, 2>&)) \
  PYDD_INSTANCE(Array<T, 1> detail::matrix_vector<T>(const Array<T, 2>&, const Array<T, 1>&, bool)) \
  PYDD_INSTANCE(T detail::vector_dot<T>(const Array<T, 1>&, const Array<T, 1>&))

#define PYDD_LINALG_INSTANCES \
  PYDD_PRODUCTS_OF(float)     \
  PYDD_PRODUCTS_OF(double)

/// A SparseMat's release and its crossing of the Python boundary, for the
/// element types SciPy matrices usually have.
#define PYDD_SPARSE_OF(T)                                                        \
  PYDD_INSTANCE(void detail::destroy_store<T>(detail::SparseStore<T>*))         \
  PYDD_INSTANCE(SparseMat<T> abi::sparse_from_raw<T>(const abi::RawSparse&))    \
  PYDD_INSTANCE(void abi::sparse_to_raw<T>(abi::RawSparse&, const SparseMat<T>&))

/// The sparse library's products and constructors on float matrices and
/// operands of the same type, as code generation names them (the result
/// type explicit): 0.2 s of sinkhorn-WMD's 2.6 s build.
#define PYDD_SPARSE_OPS_OF(T)                                                                          \
  PYDD_INSTANCE(SparseMat<T> csr_to_spm<T, int32_t, int32_t>(const Array<T, 1>&, const Array<int32_t, 1>&, \
                                                             const Array<int32_t, 1>&, int64_t))           \
  PYDD_INSTANCE(SparseMat<T> csr_to_spm<T, int64_t, int64_t>(const Array<T, 1>&, const Array<int64_t, 1>&, \
                                                             const Array<int64_t, 1>&, int64_t))           \
  PYDD_INSTANCE(Array<T, 1> spmv<T, T, T>(const SparseMat<T>&, const Array<T, 1>&))                     \
  PYDD_INSTANCE(Array<T, 2> spmm_dense<T, T, T>(const SparseMat<T>&, const Array<T, 2>&))               \
  PYDD_INSTANCE(Array<T, 2> spmm_dense<T, T, T>(const Array<T, 2>&, const SparseMat<T>&))               \
  PYDD_INSTANCE(Array<T, 2> spmm_dense_t<T, T, T>(const Array<T, 2>&, const SparseMat<T>&))             \
  PYDD_INSTANCE(SparseMat<T> spmm<T, T, T>(const SparseMat<T>&, const SparseMat<T>&))                   \
  PYDD_INSTANCE(SparseMat<T> spm_mul<T, T, T>(const SparseMat<T>&, const SparseMat<T>&))                \
  PYDD_INSTANCE(SparseMat<T> spm_mul<T, T, T, 1>(const SparseMat<T>&, const Array<T, 1>&))              \
  PYDD_INSTANCE(SparseMat<T> spm_mul<T, T, T, 2>(const SparseMat<T>&, const Array<T, 2>&))              \
  PYDD_INSTANCE(Array<T, 1> sampled_matmul<T, T>(const SparseMat<T>&, const Array<T, 2>&, const Array<T, 2>&)) \
  PYDD_INSTANCE(SparseMat<T> spm_with_values<T, T>(const SparseMat<T>&, const Array<T, 1>&))

/// Row and column sums (`S.sum(1)`, `S.sum(0)`) of a matrix of T, in S.
#define PYDD_SPARSE_SUMS_OF(T, S) PYDD_INSTANCE(Array<S, 1> sum_axis<S, T>(const SparseMat<T>&, int64_t))

#define PYDD_SPARSE_INSTANCES             \
  PYDD_SPARSE_OF(bool)                    \
  PYDD_SPARSE_OF(int32_t)                 \
  PYDD_SPARSE_OF(int64_t)                 \
  PYDD_SPARSE_OF(float)                   \
  PYDD_SPARSE_OF(double)                  \
  PYDD_SPARSE_OPS_OF(float)               \
  PYDD_SPARSE_OPS_OF(double)              \
  PYDD_SPARSE_SUMS_OF(int32_t, int64_t)   \
  PYDD_SPARSE_SUMS_OF(int64_t, int64_t)   \
  PYDD_SPARSE_SUMS_OF(float, float)       \
  PYDD_SPARSE_SUMS_OF(double, double)

/// Whole-array copies and assignments (`a.copy()`, `a[...] = b`) of one
/// element type and rank: every fused loop's general (broadcasting) path
/// calls them, as slice assignments do; each cost a kernel's build about
/// 0.03 s.
#define PYDD_COPIES_OF(T, N)                                      \
  PYDD_INSTANCE(Array<T, N> astype<T, T, N>(const Array<T, N>&)) \
  PYDD_INSTANCE(void assign<T, N, Array<T, N>>(const Array<T, N>&, const Array<T, N>&))

#define PYDD_COPIES_OF_RANKS(T) PYDD_COPIES_OF(T, 1) PYDD_COPIES_OF(T, 2) PYDD_COPIES_OF(T, 3)

/// Arithmetic of two float arrays of one rank, as code generation spells
/// an operation it does not fuse (`spmv(S, a * b)`: the operand of a
/// library call): 0.3 s of ISTA's 1.4 s build.
#define PYDD_ARITHMETIC_OP(T, N, Op)                                                       \
  PYDD_INSTANCE(Array<T, N> map2<T, T, op::Op, Array<T, N>, Array<T, N>>(const char*, op::Op, \
                                                                       const Array<T, N>&, const Array<T, N>&))
#define PYDD_ARITHMETIC_OF(T, N) \
  PYDD_ARITHMETIC_OP(T, N, add) PYDD_ARITHMETIC_OP(T, N, sub) PYDD_ARITHMETIC_OP(T, N, mul) PYDD_ARITHMETIC_OP(T, N, truediv)

#define PYDD_ELEMENTWISE_INSTANCES \
  PYDD_COPIES_OF_RANKS(bool)       \
  PYDD_COPIES_OF_RANKS(int32_t)    \
  PYDD_COPIES_OF_RANKS(int64_t)    \
  PYDD_COPIES_OF_RANKS(float)      \
  PYDD_COPIES_OF_RANKS(double)     \
  PYDD_ARITHMETIC_OF(float, 1)     \
  PYDD_ARITHMETIC_OF(float, 2)     \
  PYDD_ARITHMETIC_OF(double, 1)    \
  PYDD_ARITHMETIC_OF(double, 2)

#ifndef PYDD_DEFINE_INSTANCES
namespace pydd {
#define PYDD_INSTANCE(...) extern template __VA_ARGS__;
PYDD_REDUCTION_INSTANCES
PYDD_LINALG_INSTANCES
PYDD_SPARSE_INSTANCES
PYDD_ELEMENTWISE_INSTANCES
#undef PYDD_INSTANCE
}  // namespace pydd
#endif
