#include "opt/SampledFusion.h"

#include <string>
#include <vector>

#include "ir/Builder.h"
#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/ElementTree.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// A leaf of the dense operand's tree, read once per stored entry.
struct Leaf {
  enum Kind { Array, Product } kind;
  ExprPtr* slot;  // where the leaf is in the tree (an array leaf is replaced by its temporary)
};

std::vector<ExprPtr> args(ExprPtr a, ExprPtr b = nullptr, ExprPtr c = nullptr, ExprPtr d = nullptr) {
  std::vector<ExprPtr> v;
  for (ExprPtr* x : {&a, &b, &c, &d})
    if (*x) v.push_back(std::move(*x));
  return v;
}

class Sampler {
 public:
  Sampler(Function& f, PassContext& ctx, SourceLoc loc) : F(f), Ctx(ctx), Loc(loc) {}

  /// When `slot` is a structure-keeping sparse product whose dense operand
  /// can be sampled, appends the statements computing it to `out` and
  /// leaves a variable holding the result in `slot`.
  bool sample(ExprPtr& slot, std::vector<StmtPtr>& out) {
    auto* call = dyn_cast<Call>(slot.get());
    // The consumer reaches S entry by entry: so can the sampled loop.
    if (!call || call->target != CallTarget::Library || !call->library->keepsSparseStructure ||
        call->library->sparseAccess != SparseAccess::NonZeros || call->args.size() != 2)
      return false;
    if (call->args[0]->type.isSparse() && call->args[1]->type.isSparse()) return mask(*call, slot, out);
    const int sparseArg = call->args[0]->type.isSparse() ? 0 : 1;
    ExprPtr& sparse = call->args[sparseArg];
    ExprPtr& dense = call->args[1 - sparseArg];
    if (!sparse->type.isSparse() || !dense->type.isArray() || dense->type.rank() > 2) return false;
    // A plain array operand is read at the stored positions already.
    if (!isElementwiseArrayCall(*dense) && !isProduct(*dense)) return false;
    if (!typesPerElement(*dense)) return false;

    // The operands in Python's order; each is computed before the statement
    // (into a temporary unless it is a variable).
    std::vector<ExprPtr*> operands;
    if (sparseArg == 0) operands.push_back(&sparse);
    if (!collectLeaves(dense, operands)) return false;
    if (sparseArg == 1) operands.push_back(&sparse);
    if (!movable(operands)) return false;

    // The value stored per entry: S's value times the tree's element, of
    // the product's result type.
    const Type resultType = call->type;
    const Type valueType = Type::scalar(sparse->type.elem());
    const Type elementType = Type::scalar(dense->type.elem());
    const LibraryFunction* mul = lookupLibraryFunction("mul");
    {
      Call probe(Loc, "mul");
      probe.target = CallTarget::Library;
      probe.library = mul;
      probe.args = args(build::var(Loc, "_", valueType), build::var(Loc, "_", elementType));
      TypeRuleError err;
      if (mul->resultType(probe, err) != Type::scalar(resultType.elem()) || !err.message.empty()) return false;
    }

    spillInOrder(operands, out);
    const std::string S = cast<VarRef>(*sparse).name;
    const Type sparseType = sparse->type;

    // rows, cols = S.shape; the run-time test that S's structure is the
    // result's and that every operand is read where the loop reads it.
    std::string rows = temp("rows", Type::int64()), cols = temp("cols", Type::int64());
    out.push_back(build::assign(Loc, var(rows, Type::int64()), shapeOf(var(S, sparseType), 0)));
    out.push_back(build::assign(Loc, var(cols, Type::int64()), shapeOf(var(S, sparseType), 1)));
    ExprPtr guard;
    for (const Leaf& l : Leaves) {
      const Expr& node = **l.slot;
      if (l.kind == Leaf::Product) {
        auto& p = cast<Call>(node);
        guard = andEq(std::move(guard), shapeOf(cloneExpr(*p.args[0]), 0), var(rows, Type::int64()));
        guard = andEq(std::move(guard), shapeOf(cloneExpr(*p.args[0]), 1), shapeOf(cloneExpr(*p.args[1]), 0));
        guard = andEq(std::move(guard), shapeOf(cloneExpr(*p.args[1]), 1), var(cols, Type::int64()));
      } else if (node.type.rank() == 2) {
        guard = andEq(std::move(guard), shapeOf(cloneExpr(node), 0), var(rows, Type::int64()));
        guard = andEq(std::move(guard), shapeOf(cloneExpr(node), 1), var(cols, Type::int64()));
      } else {
        guard = andEq(std::move(guard), shapeOf(cloneExpr(node), 0), var(cols, Type::int64()));
      }
    }

    // p = sampled_matmul(S, A, B) for each product A @ B;
    // vals = empty(nnz(S)); k = 0
    // for t in S.nonzeros(): vals[k] = t[2] * E(t[0], t[1], k); k += 1
    // result = spm_with_values(S, vals)
    const Type valsType = Type::array(resultType.elem(), 1);
    const Type entryType = Type::tuple({Type::int64(), Type::int64(), valueType});
    std::string vals = temp("vals", valsType), k = temp("k", Type::int64()), t = temp("t", entryType);
    std::string result = temp("sp", resultType);
    std::vector<StmtPtr> sampled;
    std::vector<std::pair<const Expr*, std::string>> productValues;
    for (const Leaf& l : Leaves) {
      if (l.kind != Leaf::Product) continue;
      auto& p = cast<Call>(**l.slot);
      const Type type = Type::array(p.type.elem(), 1);
      productValues.push_back({&p, temp("p", type)});
      sampled.push_back(build::assign(
          Loc, var(productValues.back().second, type),
          build::libraryCall(Loc, lookupLibraryFunction(p.library->sampled), p.library->sampled,
                             args(var(S, sparseType), cloneExpr(*p.args[0]), cloneExpr(*p.args[1])), type)));
    }
    auto entry = [&](int i, const Type& type) { return build::index(Loc, var(t, entryType), args(build::intLit(Loc, i)), type); };
    ExprPtr element = instantiateElement(*dense, [&](const Expr& leaf) -> ExprPtr {
      const Type type = Type::scalar(leaf.type.elem());
      for (auto& [product, values] : productValues)
        if (product == &leaf) return build::index(Loc, var(values, Type::array(type.elem(), 1)), args(var(k, Type::int64())), type);
      std::vector<ExprPtr> at;
      if (leaf.type.rank() == 2) at.push_back(entry(0, Type::int64()));
      at.push_back(entry(1, Type::int64()));
      return build::index(Loc, cloneExpr(leaf), std::move(at), type);
    });
    std::vector<StmtPtr> body;
    body.push_back(build::assign(Loc, build::index(Loc, var(vals, valsType), args(var(k, Type::int64())), Type::scalar(resultType.elem())),
                                 build::libraryCall(Loc, mul, "mul", args(entry(2, valueType), std::move(element)),
                                                    Type::scalar(resultType.elem()))));
    body.push_back(build::assign(Loc, var(k, Type::int64()),
                                 build::binary(Loc, BinaryOp::Add, var(k, Type::int64()), build::intLit(Loc, 1), Type::int64())));
    auto loop = std::make_unique<For>(Loc);
    loop->var = t;
    loop->varLoc = Loc;
    loop->isRange = false;
    const LibraryFunction* entries = entryIterator(SparseAccess::NonZeros);
    loop->iterable = build::libraryCall(Loc, entries, entries->name, args(var(S, sparseType)),
                                        Type::list(entryType));
    loop->body = build::block(Loc, std::move(body));

    auto dtype = std::make_unique<Cast>(Loc, Type::scalar(resultType.elem()), build::intLit(Loc, 0));
    sampled.push_back(build::assign(
        Loc, var(vals, valsType),
        build::libraryCall(Loc, lookupLibraryFunction("empty"), "empty",
                           args(build::libraryCall(Loc, lookupLibraryFunction("nnz"), "nnz", args(var(S, sparseType)), Type::int64()),
                                std::move(dtype)),
                           valsType)));
    sampled.push_back(build::assign(Loc, var(k, Type::int64()), build::intLit(Loc, 0)));
    sampled.push_back(std::move(loop));
    sampled.push_back(build::assign(Loc, var(result, resultType),
                                    build::libraryCall(Loc, lookupLibraryFunction("spm_with_values"), "spm_with_values",
                                                       args(var(S, sparseType), var(vals, valsType)), resultType)));

    // Otherwise the product as written (its operands already computed).
    std::vector<StmtPtr> general;
    general.push_back(build::assign(Loc, var(result, resultType), std::move(slot)));
    slot = var(result, resultType);

    if (!guard) guard = std::make_unique<BoolLit>(Loc, true), guard->type = Type::boolTy();
    out.push_back(build::ifThen(Loc, std::move(guard), std::move(sampled), std::move(general)));
    cast<If>(*out.back()).rareElse = true;
    ++Ctx.stats["sample: sparse products sampled"];
    for (const Leaf& l : Leaves) Ctx.stats["sample: products sampled"] += l.kind == Leaf::Product;
    return true;
  }

  /// `spm_mul(M, A @ B)` of SparseMats (either order) as the product's
  /// masked form, which computes A @ B only at M's entries.
  bool mask(Call& call, ExprPtr& slot, std::vector<StmtPtr>& out) {
    const int productArg = isMaskable(*call.args[0], call.type) ? 0 : isMaskable(*call.args[1], call.type) ? 1 : -1;
    if (productArg < 0 || call.args[1 - productArg]->type != call.type) return false;
    auto& product = cast<Call>(*call.args[productArg]);
    ExprPtr& M = call.args[1 - productArg];
    std::vector<ExprPtr*> operands;
    if (productArg == 1) operands.push_back(&M);
    for (auto& a : product.args) operands.push_back(&a);
    if (productArg == 0) operands.push_back(&M);
    if (!movable(operands)) return false;
    spillInOrder(operands, out);
    auto first = std::make_unique<BoolLit>(Loc, productArg == 1);
    first->type = Type::boolTy();
    const char* name = product.library->masked;
    slot = build::libraryCall(Loc, lookupLibraryFunction(name), name,
                              args(std::move(M), std::move(product.args[0]), std::move(product.args[1]), std::move(first)),
                              call.type);
    ++Ctx.stats["sample: sparse products masked"];
    return true;
  }

 private:
  /// Whether the operands (in Python's order) can all be computed before
  /// the statement: none has effects, and none after the first may raise,
  /// so no error moves before another.
  bool movable(const std::vector<ExprPtr*>& operands) const {
    for (size_t i = 0; i < operands.size(); ++i)
      if (hasSideEffects(**operands[i]) || (i > 0 && mayRaise(**operands[i], Ctx.options.boundsCheck))) return false;
    return true;
  }

  /// Computes each operand that is not a variable into a temporary, in order.
  void spillInOrder(const std::vector<ExprPtr*>& operands, std::vector<StmtPtr>& out) {
    for (ExprPtr* o : operands)
      if ((*o)->kind != ExprKind::Var) out.push_back(Ctx.spill(F, *o, (*o)->type.isSparse() ? "S" : "d"));
  }

  /// A product of two SparseMats of `type` with a masked form.
  static bool isMaskable(const Expr& e, const Type& type) {
    auto* c = dyn_cast<Call>(&e);
    return c && c->target == CallTarget::Library && c->library->masked && c->args.size() == 2 && c->type == type &&
           c->args[0]->type == type && c->args[1]->type == type;
  }

  /// A 2-D product of 2-D operands private:
  /// A 2-D product of 2-D operands of its own element type, whose catalog
  /// entry names the function computing it at a SparseMat's entries.
  static bool isProduct(const Expr& e) {
    auto* c = dyn_cast<Call>(&e);
    if (!c || c->target != CallTarget::Library || !c->library->sampled || c->args.size() != 2) return false;
    if (!c->type.isArray() || c->type.rank() != 2) return false;
    for (auto& a : c->args)
      if (!a->type.isArray() || a->type.rank() != 2 || a->type.elem() != c->type.elem()) return false;
    return true;
  }

  /// Records the tree's leaves (Leaves) and the operands evaluated before
  /// the loop (in Python's order); false for a leaf the loop cannot read.
  bool collectLeaves(ExprPtr& e, std::vector<ExprPtr*>& operands) {
    if (isElementwiseArrayCall(*e)) {
      for (auto& a : cast<Call>(*e).args)
        if (!collectLeaves(a, operands)) return false;
      return true;
    }
    if (isLiteral(*e)) return true;
    if (e->type.isScalar()) {
      operands.push_back(&e);
      return true;
    }
    if (isProduct(*e)) {
      for (auto& a : cast<Call>(*e).args) operands.push_back(&a);
      Leaves.push_back({Leaf::Product, &e});
      return true;
    }
    if (!e->type.isArray() || e->type.rank() > 2) return false;
    operands.push_back(&e);
    Leaves.push_back({Leaf::Array, &e});
    return true;
  }

  ExprPtr var(const std::string& name, const Type& t) { return build::var(Loc, name, t); }

  std::string temp(const std::string& hint, const Type& t) {
    return Ctx.newLocal(F, hint, t, Loc);
  }

  ExprPtr shapeOf(ExprPtr of, int k) {
    return build::libraryCall(Loc, lookupLibraryFunction("shape"), "shape", args(std::move(of), build::intLit(Loc, k)),
                              Type::int64());
  }

  ExprPtr andEq(ExprPtr guard, ExprPtr a, ExprPtr b) {
    return build::logicalAnd(Loc, std::move(guard), build::compare(Loc, CmpOp::Eq, std::move(a), std::move(b)));
  }

  Function& F;
  PassContext& Ctx;
  SourceLoc Loc;
  std::vector<Leaf> Leaves;
};

class SampleStatements : public StmtMutator {
 public:
  SampleStatements(Function& f, PassContext& ctx) : F(f), Ctx(ctx) {}

  std::vector<StmtPtr> mutateStmt(StmtPtr s) override {
    if (ExprPtr* slot = firstEvaluated(*s)) {
      std::vector<StmtPtr> out;
      Sampler sampler(F, Ctx, s->loc);
      if (sampler.sample(*slot, out)) {
        out.push_back(std::move(s));
        return out;
      }
    }
    return StmtMutator::mutateStmt(std::move(s));
  }

 private:
  /// The call a statement evaluates first: its value, or that value's
  /// first argument, recursively.
  static ExprPtr* firstEvaluated(Stmt& s) {
    ExprPtr* slot = nullptr;
    if (auto* a = dyn_cast<Assign>(&s); a && a->value) slot = &a->value;
    if (auto* x = dyn_cast<ExprStmt>(&s)) slot = &x->expr;
    if (auto* r = dyn_cast<Return>(&s); r && r->value) slot = &r->value;
    while (slot) {
      auto* c = dyn_cast<Call>(slot->get());
      if (!c) return nullptr;
      if (c->target == CallTarget::Library && c->library->keepsSparseStructure) return slot;
      slot = c->args.empty() ? nullptr : &c->args[0];
    }
    return nullptr;
  }

  Function& F;
  PassContext& Ctx;
};

}  // namespace

void sampleSparseProducts(Function& f, PassContext& context) {
  SampleStatements sample(f, context);
  sample.mutateBlock(*f.body);
}

}  // namespace pydd
