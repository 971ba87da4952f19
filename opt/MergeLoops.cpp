#include "opt/MergeLoops.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/Builder.h"
#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

bool isLibraryCall(const Expr& e, const char* name) {
  auto* c = dyn_cast<Call>(&e);
  return c && c->target == CallTarget::Library && c->library == lookupLibraryFunction(name);
}

/// A fused element-wise nest: `for v0 in range(0, n0, 1): for v1 in ...:
/// <body>`, whose innermost body stores array elements at exactly
/// [v0, v1, ...] (and, once merged, assigns scalars).
struct Nest {
  For* outer = nullptr;
  std::vector<const For*> levels;
  Block* body = nullptr;
  std::vector<std::string> vars;
  std::set<std::string> stored;  // arrays whose elements the body stores
};

bool fromZeroByOne(const For& f) {
  auto* start = dyn_cast<IntLit>(f.start.get());
  auto* step = dyn_cast<IntLit>(f.step.get());
  return f.isRange && !f.parallel && start && start->value == 0 && step && step->value == 1;
}

/// Whether `e` is `name[vars...]`, the element of the current iteration.
bool isCurrentElement(const Expr& e, const std::vector<std::string>& vars) {
  auto* x = dyn_cast<Index>(&e);
  if (!x || x->indices.size() != vars.size() || !x->type.isScalar() || x->base->kind != ExprKind::Var) return false;
  for (size_t k = 0; k < vars.size(); ++k) {
    auto* v = dyn_cast<VarRef>(x->indices[k].get());
    if (!v || v->name != vars[k]) return false;
  }
  return true;
}

std::optional<Nest> fusedNest(Stmt& s) {
  auto* f = dyn_cast<For>(&s);
  if (!f || !f->independent || f->elementsPerIteration != 0 || !f->foldsInto.empty()) return std::nullopt;
  Nest n;
  n.outer = f;
  for (For* l = f;;) {
    if (!fromZeroByOne(*l)) return std::nullopt;
    n.levels.push_back(l);
    n.vars.push_back(l->var);
    auto* inner = l->body->stmts.size() == 1 ? dyn_cast<For>(l->body->stmts[0].get()) : nullptr;
    if (!inner) {
      n.body = l->body.get();
      break;
    }
    l = inner;
  }
  for (auto& st : n.body->stmts) {
    auto* a = dyn_cast<Assign>(st.get());
    if (!a || a->targets.size() != 1 || !a->value || hasSideEffects(*a->value)) return std::nullopt;
    const Expr& t = *a->targets[0];
    if (t.kind == ExprKind::Var && t.type.isScalar()) continue;
    if (!isCurrentElement(t, n.vars) || cast<Index>(t).base->type.rank() != static_cast<int>(n.vars.size()))
      return std::nullopt;
    n.stored.insert(cast<VarRef>(*cast<Index>(t).base).name);
  }
  return n;
}

/// `x = empty(dims, dtype)`, fusion's allocation of its result: x's name.
std::optional<std::string> allocatedArray(const Stmt& s) {
  auto* a = dyn_cast<Assign>(&s);
  if (!a || a->targets.size() != 1 || !a->value || a->targets[0]->kind != ExprKind::Var) return std::nullopt;
  if (!isLibraryCall(*a->value, "empty")) return std::nullopt;
  return cast<VarRef>(*a->targets[0]).name;
}

/// What each integer and array extent of a block is, in terms of the
/// values variables held when the block began (`shape(a,0)`, `n`, `#3`):
/// a variable the block assigns stands for the terms of its value as
/// assigned, or for nothing known. Two equal terms are equal integers.
struct Window {
  std::map<std::string, std::string> ints;                 // int variable -> term
  std::map<std::string, std::vector<std::string>> shapes;  // array variable -> term per axis ("" unknown)
  std::set<std::string> assigned;
  unsigned Definitions = 0;

  /// Follows the statement `s`, which runs next.
  void define(const Stmt& s) {
    auto* a = dyn_cast<Assign>(&s);
    if (!a || a->targets.size() != 1 || !a->value || a->targets[0]->kind != ExprKind::Var) {
      for (auto& name : assignedVars(s)) {
        ints.erase(name);
        shapes.erase(name);
        assigned.insert(name);
      }
      return;
    }
    const std::string name = cast<VarRef>(*a->targets[0]).name;
    const Expr& v = *a->value;
    // The value's terms first: `n = n + 1` reads the old n.
    std::optional<std::string> intTerm;
    std::vector<std::string> dims;
    if (v.type.isInteger() && v.type.isScalar()) intTerm = term(v);
    if (v.type.isArray()) dims = arrayTerms(v);
    ints.erase(name);
    shapes.erase(name);
    assigned.insert(name);
    // A value with no known terms gets its own: equal only to copies.
    const std::string opaque = name + "@" + std::to_string(++Definitions);
    if (v.type.isInteger() && v.type.isScalar()) ints[name] = intTerm.value_or(opaque);
    for (size_t k = 0; k < dims.size(); ++k)
      if (dims[k].empty()) dims[k] = opaque + "," + std::to_string(k);
    if (v.type.isArray()) shapes[name] = std::move(dims);
  }

  /// The terms of an array value's extents ("" unknown).
  std::vector<std::string> arrayTerms(const Expr& v) const {
    std::vector<std::string> dims(static_cast<size_t>(v.type.rank()));
    {
      if (isLibraryCall(v, "empty")) {
        const Expr& shape = *cast<Call>(v).args[0];
        auto* tuple = dyn_cast<TupleLit>(&shape);
        for (size_t k = 0; k < dims.size(); ++k) {
          const Expr* d = tuple ? (k < tuple->elems.size() ? tuple->elems[k].get() : nullptr) : (k == 0 ? &shape : nullptr);
          if (d && d->type.isInteger() && d->type.isScalar()) dims[k] = term(*d).value_or("");
        }
      } else if (auto* src = dyn_cast<VarRef>(&v)) {
        for (size_t k = 0; k < dims.size(); ++k) dims[k] = shapeTerm(src->name, static_cast<int>(k)).value_or("");
      }
    }
    return dims;
  }

  std::optional<std::string> term(const Expr& e) const {
    if (auto* l = dyn_cast<IntLit>(&e)) return "#" + std::to_string(l->value);
    if (auto* v = dyn_cast<VarRef>(&e)) {
      if (!assigned.count(v->name)) return v->name;
      auto it = ints.find(v->name);
      if (it == ints.end()) return std::nullopt;
      return it->second;
    }
    if (isLibraryCall(e, "shape")) {
      auto& c = cast<Call>(e);
      auto* base = c.args.size() == 2 ? dyn_cast<VarRef>(c.args[0].get()) : nullptr;
      auto* axis = c.args.size() == 2 ? dyn_cast<IntLit>(c.args[1].get()) : nullptr;
      if (base && axis) return shapeTerm(base->name, static_cast<int>(axis->value));
    }
    return std::nullopt;
  }

  std::optional<std::string> shapeTerm(const std::string& array, int axis) const {
    if (!assigned.count(array)) return "shape(" + array + "," + std::to_string(axis) + ")";
    auto it = shapes.find(array);
    if (it == shapes.end() || axis < 0 || static_cast<size_t>(axis) >= it->second.size() || it->second[axis].empty())
      return std::nullopt;
    return it->second[axis];
  }
};

class Merger {
 public:
  Merger(Function& f, PassContext& ctx) : F(f), Ctx(ctx) { FunctionCounts.count(*f.body); }

  void block(Block& b) {
    for (auto& s : b.stmts)
      forEachPart(*s, [](ExprPtr&) {}, [&](Block& inner) { block(inner); });
    Window w;
    for (size_t i = 0; i < b.stmts.size(); ++i) {
      auto nest = fusedNest(*b.stmts[i]);
      if (nest && i > 0 && nest->stored.size() == 1 && allocatedArray(*b.stmts[i - 1]) == *nest->stored.begin() &&
          ownsLoopVars(*nest)) {
        i = grow(b, i, std::move(*nest), w);
        continue;
      }
      w.define(*b.stmts[i]);
    }
  }

  /// Replaces arrays that only the merged loops' bodies refer to by scalars.
  void contract(Block& top) {
    FunctionCounts = VarCounts();
    FunctionCounts.count(top);
    for (auto& [name, nest] : Contractible) {
      VarCounts inBody;
      for (auto& s : nest->body->stmts) inBody.count(*s);
      if (FunctionCounts.binds[name] != 1 || inBody.reads[name] != FunctionCounts.reads[name]) continue;
      scalarize(name, *nest, top);
    }
  }

 private:
  /// Extends the run of loops headed by the nest at `head` (its array
  /// allocated just before it) with the loops after it; returns the index
  /// of the last statement it looked at, which `w` then describes.
  size_t grow(Block& b, size_t head, Nest nest, Window& w) {
    std::vector<std::string> stops = stopTerms(nest, w);
    w.define(*b.stmts[head]);
    if (stops.empty() || !shapedLikeLoop(*nest.stored.begin(), stops, w)) return head;
    std::set<std::string> refs = referencedVars(*nest.outer);
    std::set<std::string> stored = nest.stored;
    std::map<std::string, std::string> renamed;  // a -> w for a statement `a = w` left in place
    std::vector<const Stmt*> renames;
    std::vector<size_t> moved;                   // statements between loops that move above the head
    Heads.push_back(std::make_unique<Nest>(std::move(nest)));
    Nest& merged = *Heads.back();
    bool mergedAny = false;

    size_t i = head + 1;
    for (; i < b.stmts.size(); ++i) {
      Stmt& s = *b.stmts[i];
      if (auto second = fusedNest(s); second && second->stored.size() == 1 && !moved.empty() &&
                                      moved.back() == i - 1 && allocatedArray(*b.stmts[i - 1]) == *second->stored.begin() &&
                                      ownsLoopVars(*second)) {
        renameVars(*second->outer, renamed);  // a = w left in place: read w
        if (stopTerms(*second, w) != stops || !shapedLikeLoop(*second->stored.begin(), stops, w) ||
            !readsOnlyCurrentElements(*second, stored))
          break;
        w.define(s);
        // Append the loop's body, with the head's loop variables.
        std::map<std::string, std::string> vars;
        for (size_t k = 0; k < second->vars.size(); ++k) vars[second->vars[k]] = merged.vars[k];
        for (auto& st : second->body->stmts) {
          renameVars(*st, vars);
          merged.body->stmts.push_back(std::move(st));
        }
        for (auto& r : referencedVars(*merged.body)) refs.insert(r);
        stored.insert(*second->stored.begin());
        // The moved statements lie between the head and this loop, so the
        // loop keeps its index; what follows it comes next.
        hoist(b, head, moved);
        b.stmts.erase(b.stmts.begin() + static_cast<std::ptrdiff_t>(i));
        head += moved.size();
        --i;
        moved.clear();
        mergedAny = true;
        ++Ctx.stats["merge: loops merged"];
        continue;
      }
      auto* a = dyn_cast<Assign>(&s);
      if (!a || a->targets.size() != 1 || !a->value || a->targets[0]->kind != ExprKind::Var) break;
      const std::string target = cast<VarRef>(*a->targets[0]).name;
      if (stored.count(target) || renamed.count(target)) break;
      // `a = w` of an array a loop wrote: left in place (the loops may read
      // the old a); later code reads w.
      if (auto* v = dyn_cast<VarRef>(a->value.get()); v && stored.count(v->name)) {
        renamed[target] = v->name;
        renames.push_back(&s);
        w.define(s);
        continue;
      }
      if (refs.count(target)) break;
      renameVars(s, renamed);
      if (hasSideEffects(*a->value) || readsElementsOf(*a->value, stored)) break;
      replaceExtents(a->value, stored, merged);
      w.define(s);
      moved.push_back(i);
    }
    if (mergedAny)
      for (auto& name : stored) Contractible[name] = &merged;
    return i - 1 - removeDeadRenames(b, renames, i);
  }

  /// Removes the renamings `a = w` left in place whose a nothing reads
  /// after them, in the function's own block (in a loop, the next
  /// iteration could read a before the renaming): w, no longer read there,
  /// may then become a scalar. Returns how many of those before `end` went.
  size_t removeDeadRenames(Block& b, const std::vector<const Stmt*>& renames, size_t end) {
    if (&b != F.body.get()) return 0;
    size_t removed = 0;
    for (auto* r : renames) {
      size_t p = 0;
      while (p < b.stmts.size() && b.stmts[p].get() != r) ++p;
      if (p == b.stmts.size()) continue;
      const std::string& name = cast<VarRef>(*cast<Assign>(*r).targets[0]).name;
      VarCounts after;
      for (size_t k = p + 1; k < b.stmts.size(); ++k) after.count(*b.stmts[k]);
      if (after.reads[name] != 0) continue;
      b.stmts.erase(b.stmts.begin() + static_cast<std::ptrdiff_t>(p));
      if (p < end) ++removed;
    }
    return removed;
  }

  /// Moves the statements at `moved` (indices after `head`, ascending)
  /// above the statement at `head`, in their order.
  static void hoist(Block& b, size_t head, const std::vector<size_t>& moved) {
    std::vector<StmtPtr> taken;
    for (size_t k = moved.size(); k-- > 0;) {
      taken.insert(taken.begin(), std::move(b.stmts[moved[k]]));
      b.stmts.erase(b.stmts.begin() + static_cast<std::ptrdiff_t>(moved[k]));
    }
    b.stmts.insert(b.stmts.begin() + static_cast<std::ptrdiff_t>(head), std::make_move_iterator(taken.begin()),
                   std::make_move_iterator(taken.end()));
  }

  /// Whether the array's extents are the loop's trip counts.
  static bool shapedLikeLoop(const std::string& array, const std::vector<std::string>& stops, const Window& w) {
    for (size_t k = 0; k < stops.size(); ++k)
      if (w.shapeTerm(array, static_cast<int>(k)) != stops[k]) return false;
    return true;
  }

  /// Replaces `shape(a, k)` of an array the loops write by the merged
  /// loop's trip count k, which equals it (shapedLikeLoop) and, read only
  /// by the loop, has one value throughout the run: what lets an array that
  /// only the loop reads become a scalar.
  static void replaceExtents(ExprPtr& e, const std::set<std::string>& stored, const Nest& merged) {
    if (isLibraryCall(*e, "shape")) {
      auto& c = cast<Call>(*e);
      auto* base = dyn_cast<VarRef>(c.args[0].get());
      auto* axis = c.args.size() == 2 ? dyn_cast<IntLit>(c.args[1].get()) : nullptr;
      if (base && axis && stored.count(base->name) && axis->value >= 0 &&
          static_cast<size_t>(axis->value) < merged.levels.size()) {
        const Expr& stop = *merged.levels[static_cast<size_t>(axis->value)]->stop;
        if (stop.kind == ExprKind::Var || stop.kind == ExprKind::IntLit) e = cloneExpr(stop);
      }
      return;
    }
    forEachChild(*e, [&](ExprPtr& c) { replaceExtents(c, stored, merged); });
  }

  /// The loop's trip counts as window terms; empty when one is unknown.
  static std::vector<std::string> stopTerms(const Nest& n, const Window& w) {
    std::vector<std::string> out;
    for (auto* l : n.levels) {
      auto t = w.term(*l->stop);
      if (!t) return {};
      out.push_back(*t);
    }
    return out;
  }

  /// Whether the nest's loop variables are referred to only inside it (a
  /// loop variable keeps its last value after the loop).
  bool ownsLoopVars(const Nest& n) {
    VarCounts inside;
    inside.count(*n.outer);
    for (auto& v : n.vars)
      if (inside.reads[v] != FunctionCounts.reads[v] || inside.binds[v] != FunctionCounts.binds[v]) return false;
    return true;
  }

  /// Whether every reference of the nest to an array in `stored` is the
  /// element its own iteration computes.
  static bool readsOnlyCurrentElements(const Nest& n, const std::set<std::string>& stored) {
    bool ok = true;
    std::function<void(const Expr&)> walk = [&](const Expr& e) {
      if (isCurrentElement(e, n.vars) && stored.count(cast<VarRef>(*cast<Index>(e).base).name)) return;
      if (auto* v = dyn_cast<VarRef>(&e); v && stored.count(v->name)) ok = false;
      forEachChild(e, walk);
    };
    for (auto* l : n.levels) walk(*l->stop);
    for (auto& s : n.body->stmts) {
      auto& a = cast<Assign>(*s);
      walk(*a.value);
      if (a.targets[0]->kind == ExprKind::Index)
        for (auto& x : cast<Index>(*a.targets[0]).indices) walk(*x);
    }
    return ok;
  }

  /// Whether `e` reads an element of an array in `stored` (its shape is
  /// fixed by the allocation, so `shape(a, k)` does not count).
  static bool readsElementsOf(const Expr& e, const std::set<std::string>& stored) {
    if (isLibraryCall(e, "shape")) return false;
    if (auto* v = dyn_cast<VarRef>(&e)) return stored.count(v->name) != 0;
    bool found = false;
    forEachChild(e, [&](const Expr& c) { found = found || readsElementsOf(c, stored); });
    return found;
  }

  static std::set<std::string> referencedVars(const Stmt& s) {
    VarCounts c;
    c.count(s);
    std::set<std::string> names;
    for (auto& [n, k] : c.reads) names.insert(n);
    for (auto& [n, k] : c.binds) names.insert(n);
    return names;
  }

  static void renameVars(Stmt& s, const std::map<std::string, std::string>& names) {
    struct Renamer : Mutator {
      using Mutator::mutate;
      const std::map<std::string, std::string>& Names;
      explicit Renamer(const std::map<std::string, std::string>& n) : Names(n) {}
      ExprPtr mutate(ExprPtr e) override {
        if (auto* v = dyn_cast<VarRef>(e.get())) {
          auto it = Names.find(v->name);
          if (it != Names.end()) v->name = it->second;
          return e;
        }
        mutateChildren(*e);
        return e;
      }
      void mutate(Stmt& st) override {
        if (auto* f = dyn_cast<For>(&st)) {
          auto it = Names.find(f->var);
          if (it != Names.end()) f->var = it->second;
        }
        mutateChildren(st);
      }
    } renamer(names);
    renamer.mutate(s);
  }

  /// `name[i...] = e` becomes `name__k = e`, its reads `name__k`, and its
  /// allocation goes.
  void scalarize(const std::string& name, Nest& n, Block& top) {
    const Type* arrayType = F.lookup(name);
    if (!arrayType) return;
    const Type elem = Type::scalar(arrayType->elem());
    const std::string scalar = Ctx.newLocal(F, name, elem, n.outer->loc);
    struct Reads : Mutator {
      using Mutator::mutate;
      const std::string& Name;
      const std::string& Scalar;
      const Type& Elem;
      Reads(const std::string& n, const std::string& s, const Type& t) : Name(n), Scalar(s), Elem(t) {}
      ExprPtr mutate(ExprPtr e) override {
        if (auto* x = dyn_cast<Index>(e.get()); x && x->base->kind == ExprKind::Var &&
                                                cast<VarRef>(*x->base).name == Name)
          return build::var(e->loc, Scalar, Elem);
        mutateChildren(*e);
        return e;
      }
    } reads(name, scalar, elem);
    for (auto& s : n.body->stmts) {
      auto& a = cast<Assign>(*s);
      a.value = reads.mutate(std::move(a.value));
      auto* x = dyn_cast<Index>(a.targets[0].get());
      if (!x || cast<VarRef>(*x->base).name != name) continue;
      if (a.value->type != elem) a.value = std::make_unique<Cast>(a.value->loc, elem, std::move(a.value));
      a.targets[0] = build::var(x->loc, scalar, elem);
    }
    removeAllocation(top, name);
    ++Ctx.stats["merge: arrays made scalars"];
  }

  static bool removeAllocation(Block& b, const std::string& name) {
    for (size_t i = 0; i < b.stmts.size(); ++i) {
      if (allocatedArray(*b.stmts[i]) == name) {
        b.stmts.erase(b.stmts.begin() + static_cast<std::ptrdiff_t>(i));
        return true;
      }
      bool done = false;
      forEachPart(*b.stmts[i], [](ExprPtr&) {}, [&](Block& inner) { done = done || removeAllocation(inner, name); });
      if (done) return true;
    }
    return false;
  }

  Function& F;
  PassContext& Ctx;
  VarCounts FunctionCounts;
  std::vector<std::unique_ptr<Nest>> Heads;
  std::map<std::string, Nest*> Contractible;  // arrays a merged loop stores, and that loop
};

}  // namespace

void mergeFusedLoops(Function& f, PassContext& context) {
  Merger merger(f, context);
  merger.block(*f.body);
  merger.contract(*f.body);
}

}  // namespace pydd
