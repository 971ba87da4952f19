#include "opt/SparseLayout.h"

#include <set>
#include <string>

#include "ir/Builder.h"
#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/ElementTree.h"
#include "opt/Loops.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

bool isLibraryCall(const Expr& e, const LibraryFunction* fn) {
  auto* c = dyn_cast<Call>(&e);
  return c && c->target == CallTarget::Library && c->library == fn;
}

/// A new array that nothing else refers to when it is assigned: an
/// allocation, an element-wise result, a catalog function's new array.
bool freshArray(const Expr& e) {
  auto* c = dyn_cast<Call>(&e);
  if (!c || c->target != CallTarget::Library || !e.type.isArray()) return false;
  return c->library->returnsNew || c->library->newArray != LibraryFunction::NewArray::No || isElementwiseArrayCall(e);
}

/// The memory keys (opt/Effects.h) a loop may write, except the element
/// stores into arrays the same iteration allocated: `vals = empty(n)`
/// followed by `vals[k] = ...` writes no array that existed before the
/// iteration. A variable counts as holding such an array from its
/// assignment of a fresh array on, in that block and the blocks nested in
/// it, until it is assigned anything else; a nested loop's body starts
/// without the variables that loop assigns (one of its iterations may see
/// what the previous one assigned).
class WrittenOutsideFresh {
 public:
  std::set<std::string> keys;

  explicit WrittenOutsideFresh(const Stmt& loop) {
    forEachPart(loop, [&](const Expr& e) { callWrites(e); }, [&](const Block& b) { walk(b, {}); });
  }

 private:
  void callWrites(const Expr& e) {
    if (auto* c = dyn_cast<Call>(&e)) {
      if (c->target != CallTarget::Library) keys.insert("*");
      else if (c->library)
        for (size_t i = 0; i < c->args.size() && i < 32; ++i)
          if (c->library->writesArgs & (1u << i)) keys.insert(memoryKey(c->args[i]->type));
    }
    forEachChild(e, [&](const Expr& child) { callWrites(child); });
  }

  void walk(const Block& b, std::set<std::string> fresh) {
    for (auto& s : b.stmts) {
      if (auto* a = dyn_cast<Assign>(s.get())) {
        if (a->value) callWrites(*a->value);
        for (auto& t : a->targets) {
          if (auto* x = dyn_cast<Index>(t.get())) {
            for (auto& i : x->indices) callWrites(*i);
            auto* base = dyn_cast<VarRef>(x->base.get());
            if (!base || !fresh.count(base->name)) keys.insert(memoryKey(x->base->type));
          }
          if (a->augmented && t->type.isArray()) keys.insert(memoryKey(t->type));
        }
        auto* v = a->targets.size() == 1 ? dyn_cast<VarRef>(a->targets[0].get()) : nullptr;
        if (v && a->value && !a->augmented && freshArray(*a->value)) {
          fresh.insert(v->name);
        } else {
          for (auto& t : a->targets)
            if (auto* tv = dyn_cast<VarRef>(t.get())) fresh.erase(tv->name);
        }
        continue;
      }
      std::set<std::string> assigned = assignedVars(*s), inner = fresh;
      for (auto& n : assigned) inner.erase(n);
      forEachPart(*s, [&](const Expr& e) { callWrites(e); }, [&](const Block& nested) { walk(nested, inner); });
      for (auto& n : assigned) fresh.erase(n);
    }
  }
};

/// The layout conversions of one loop's products, computed before it.
class LoopLayouts : public Mutator {
 public:
  LoopLayouts(Function& f, PassContext& ctx, const Stmt& loop)
      : F(f), Ctx(ctx), Assigned(assignedVars(loop)), Written(WrittenOutsideFresh(loop).keys) {}

  std::vector<StmtPtr> hoisted;

  ExprPtr mutate(ExprPtr e) override {
    mutateChildren(*e);
    auto* c = dyn_cast<Call>(e.get());
    if (!c || c->target != CallTarget::Library) return e;
    const LibraryFunction& fn = *c->library;
    if (fn.transposedForm && c->args.size() == 2 && isDense2D(*c->args[0]) && c->args[1]->type.isSparse() &&
        invariantOperand(*c->args[0])) {
      const LibraryFunction* t = lookupLibraryFunction(fn.transposedForm);
      SourceLoc loc = c->loc;
      std::vector<ExprPtr> args;
      args.push_back(hoist(transposed(std::move(c->args[0]))));
      args.push_back(std::move(c->args[1]));
      ++Ctx.stats["layout: dense @ sparse products given the transposed operand"];
      return build::libraryCall(loc, t, t->name, std::move(args), c->type);
    }
    for (unsigned i = 0; i < c->args.size() && i < 16; ++i) {
      ExprPtr& a = c->args[i];
      const bool rows = fn.readsContiguous & (1u << i), columns = fn.readsContiguous & (1u << (16 + i));
      if ((!rows && !columns) || !isDense2D(*a) || !invariantOperand(*a)) continue;
      a = rows ? hoist(std::move(a)) : transposed(hoist(transposed(std::move(a))));
      ++Ctx.stats["layout: operands made contiguous"];
    }
    return e;
  }

 private:
  static bool isDense2D(const Expr& e) { return e.type.isArray() && e.type.rank() == 2; }

  /// A variable the loop does not assign, whose memory the loop writes no
  /// part of (stores into arrays an iteration allocates aside), or a
  /// transposed view of one: every iteration reads the same values.
  bool invariantOperand(const Expr& e) const {
    if (auto* v = dyn_cast<VarRef>(&e))
      return !Assigned.count(v->name) && !Written.count("*") && !Written.count(memoryKey(v->type));
    return isLibraryCall(e, Transpose) && invariantOperand(*cast<Call>(e).args[0]);
  }

  /// `layout__N = ascontiguousarray(a)` before the loop; its variable here.
  ExprPtr hoist(ExprPtr a) {
    SourceLoc loc = a->loc;
    Type t = a->type;
    std::vector<ExprPtr> args;
    args.push_back(std::move(a));
    ExprPtr copy = build::libraryCall(loc, Contiguous, "ascontiguousarray", std::move(args), t);
    hoisted.push_back(Ctx.spill(F, copy, "layout"));
    return copy;
  }
  ExprPtr transposed(ExprPtr a) {
    // transpose(transpose(x)) is x (a view of a view of the same buffer).
    if (isLibraryCall(*a, Transpose)) return std::move(cast<Call>(*a).args[0]);
    SourceLoc loc = a->loc;
    Type t = a->type;
    std::vector<ExprPtr> args;
    args.push_back(std::move(a));
    return build::libraryCall(loc, Transpose, "transpose", std::move(args), t);
  }

  Function& F;
  PassContext& Ctx;
  std::set<std::string> Assigned, Written;
  const LibraryFunction* Transpose = lookupLibraryFunction("transpose");
  const LibraryFunction* Contiguous = lookupLibraryFunction("ascontiguousarray");
};

/// Rewrites the expressions of a loop body that no inner loop holds (the
/// inner loops were handled first, with their own facts).
void rewriteOutsideInnerLoops(Block& b, LoopLayouts& layouts) {
  struct Walk : StmtMutator {
    LoopLayouts& L;
    explicit Walk(LoopLayouts& l) : L(l) {}
    ExprPtr mutate(ExprPtr e) override { return L.mutate(std::move(e)); }
    std::vector<StmtPtr> mutateStmt(StmtPtr s) override {
      if (s->kind != StmtKind::For && s->kind != StmtKind::While) mutateChildren(*s);
      std::vector<StmtPtr> out;
      out.push_back(std::move(s));
      return out;
    }
  } walk(layouts);
  walk.mutateBlock(b);
}

class LoopWalker : public StmtMutator {
 public:
  LoopWalker(Function& f, PassContext& ctx) : F(f), Ctx(ctx) {}

  std::vector<StmtPtr> mutateStmt(StmtPtr s) override {
    mutateChildren(*s);  // inner loops first
    std::vector<StmtPtr> out;
    if (s->kind != StmtKind::For && s->kind != StmtKind::While) {
      out.push_back(std::move(s));
      return out;
    }
    LoopLayouts layouts(F, Ctx, *s);
    rewriteOutsideInnerLoops(*(s->kind == StmtKind::For ? cast<For>(*s).body : cast<While>(*s).body), layouts);
    if (layouts.hoisted.empty()) {
      out.push_back(std::move(s));
      return out;
    }
    // The copies never raise, but need not be made for a loop that does
    // not run: behind the loop's entry test when it has one.
    ExprPtr guard = loopEntryTest(*s, Ctx.options.boundsCheck);
    appendGuardedLoop(out, std::move(guard), std::move(layouts.hoisted), std::move(s));
    return out;
  }

 private:
  Function& F;
  PassContext& Ctx;
};

}  // namespace

void exposeSparseLayouts(Function& f, PassContext& context) {
  LoopWalker walk(f, context);
  walk.mutateBlock(*f.body);
}

}  // namespace pydd
