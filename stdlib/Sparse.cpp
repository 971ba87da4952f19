// Sparse matrices (CSR): construction and export, element access,
// SciPy-style arithmetic and products, and the iteration sources of
// `for j, v in S.row(i)` and `for r, c, v in S.nonzeros()`.
#include "stdlib/Rules.h"

namespace pydd::catalog {
namespace {

bool isSparse(const Call& c, size_t i) { return i < c.args.size() && c.args[i]->type.isSparse(); }

/// The kind two operands combine in (NumPy promotion, literals weak).
ScalarKind combined(const Call& c) {
  const Expr &a = *c.args[0], &b = *c.args[1];
  return commonKind(a.type.elem(), isWeakLiteral(a), b.type.elem(), isWeakLiteral(b));
}

std::string typed(const char* fn, const Type& result, llvm::ArrayRef<std::string> args) {
  return callText(std::string("pydd::") + fn + "<" + cxxScalarType(result.elem()) + ">", args);
}

Type expectSparse(const Call& c, size_t i, TypeRuleError& err) {
  if (!isSparse(c, i))
    return fail(err, static_cast<int>(i), std::string(c.callee) + "() expects a SparseMat, got " + c.args[i]->type.str());
  return c.args[i]->type;
}

/// An index array of csr_to_spm/spm_to_csr: 1-D int32 or int64.
bool indexArray(const Call& c, size_t i, TypeRuleError& err) {
  const Type& t = c.args[i]->type;
  if (t.isArray() && t.rank() == 1 && isIntegerKind(t.elem())) return true;
  fail(err, static_cast<int>(i), std::string(c.callee) + "() expects a 1-D int32 or int64 index array, got " + t.str());
  return false;
}

// ---- construction, export, elements -------------------------------------------

/// csr_to_spm(values, columns, indexes, ncols): SciPy's csr_matrix((values,
/// columns, indexes), shape=(len(indexes) - 1, ncols)).
Type csrToSpmType(const Call& c, TypeRuleError& err) {
  const Type& v = c.args[0]->type;
  if (!v.isArray() || v.rank() != 1) return fail(err, 0, "csr_to_spm() expects 1-D values, got " + v.str());
  if (!indexArray(c, 1, err) || !indexArray(c, 2, err)) return Type();
  if (!c.args[3]->type.isInteger()) return fail(err, 3, "the number of columns must be an integer");
  return Type::sparse(v.elem());
}
std::string emitCsrToSpm(const Call&, llvm::ArrayRef<std::string> args) {
  return "pydd::csr_to_spm(" + args[0] + ", " + args[1] + ", " + args[2] + ", int64_t(" + args[3] + "))";
}

/// spm_to_csr(S, values, columns, indexes) fills the caller's arrays.
Type spmToCsrType(const Call& c, TypeRuleError& err) {
  Type s = expectSparse(c, 0, err);
  if (s.isUnknown()) return s;
  const Type& v = c.args[1]->type;
  if (!v.isArray() || v.rank() != 1 || v.elem() != s.elem())
    return fail(err, 1, "spm_to_csr() needs 1-D " + std::string(scalarName(s.elem())) + " values, got " + v.str());
  if (!indexArray(c, 2, err) || !indexArray(c, 3, err)) return Type();
  return Type::voidTy();
}

Type emptySpmType(const Call& c, TypeRuleError& err) {
  for (size_t i = 0; i < 2; ++i)
    if (!c.args[i]->type.isInteger()) return fail(err, static_cast<int>(i), "empty_spm() dimensions must be integers");
  ScalarKind k = ScalarKind::Float64;
  if (c.args.size() > 2) {
    if (!c.args[2]->type.isScalar()) return fail(err, 2, "dtype must be a type such as float64");
    k = c.args[2]->type.elem();
  }
  return Type::sparse(k);
}
std::string emitEmptySpm(const Call& c, llvm::ArrayRef<std::string> args) {
  return typed("empty_spm", c.type, {"int64_t(" + args[0] + ")", "int64_t(" + args[1] + ")"});
}

/// spm_set_item(S, v, r, c) / spm_set_item_unsafe: store v at (r, c).
Type setItemType(const Call& c, TypeRuleError& err) {
  Type s = expectSparse(c, 0, err);
  if (s.isUnknown()) return s;
  if (!c.args[1]->type.isScalar()) return fail(err, 1, "the value must be a scalar, got " + c.args[1]->type.str());
  for (size_t i = 2; i < 4; ++i)
    if (!c.args[i]->type.isInteger()) return fail(err, static_cast<int>(i), "indices must be integers");
  return Type::voidTy();
}
std::string emitSetItem(const Call& c, llvm::ArrayRef<std::string> args) {
  bool unsafe = std::string(c.callee) == "spm_set_item_unsafe";
  return "(" + args[0] + ")." + (unsafe ? "set_unsafe(" : "set(") + castTo(c.args[0]->type.elem(), args[1]) +
         ", int64_t(" + args[2] + "), int64_t(" + args[3] + "))";
}

Type nnzType(const Call& c, TypeRuleError& err) {
  Type s = expectSparse(c, 0, err);
  return s.isUnknown() ? s : Type::int64();
}
std::string emitNnz(const Call&, llvm::ArrayRef<std::string> args) { return "(" + args[0] + ").nnz()"; }

/// spm_with_values(S, values): S's structure holding new values.
Type withValuesType(const Call& c, TypeRuleError& err) {
  Type s = expectSparse(c, 0, err);
  if (s.isUnknown()) return s;
  const Type& v = c.args[1]->type;
  if (!v.isArray() || v.rank() != 1 || v.elem() == ScalarKind::Bool)
    return fail(err, 1, "spm_with_values() expects 1-D numeric values, got " + v.str());
  return Type::sparse(v.elem());
}

/// sampled_matmul(S, a, b): a @ b at S's stored positions.
Type sampledMatmulType(const Call& c, TypeRuleError& err) {
  Type s = expectSparse(c, 0, err);
  if (s.isUnknown()) return s;
  for (size_t i = 1; i < 3; ++i) {
    const Type& t = c.args[i]->type;
    if (!t.isArray() || t.rank() != 2 || t.elem() == ScalarKind::Bool)
      return fail(err, static_cast<int>(i), "sampled_matmul() expects a numeric 2-D array, got " + t.str());
  }
  if (c.args[1]->type.elem() != c.args[2]->type.elem())
    return fail(err, 2, "sampled_matmul() expects arrays of one element type");
  return Type::array(c.args[1]->type.elem(), 1);
}

/// spmm_dense_t(Dt, S): spmm_dense(Dt.T, S).
Type spmmDenseTType(const Call& c, TypeRuleError& err) {
  const Type& d = c.args[0]->type;
  if (!d.isArray() || d.rank() != 2) return fail(err, 0, "spmm_dense_t() needs a dense 2-D array, got " + d.str());
  if (expectSparse(c, 1, err).isUnknown()) return Type();
  return Type::array(combined(c), 2);
}

/// masked_spmm(M, a, b, mask_first): spm_mul(M, a @ b), computed at M's entries.
Type maskedSpmmType(const Call& c, TypeRuleError& err) {
  Type m = expectSparse(c, 0, err);
  if (m.isUnknown()) return m;
  for (size_t i = 1; i < 3; ++i) {
    if (expectSparse(c, i, err).isUnknown()) return Type();
    if (c.args[i]->type.elem() != m.elem()) return fail(err, static_cast<int>(i), "masked_spmm() expects matrices of one element type");
  }
  if (!isa<BoolLit>(*c.args[3])) return fail(err, 3, "masked_spmm() expects mask_first as True or False");
  return m;
}

/// spm_map(S, f): the one-operand element-wise function named by the string
/// f, one with f(0) == 0 (ElementRule::preservesZero), on S's stored values.
/// Sema calls it for sqrt(S), abs(S), -S...
const LibraryFunction* mappedFunction(const Call& c) {
  auto* name = dyn_cast<StrLit>(c.args[1].get());
  const LibraryFunction* f = name ? lookupLibraryFunction(name->value) : nullptr;
  return f && f->element && f->element->preservesZero && f->required == 1 ? f : nullptr;
}
Type spmMapType(const Call& c, TypeRuleError& err) {
  Type s = expectSparse(c, 0, err);
  if (s.isUnknown()) return s;
  const LibraryFunction* f = mappedFunction(c);
  if (!f) return fail(err, 1, "spm_map() expects the name of an element-wise function f with f(0) == 0, such as \"sqrt\"");
  if (f->element->rejectsBool && s.elem() == ScalarKind::Bool)
    return fail(err, 0, std::string(f->name) + "() is not supported on bool values");
  return Type::sparse(elementComputeKind(*f->element, s.elem()));
}
std::string emitSpmMap(const Call& c, llvm::ArrayRef<std::string> args) {
  const ElementRule& rule = *mappedFunction(c)->element;
  return std::string("pydd::spm_map<") + cxxScalarType(c.type.elem()) + ", " +
         cxxScalarType(elementComputeKind(rule, c.args[0]->type.elem())) + ">(" + args[0] + ", " + rule.functor + "{})";
}

Type toArrayType(const Call& c, TypeRuleError& err) {
  Type s = expectSparse(c, 0, err);
  return s.isUnknown() ? s : Type::array(s.elem(), 2);
}
std::string emitToArray(const Call&, llvm::ArrayRef<std::string> args) { return "pydd::spm_toarray(" + args[0] + ")"; }

// ---- arithmetic and products -----------------------------------------------------

/// spm_add(A, B): the union for two sparse matrices, a dense result with a
/// dense operand (as SciPy's `+`) or a scalar (NumPy's `S.toarray() + x`;
/// SciPy refuses a nonzero scalar).
Type spmAddType(const Call& c, TypeRuleError& err) {
  if (!isSparse(c, 0) && !isSparse(c, 1)) return fail(err, 0, "spm_add() needs a SparseMat operand");
  for (size_t i = 0; i < 2; ++i) {
    const Type& t = c.args[i]->type;
    if (!t.isSparse() && !t.isScalar() && !(t.isArray() && t.rank() <= 2))
      return fail(err, static_cast<int>(i), "spm_add() adds a SparseMat and a SparseMat, a dense 1-D/2-D array or a scalar, got " + t.str());
  }
  ScalarKind k = combined(c);
  return isSparse(c, 0) && isSparse(c, 1) ? Type::sparse(k) : Type::array(k, 2);
}

/// spm_mul(A, B): element-wise product keeping the sparse operand's
/// structure (the intersection for two sparse matrices), as SciPy's multiply.
Type spmMulType(const Call& c, TypeRuleError& err) {
  if (!isSparse(c, 0) && !isSparse(c, 1)) return fail(err, 0, "spm_mul() needs a SparseMat operand");
  for (size_t i = 0; i < 2; ++i) {
    const Type& t = c.args[i]->type;
    if (!t.isSparse() && !t.isScalar() && !(t.isArray() && t.rank() <= 2))
      return fail(err, static_cast<int>(i), "spm_mul() multiplies a SparseMat by a SparseMat, an array or a scalar, got " + t.str());
  }
  return Type::sparse(combined(c));
}

std::string emitTyped(const Call& c, llvm::ArrayRef<std::string> args) { return typed(c.callee.c_str(), c.type, args); }

/// spm_scale(S, x) is S * x for a scalar x.
Type spmScaleType(const Call& c, TypeRuleError& err) {
  Type s = expectSparse(c, 0, err);
  if (s.isUnknown()) return s;
  if (!c.args[1]->type.isScalar()) return fail(err, 1, "spm_scale() scales by a scalar, got " + c.args[1]->type.str());
  return Type::sparse(combined(c));
}

/// spmv(S, x): sparse matrix times a dense vector.
Type spmvType(const Call& c, TypeRuleError& err) {
  Type s = expectSparse(c, 0, err);
  if (s.isUnknown()) return s;
  const Type& x = c.args[1]->type;
  if (!x.isArray() || x.rank() != 1) return fail(err, 1, "spmv() multiplies by a 1-D array, got " + x.str());
  return Type::array(combined(c), 1);
}

/// spmm(A, B): sparse times sparse, a sparse result.
Type spmmType(const Call& c, TypeRuleError& err) {
  for (size_t i = 0; i < 2; ++i)
    if (expectSparse(c, i, err).isUnknown()) return Type();
  return Type::sparse(combined(c));
}

/// spmm_dense(S, D) or spmm_dense(D, S): a dense 2-D result.
Type spmmDenseType(const Call& c, TypeRuleError& err) {
  if (isSparse(c, 0) == isSparse(c, 1)) return fail(err, -1, "spmm_dense() multiplies a SparseMat and a dense 2-D array");
  size_t dense = isSparse(c, 0) ? 1 : 0;
  const Type& d = c.args[dense]->type;
  if (!d.isArray() || d.rank() != 2) return fail(err, static_cast<int>(dense), "spmm_dense() needs a dense 2-D array, got " + d.str());
  return Type::array(combined(c), 2);
}

// ---- iteration ------------------------------------------------------------------------

/// S.row(i) yields (column, value) pairs and S.nonzeros() (row, column,
/// value) triples; both only as the iterable of a for loop, which codegen
/// turns into a loop over the CSR arrays without building a list.
Type rowType(const Call& c, TypeRuleError& err) {
  Type s = expectSparse(c, 0, err);
  if (s.isUnknown()) return s;
  if (!c.args[1]->type.isInteger()) return fail(err, 1, "row() takes an integer row index");
  return Type::list(Type::tuple({Type::int64(), Type::scalar(s.elem())}));
}
Type nonzerosType(const Call& c, TypeRuleError& err) {
  Type s = expectSparse(c, 0, err);
  if (s.isUnknown()) return s;
  return Type::list(Type::tuple({Type::int64(), Type::int64(), Type::scalar(s.elem())}));
}
std::string emitIterationOnly(const Call& c, llvm::ArrayRef<std::string> args) {
  return std::string("pydd::sparse_") + c.callee + "_list(" + (args.size() > 1 ? args[0] + ", " + args[1] : args[0]) + ")";
}

// ---- the original Intrepydd's diagonal matrix and row/column accessors ---------------

/// spm_diags(v) / sparse_diags(v): a diagonal SparseMat from a 1-D array,
/// float64 (float32 kept), as scipy.sparse.diags(v).
Type diagsType(const Call& c, TypeRuleError& err) {
  const Type& v = c.args[0]->type;
  if (!v.isArray() || v.rank() != 1) return fail(err, 0, std::string(c.callee) + "() expects a 1-D array, got " + v.str());
  return Type::sparse(v.elem() == ScalarKind::Float32 ? ScalarKind::Float32 : ScalarKind::Float64);
}
std::string emitDiags(const Call& c, llvm::ArrayRef<std::string> args) {
  return std::string("pydd::spm_diags<") + cxxScalarType(c.type.elem()) + ">(" + args[0] + ")";
}

/// get_row(A, i) / get_col(A, j): a row or column of a dense 2-D array (a
/// view) or of a SparseMat (a new dense 1-D array).
Type rowColType(const Call& c, TypeRuleError& err) {
  const Type& a = c.args[0]->type;
  if (!a.isSparse() && !(a.isArray() && a.rank() == 2))
    return fail(err, 0, std::string(c.callee) + "() expects a 2-D array or a SparseMat, got " + a.str());
  if (!c.args[1]->type.isInteger()) return fail(err, 1, std::string(c.callee) + "() takes an integer index");
  return Type::array(a.elem(), 1);
}
std::string emitRowCol(const Call& c, llvm::ArrayRef<std::string> args) {
  return std::string("pydd::") + c.callee + "(" + args[0] + ", int64_t(" + args[1] + "))";
}

}  // namespace

void addSparseFunctions(std::vector<LibraryFunction>& out) {
  using C = LibraryCategory;
  out.push_back(entry("csr_to_spm", C::Sparse, {"values", "columns", "indexes", "ncols"}, 4,
                      "scipy.sparse.csr_matrix((values, columns, indexes))", csrToSpmType, emitCsrToSpm));
  LibraryFunction export_ = entry("spm_to_csr", C::Sparse, {"S", "values", "columns", "indexes"}, 4,
                                  "S.data, S.indices, S.indptr copied out", spmToCsrType,
                                  [](const Call&, llvm::ArrayRef<std::string> args) { return callText("pydd::spm_to_csr", args); });
  export_.writesArgs = 0b1110;
  out.push_back(export_);
  out.push_back(entry("empty_spm", C::Sparse, {"nrows", "ncols", "dtype"}, 2, "scipy.sparse.csr_matrix((nrows, ncols))",
                      emptySpmType, emitEmptySpm));
  for (const char* name : {"spm_set_item", "spm_set_item_unsafe"}) {
    LibraryFunction set = entry(name, C::Sparse, {"S", "value", "row", "col"}, 4, "S[row, col] = value", setItemType, emitSetItem);
    set.writesArgs = 1;
    out.push_back(set);
  }
  // How each function reaches the stored entries (SparseAccess), for the
  // passes and the emitter: row by row or all of them in CSR order.
  const auto access = [&](SparseAccess a) { out.back().sparseAccess = a; };
  out.push_back(entry("spm_with_values", C::Sparse, {"S", "values"}, 2,
                      "scipy.sparse.csr_matrix((values, S.indices, S.indptr), shape=S.shape)", withValuesType,
                      [](const Call&, llvm::ArrayRef<std::string> args) { return callText("pydd::spm_with_values", args); }));
  access(SparseAccess::NonZeros);
  out.push_back(entry("sampled_matmul", C::Sparse, {"S", "a", "b"}, 3, "(a @ b)[S.nonzero()], computed only there",
                      sampledMatmulType,
                      [](const Call&, llvm::ArrayRef<std::string> args) { return callText("pydd::sampled_matmul", args); }));
  access(SparseAccess::NonZeros);
  out.back().readsContiguous = 1u << 1 | 1u << (16 + 2);  // a's rows, b's columns
  out.push_back(entry("masked_spmm", C::Sparse, {"M", "a", "b", "mask_first"}, 4,
                      "M.multiply(a @ b) (or (a @ b).multiply(M)), computed at M's entries", maskedSpmmType,
                      [](const Call&, llvm::ArrayRef<std::string> args) { return callText("pydd::masked_spmm", args); }));
  access(SparseAccess::Rows);
  out.push_back(entry("spm_map", C::Sparse, {"S", "f"}, 2, "S with f applied to its stored values (SciPy's S.sqrt())",
                      spmMapType, emitSpmMap));
  access(SparseAccess::NonZeros);
  out.push_back(entry("toarray", C::Sparse, {"S"}, 1, "S.toarray()", toArrayType, emitToArray));
  access(SparseAccess::Rows);
  out.push_back(entry("nnz", C::Sparse, {"S"}, 1, "S.nnz", nnzType, emitNnz));
  out.push_back(entry("spm_add", C::Sparse, {"a", "b"}, 2, "a + b", spmAddType, emitTyped));
  access(SparseAccess::Rows);
  LibraryFunction mul = entry("spm_mul", C::Sparse, {"a", "b"}, 2, "a.multiply(b)", spmMulType, emitTyped);
  mul.keepsSparseStructure = true;
  mul.sparseAccess = SparseAccess::NonZeros;  // the result has one entry per stored entry at most
  out.push_back(mul);
  out.push_back(entry("spm_scale", C::Sparse, {"S", "x"}, 2, "S * x", spmScaleType, emitTyped));
  access(SparseAccess::NonZeros);
  out.push_back(entry("spmv", C::Sparse, {"S", "x"}, 2, "S @ x", spmvType, emitTyped));
  access(SparseAccess::Rows);
  // Reverse mode (frontend/Gradient.h): through the transpose; the
  // SparseMat's stored values are not differentiated.
  static const DerivativeRule kSpmvDerivative{nullptr, "spmv(transpose(a), g)"};
  out.back().derivative = &kSpmvDerivative;
  LibraryFunction spmm = entry("spmm", C::Sparse, {"a", "b"}, 2, "a @ b", spmmType, emitTyped);
  spmm.masked = "masked_spmm";
  spmm.sparseAccess = SparseAccess::Rows;
  out.push_back(spmm);
  out.push_back(entry("spmm_dense", C::Sparse, {"a", "b"}, 2, "a @ b (one dense)", spmmDenseType, emitTyped));
  access(SparseAccess::Rows);
  static const DerivativeRule kSpmmDenseDerivative{nullptr, nullptr, false, [](const Call& c, unsigned operand) {
    bool sparseFirst = c.args[0]->type.isSparse();
    if (operand == 0 && !sparseFirst) return std::string("spmm_dense(g, transpose(b))");
    if (operand == 1 && sparseFirst) return std::string("spmm_dense(transpose(a), g)");
    return std::string();
  }};
  out.back().derivative = &kSpmmDenseDerivative;
  out.back().transposedForm = "spmm_dense_t";  // of a dense a and a sparse b
  out.push_back(entry("spmm_dense_t", C::Sparse, {"Dt", "S"}, 2, "Dt.T @ S (spmm_dense given the dense operand's transpose)",
                      spmmDenseTType, emitTyped));
  access(SparseAccess::Rows);
  out.back().readsContiguous = 1u << 0;  // Dt's rows
  out.push_back(entry("row", C::Sparse, {"S", "i"}, 2, "zip(S.indices[p:q], S.data[p:q])", rowType, emitIterationOnly));
  access(SparseAccess::Rows);
  out.back().yieldsEntries = true;
  out.push_back(entry("nonzeros", C::Sparse, {"S"}, 1, "(r, c, v) in CSR order", nonzerosType, emitIterationOnly));
  access(SparseAccess::NonZeros);
  out.back().yieldsEntries = true;
  // The original Intrepydd's: a diagonal matrix from a vector, and rows and
  // columns of a dense matrix (views) or a sparse one (dense copies).
  for (const char* name : {"spm_diags", "sparse_diags"})
    out.push_back(entry(name, C::Sparse, {"v"}, 1, "scipy.sparse.diags(v).tocsr()", diagsType, emitDiags));
  for (const char* name : {"get_row", "get_col"}) {
    LibraryFunction f = entry(name, C::Sparse, {"A", "i"}, 2,
                              name == std::string("get_row") ? "A[i, :] (a view; of a SparseMat, a dense copy)"
                                                             : "A[:, i] (a view; of a SparseMat, a dense copy)",
                              rowColType, emitRowCol);
    f.returnsView = true;  // of a dense matrix; of a sparse one a conservative claim
    out.push_back(f);
  }
}

}  // namespace pydd::catalog
