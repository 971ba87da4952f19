#include "opt/FilterLoops.h"

#include <set>
#include <string>
#include <vector>

#include "ir/Builder.h"
#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/ElementTree.h"
#include "opt/Loops.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// `where(c)` with one 1-D argument: the indices of c's non-zero elements.
const Expr* nonzeroIndicesArgument(const Expr& e) {
  auto* c = dyn_cast<Call>(&e);
  if (!c || c->target != CallTarget::Library || !c->library->nonzeroIndices || c->args.size() != 1) return nullptr;
  const Type& t = c->args[0]->type;
  return t.isArray() && t.rank() == 1 ? c->args[0].get() : nullptr;
}

/// What a filter tree reads: its one array operand (every array leaf reads
/// the same one) and its non-literal scalar leaves, in evaluation order.
struct Leaves {
  std::vector<ExprPtr*> arrays, scalars;
  std::vector<ExprPtr*> order;  // arrays and scalars as evaluated
};

/// Collects the leaves of `c`; false when `c` is not a tree the loop can
/// compute one element at a time (see the header).
bool collectLeaves(ExprPtr& e, Leaves& leaves) {
  if (isElementwiseArrayCall(*e)) {
    auto& call = cast<Call>(*e);
    const ElementRule& rule = *call.library->element;
    if (rule.raisesOnIntegers && isIntegerKind(call.type.elem())) return false;
    for (auto& a : call.args)
      if (!collectLeaves(a, leaves)) return false;
    return true;
  }
  if (isLiteral(*e)) return true;
  if (e->type.isScalar()) {
    leaves.scalars.push_back(&e);
    leaves.order.push_back(&e);
    return true;
  }
  if (!e->type.isArray() || e->type.rank() != 1) return false;
  if (!leaves.arrays.empty() && !sameArrayLeaf(**leaves.arrays.front(), *e)) return false;
  leaves.arrays.push_back(&e);
  if (leaves.arrays.size() == 1) leaves.order.push_back(&e);
  return true;
}

class Filter {
 public:
  Filter(Function& f, PassContext& ctx) : F(f), Ctx(ctx) { Counts.count(*f.body); }

  void block(Block& b) {
    for (auto& s : b.stmts)
      forEachPart(*s, [](ExprPtr&) {}, [&](Block& inner) { block(inner); });
    for (size_t i = 0; i < b.stmts.size(); ++i) {
      auto* loop = dyn_cast<For>(b.stmts[i].get());
      if (!loop || loop->isRange || loop->parallel || !loop->iterable) continue;
      if (nonzeroIndicesArgument(*loop->iterable)) {
        // `for v in where(c)`: c is evaluated where the loop starts.
        std::vector<StmtPtr> before;
        if (!rewrite(*loop, loop->iterable, before, {})) continue;
        b.stmts.insert(b.stmts.begin() + static_cast<std::ptrdiff_t>(i), std::make_move_iterator(before.begin()),
                       std::make_move_iterator(before.end()));
        i += before.size();
        continue;
      }
      // `t = where(c)` earlier in the block, t used only here.
      auto* t = dyn_cast<VarRef>(loop->iterable.get());
      if (!t || Counts.binds[t->name] != 1 || Counts.reads[t->name] != 1) continue;
      for (size_t d = i; d-- > 0;) {
        auto* def = dyn_cast<Assign>(b.stmts[d].get());
        if (!def || def->targets.size() != 1 || def->targets[0]->kind != ExprKind::Var ||
            cast<VarRef>(*def->targets[0]).name != t->name)
          continue;
        if (!def->value || !nonzeroIndicesArgument(*def->value)) break;
        std::vector<const Stmt*> between;
        for (size_t k = d + 1; k < i; ++k) between.push_back(b.stmts[k].get());
        std::vector<StmtPtr> evaluated;
        if (!rewrite(*loop, def->value, evaluated, between)) break;
        // The def becomes the evaluation of the tree's operands.
        b.stmts.erase(b.stmts.begin() + static_cast<std::ptrdiff_t>(d));
        b.stmts.insert(b.stmts.begin() + static_cast<std::ptrdiff_t>(d), std::make_move_iterator(evaluated.begin()),
                       std::make_move_iterator(evaluated.end()));
        i += evaluated.size() - 1;
        break;
      }
    }
  }

 private:
  /// Rewrites `loop` over `where(c)` (held in `indices`) into the filtered
  /// range loop, appending to `before` what evaluates c's operands where
  /// `where` ran. `between`: the statements that run after that point and
  /// before the loop. False (nothing changed) when it may not.
  bool rewrite(For& loop, ExprPtr& indices, std::vector<StmtPtr>& before, const std::vector<const Stmt*>& between) {
    ExprPtr& cond = cast<Call>(*indices).args[0];
    const Type elem = Type::scalar(cond->type.elem());
    if (elem.isComplex() || !typesPerElement(*cond)) return false;
    Leaves leaves;
    if (!collectLeaves(cond, leaves) || leaves.arrays.empty()) return false;
    const std::string key = memoryKey((*leaves.arrays.front())->type);
    auto writesOperand = [&](const Stmt& s) {
      std::set<std::string> written = writtenElementTypes(s);
      return written.count(key) || written.count("*");
    };
    for (const Stmt* s : between)
      if (writesOperand(*s)) return false;
    if (writesOperand(loop)) return false;

    // The operands, into temporaries nothing else assigns, in order.
    SourceLoc loc = indices->loc;
    std::string array;
    for (ExprPtr* leaf : leaves.order) {
      const bool isArray = (*leaf)->type.isArray();
      before.push_back(Ctx.spill(F, *leaf, isArray ? "c" : "s"));
      if (isArray) array = cast<VarRef>(**leaf).name;
    }
    const Type arrayType = (*leaves.arrays.front())->type;
    for (ExprPtr* leaf : leaves.arrays) *leaf = build::var(loc, array, arrayType);

    // for j in range(len(c)): if c[j]: v = j; body
    std::string j = Ctx.newLocal(F, "j", Type::int64(), loc);
    ExprPtr element = instantiateElement(*cond, [&](const Expr& leaf) {
      std::vector<ExprPtr> at;
      at.push_back(build::var(loc, j, Type::int64()));
      return build::index(leaf.loc, build::var(loc, array, arrayType), std::move(at), Type::scalar(leaf.type.elem()));
    });
    ExprPtr test = std::make_unique<Cast>(loc, Type::boolTy(), std::move(element));
    const Type varType = F.lookup(loop.var) ? *F.lookup(loop.var) : Type::int64();
    std::vector<StmtPtr> taken;
    taken.push_back(build::assign(loop.varLoc, build::var(loop.varLoc, loop.var, varType), build::var(loc, j, Type::int64())));
    for (auto& s : loop.body->stmts) taken.push_back(std::move(s));
    loop.body->stmts.clear();
    loop.body->stmts.push_back(build::ifThen(loc, std::move(test), std::move(taken)));
    loop.isRange = true;
    loop.var = j;
    loop.start = build::intLit(loc, 0);
    loop.stop = shapeQuery(loc, build::var(loc, array, arrayType), 0);
    loop.step = build::intLit(loc, 1);
    loop.iterable.reset();
    loop.testsFirst = true;  // the test reads only the operand, which the loop does not write
    ++Ctx.stats["filter: loops filtered"];
    return true;
  }

  Function& F;
  PassContext& Ctx;
  VarCounts Counts;
};

}  // namespace

void filterWhereLoops(Function& f, PassContext& context) {
  Filter(f, context).block(*f.body);
}

}  // namespace pydd
