#include "opt/PromoteAccumulators.h"

#include <map>
#include <optional>
#include <set>

#include "ir/Builder.h"
#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/PrivateArrays.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// Registers per accumulator. Eight cover the short rows where the chain
/// through memory is the cost (a longer array's elements overlap their
/// chains in the vectorized loop); eight guarded updates cost a 4-element
/// row about 4% against four (bench/ab.py on bigclam).
constexpr int64_t kRegisters = 8;

/// Whether `s` holds a break, continue or return that leaves it (a nested
/// loop's own break and continue do not).
bool leaves(const Stmt& s, bool inLoop = false) {
  switch (s.kind) {
    case StmtKind::Return: return true;
    case StmtKind::Break:
    case StmtKind::Continue: return !inLoop;
    default: break;
  }
  const bool loop = inLoop || s.kind == StmtKind::For || s.kind == StmtKind::While;
  bool found = false;
  if (auto* b = dyn_cast<Block>(&s)) {
    for (auto& t : b->stmts) found = found || leaves(*t, loop);
    return found;
  }
  forEachPart(s, [](const Expr&) {}, [&](const Block& b) { found = found || leaves(b, loop); });
  return found;
}

bool holdsTask(const Stmt& s) {
  if (s.kind == StmtKind::Task) return true;
  if (auto* f = dyn_cast<For>(&s); f && f->parallel) return true;
  bool found = false;
  if (auto* b = dyn_cast<Block>(&s)) {
    for (auto& t : b->stmts) found = found || holdsTask(*t);
    return found;
  }
  forEachPart(s, [](const Expr&) {}, [&](const Block& b) { found = found || holdsTask(b); });
  return found;
}

/// One accumulator a loop can keep in registers.
struct Accumulator {
  std::string name;
  Type elem;
  std::set<std::string> aliases;  // variables bound to views of it
  std::string length;             // a local holding len(acc), set when rewriting
  std::vector<std::string> regs;
};

class Promoter {
 public:
  Promoter(Function& f, PassContext& ctx) : F(f), Ctx(ctx), Private(privateArrays(f)) {
    counts.count(*f.body);
    collectDefinitions(*f.body);
    Shape = lookupLibraryFunction("shape");
    // Decided before any rewrite: the scans walk the whole function.
    for (auto& l : f.locals)
      if (l.type.isArray() && l.type.rank() == 1) accumulator(l.name);
    Scanned = true;
  }

  void run() { block(*F.body); }

 private:
  Function& F;
  PassContext& Ctx;
  // Decided on the whole function before any rewrite.
  std::map<std::string, PrivateArray> Private;
  VarCounts counts;
  std::map<std::string, const Assign*> definitions;  // variables bound by one plain assignment
  const LibraryFunction* Shape = nullptr;
  bool Scanned = false;  // every accumulator decided
  std::map<std::string, std::optional<Accumulator>> accumulators;  // by name; nullopt: refused

  void collectDefinitions(const Stmt& s) {
    if (auto* b = dyn_cast<Block>(&s)) {
      for (auto& t : b->stmts) collectDefinitions(*t);
      return;
    }
    if (auto* a = dyn_cast<Assign>(&s); a && a->value && !a->augmented && a->targets.size() == 1)
      if (auto* v = dyn_cast<VarRef>(a->targets[0].get())) definitions[v->name] = a;
    forEachPart(s, [](const Expr&) {}, [&](const Block& b) { collectDefinitions(b); });
  }

  bool boundOnce(const std::string& name) const {
    auto it = counts.binds.find(name);
    return it != counts.binds.end() && it->second == 1 && definitions.count(name) && !isParam(name);
  }
  bool isParam(const std::string& name) const {
    for (auto& p : F.params)
      if (p.name == name) return true;
    return false;
  }

  /// The accumulator `name`, when it qualifies as one anywhere in F.
  const Accumulator* accumulator(const std::string& name) {
    auto [it, fresh] = accumulators.try_emplace(name);
    if (!fresh || Scanned) return it->second ? &*it->second : nullptr;
    const Type* t = F.lookup(name);
    if (!t || !t->isArray() || t->rank() != 1) return nullptr;
    switch (t->elem()) {
      case ScalarKind::Int32:
      case ScalarKind::Int64:
      case ScalarKind::Float32:
      case ScalarKind::Float64: break;
      default: return nullptr;
    }
    auto priv = Private.find(name);
    if (priv == Private.end()) return nullptr;
    it->second = Accumulator{name, Type::scalar(t->elem()), priv->second.views, {}, {}};
    return &*it->second;
  }

  /// Whether `e` always equals len(acc): shape(acc, 0), the length acc was
  /// allocated with, or a variable bound once to one of them.
  bool isLength(const Expr& e, const std::string& acc, int depth = 0) const {
    if (depth > 8) return false;
    if (auto* c = dyn_cast<Call>(&e); c && c->library == Shape && c->args.size() == 2) {
      auto* v = dyn_cast<VarRef>(c->args[0].get());
      int64_t axis = -1;
      return v && v->name == acc && constantInt(*c->args[1], axis) && axis == 0;
    }
    auto* v = dyn_cast<VarRef>(&e);
    if (!v || !boundOnce(v->name)) return false;
    auto* alloc = dyn_cast<Call>(definitions.at(acc)->value.get());
    if (alloc && alloc->library && alloc->library->newArray != LibraryFunction::NewArray::No &&
        !alloc->args.empty()) {
      const Expr* extent = alloc->args[0].get();
      if (auto* t = dyn_cast<TupleLit>(extent); t && t->elems.size() == 1) extent = t->elems[0].get();
      if (auto* w = dyn_cast<VarRef>(extent); w && w->name == v->name) return true;
    }
    return isLength(*definitions.at(v->name)->value, acc, depth + 1);
  }

  /// `for c in range(0, n, 1): acc[c] = E` over the whole of an accumulator,
  /// E reading acc, only as acc[c]: the accumulator, else null.
  const Accumulator* elementLoop(const Stmt& s) {
    auto* f = dyn_cast<For>(&s);
    int64_t start = -1, step = 0;
    if (!f || !f->isRange || f->parallel || !constantInt(*f->start, start) || start != 0 ||
        !constantInt(*f->step, step) || step != 1 || f->body->stmts.size() != 1)
      return nullptr;
    auto* a = dyn_cast<Assign>(f->body->stmts[0].get());
    if (!a || a->augmented || !a->value || a->targets.size() != 1) return nullptr;
    auto* target = dyn_cast<Index>(a->targets[0].get());
    if (!target || target->indices.size() != 1) return nullptr;
    auto* base = dyn_cast<VarRef>(target->base.get());
    auto* at = dyn_cast<VarRef>(target->indices[0].get());
    if (!base || !at || at->name != f->var) return nullptr;
    // The loop variable's value after the loop is not kept.
    if (counts.binds[f->var] != 1 || counts.reads[f->var] != readsOf(*f->body, f->var)) return nullptr;
    const Accumulator* acc = accumulator(base->name);
    // E must read acc[c]: a loop that only writes acc has no chain through
    // memory to cut (fusion's row buffers).
    if (!acc || !isLength(*f->stop, acc->name) || !mentions(*a->value, {acc->name}) ||
        !readsOnlyElement(*a->value, acc->name, f->var) || mentions(*a->value, acc->aliases))
      return nullptr;
    return acc;
  }

  static int readsOf(const Stmt& s, const std::string& name) {
    VarCounts c;
    c.count(s);
    return c.reads[name];
  }

  static bool readsOnlyElement(const Expr& e, const std::string& acc, const std::string& at) {
    if (auto* x = dyn_cast<Index>(&e)) {
      auto* b = dyn_cast<VarRef>(x->base.get());
      if (b && b->name == acc) {
        auto* i = x->indices.size() == 1 ? dyn_cast<VarRef>(x->indices[0].get()) : nullptr;
        return i && i->name == at;
      }
    }
    if (auto* v = dyn_cast<VarRef>(&e); v && v->name == acc) return false;
    bool ok = true;
    forEachChild(e, [&](const Expr& c) { ok = ok && readsOnlyElement(c, acc, at); });
    return ok;
  }

  /// The accumulators whose element loops `s` holds (anywhere inside).
  void elementLoopsIn(const Stmt& s, std::set<std::string>& out) {
    if (auto* acc = elementLoop(s)) {
      out.insert(acc->name);
      return;
    }
    if (auto* b = dyn_cast<Block>(&s)) {
      for (auto& t : b->stmts) elementLoopsIn(*t, out);
      return;
    }
    forEachPart(s, [](const Expr&) {}, [&](const Block& b) { elementLoopsIn(b, out); });
  }

  // ---- the rewrite of one loop ----------------------------------------------------------

  ExprPtr lengthRef(const Accumulator& a) const { return build::var(F.loc, a.length, Type::int64()); }
  ExprPtr element(const Accumulator& a, int64_t k, SourceLoc loc) const {
    auto x = build::index(loc, build::var(loc, a.name, *F.lookup(a.name)), {}, a.elem);
    cast<Index>(*x).indices.push_back(build::intLit(loc, k));
    cast<Index>(*x).inRange = true;  // under k < len(acc)
    return x;
  }
  ExprPtr below(const Accumulator& a, int64_t k, SourceLoc loc) const {
    return build::compare(loc, CmpOp::Lt, build::intLit(loc, k), lengthRef(a));
  }
  /// Stores every register to acc (`if k < len: acc[k] = a_k`), or loads
  /// every register (`a_k = acc[k] if k < len else 0`). The load defines
  /// each register on every path, so that none is live across the code
  /// between a store and a load: g++ keeps a variable that is live across
  /// a call (a rare path's cold function) in memory for the whole loop.
  void transfer(const Accumulator& a, bool store, SourceLoc loc, std::vector<StmtPtr>& out) const {
    for (int64_t k = 0; k < kRegisters; ++k) {
      ExprPtr reg = build::var(loc, a.regs[k], a.elem);
      if (store) {
        std::vector<StmtPtr> then;
        then.push_back(build::assign(loc, element(a, k, loc), std::move(reg)));
        out.push_back(build::ifThen(loc, below(a, k, loc), std::move(then)));
        continue;
      }
      ExprPtr zero = std::make_unique<Cast>(loc, a.elem, build::intLit(loc, 0));
      auto pick = std::make_unique<Select>(loc, below(a, k, loc), element(a, k, loc), std::move(zero));
      pick->type = a.elem;
      out.push_back(build::assign(loc, std::move(reg), std::move(pick)));
    }
  }

  /// E with acc[c] read from register k and c replaced by k.
  ExprPtr instantiate(const Expr& e, const Accumulator& a, const std::string& at, int64_t k) const {
    if (auto* x = dyn_cast<Index>(&e))
      if (auto* b = dyn_cast<VarRef>(x->base.get()); b && b->name == a.name) return build::var(e.loc, a.regs[k], a.elem);
    if (auto* v = dyn_cast<VarRef>(&e); v && v->name == at) {
      ExprPtr lit = build::intLit(e.loc, k);
      lit->type = e.type;
      return lit;
    }
    ExprPtr copy = cloneExpr(e);
    forEachChild(*copy, [&](ExprPtr& c) { c = instantiate(*c, a, at, k); });
    return copy;
  }

  /// A rare branch's statements as a cold function of their own
  /// (`if False: pass` with them as its rare else): the transfers around
  /// them stay outside it, so that no register is captured by it (g++
  /// keeps a captured variable in memory in the hot loop too).
  static StmtPtr coldRegion(std::vector<StmtPtr> stmts) {
    const SourceLoc loc = stmts.front()->loc;
    auto never = std::make_unique<BoolLit>(loc, false);
    never->type = Type::boolTy();
    std::vector<StmtPtr> nothing;
    nothing.push_back(std::make_unique<Pass>(loc));
    StmtPtr region = build::ifThen(loc, std::move(never), std::move(nothing), std::move(stmts));
    cast<If>(*region).rareElse = true;
    return region;
  }

  /// Rewrites the statements of `b` (in the loop's copy) for the
  /// accumulators `accs`; false when a statement makes it unsafe. `rare`:
  /// b is a rare branch (run out of line).
  bool rewriteBlock(Block& b, const std::map<std::string, Accumulator*>& accs, const std::set<std::string>& names,
                    bool rare, unsigned& updates) {
    std::vector<StmtPtr> out, segment;
    bool ok = true;
    auto flush = [&]() {
      if (segment.empty()) return;
      bool uses = false;
      for (auto& s : segment) uses = uses || mentions(*s, names);
      for (auto& s : segment) ok = ok && !(uses && leaves(*s));
      const SourceLoc loc = segment.front()->loc;
      if (uses)
        for (auto& [n, a] : accs) transfer(*a, true, loc, out);
      if (rare) {
        out.push_back(coldRegion(std::move(segment)));
      } else {
        for (auto& s : segment) out.push_back(std::move(s));
      }
      if (uses)
        for (auto& [n, a] : accs) transfer(*a, false, loc, out);
      segment.clear();
    };
    for (auto& s : b.stmts) {
      if (const Accumulator* acc = elementLoop(*s); acc && accs.count(acc->name)) {
        flush();
        auto& f = cast<For>(*s);
        auto& a = cast<Assign>(*f.body->stmts[0]);
        const Accumulator& reg = *accs.at(acc->name);
        std::set<std::string> others = names;  // in registers too: their memory is stale here
        others.erase(acc->name);
        if (mentions(*a.value, others)) return false;
        for (int64_t k = 0; k < kRegisters; ++k) {
          std::vector<StmtPtr> then;
          then.push_back(build::assign(a.loc, build::var(a.loc, reg.regs[k], reg.elem), instantiate(*a.value, reg, f.var, k)));
          out.push_back(build::ifThen(a.loc, below(reg, k, a.loc), std::move(then)));
        }
        ++updates;
        continue;
      }
      std::set<std::string> inner;
      elementLoopsIn(*s, inner);
      bool holds = false;
      for (auto& n : inner) holds = holds || accs.count(n);
      if (!holds) {
        segment.push_back(std::move(s));
        continue;
      }
      flush();
      // A statement around element loops: its own expressions must not use
      // the accumulators (they are in registers there).
      bool headerUses = false;
      forEachPart(static_cast<const Stmt&>(*s), [&](const Expr& e) { headerUses = headerUses || mentions(e, names); },
                  [](const Block&) {});
      if (headerUses || s->kind == StmtKind::Task) return false;
      auto* branch = dyn_cast<If>(s.get());
      const bool rareElse = branch && branch->rareElse;
      forEachPart(*s, [](ExprPtr&) {}, [&](Block& nested) {
        ok = ok && rewriteBlock(nested, accs, names, rareElse && &nested == branch->elseBody.get(), updates);
      });
      if (rareElse) branch->rareElse = false;  // its statements now run in cold regions of their own
      out.push_back(std::move(s));
    }
    flush();
    b.stmts = std::move(out);
    return ok;
  }

  /// Promotes the accumulators of the loop `s`: returns what replaces it
  /// (taking `s`), or nothing when it is left alone.
  std::vector<StmtPtr> promote(StmtPtr& s) {
    auto& loop = cast<For>(*s);
    if (loop.parallel || holdsTask(*loop.body)) return {};
    std::set<std::string> found;
    elementLoopsIn(*loop.body, found);
    const std::set<std::string> bound = assignedVars(loop);
    std::map<std::string, Accumulator> chosen;
    for (auto& n : found)
      if (const Accumulator* a = accumulator(n); a && !bound.count(n)) chosen.emplace(n, *a);
    if (chosen.empty()) return {};
    std::map<std::string, Accumulator*> accs;
    std::set<std::string> names;
    const size_t localsBefore = F.locals.size();
    for (auto& [n, a] : chosen) {
      accs[n] = &a;
      names.insert(n);
      names.insert(a.aliases.begin(), a.aliases.end());
      a.length = newLocal("len", Type::int64());
      for (int64_t k = 0; k < kRegisters; ++k) a.regs.push_back(newLocal("acc", a.elem));
    }
    StmtPtr copy = cloneStmt(loop);
    unsigned updates = 0;
    bool headerUses = false;  // the loop's own range or iterable
    forEachPart(static_cast<const Stmt&>(*copy), [&](const Expr& e) { headerUses = headerUses || mentions(e, names); },
                [](const Block&) {});
    if (headerUses || !rewriteBlock(*cast<For>(*copy).body, accs, names, false, updates) || updates == 0) {
      F.locals.resize(localsBefore);
      return {};
    }

    const SourceLoc loc = loop.loc;
    std::vector<StmtPtr> out, fast;
    ExprPtr fits;
    for (auto& [n, a] : chosen) {
      std::vector<ExprPtr> args;
      args.push_back(build::var(loc, n, *F.lookup(n)));
      args.push_back(build::intLit(loc, 0));
      out.push_back(build::assign(loc, lengthRef(a), build::libraryCall(loc, Shape, "shape", std::move(args), Type::int64())));
      fits = build::logicalAnd(loc, std::move(fits),
                               build::compare(loc, CmpOp::Le, lengthRef(a), build::intLit(loc, kRegisters)));
      transfer(a, false, loc, fast);
    }
    fast.push_back(std::move(copy));
    for (auto& [n, a] : chosen) transfer(a, true, loc, fast);
    std::vector<StmtPtr> slow;
    slow.push_back(std::move(s));
    out.push_back(build::ifThen(loc, std::move(fits), std::move(fast), std::move(slow)));
    Ctx.stats["promote: accumulators kept in registers"] += chosen.size();
    Ctx.stats["promote: element loops unrolled"] += updates;
    return out;
  }

  std::string newLocal(const std::string& hint, const Type& t) {
    return Ctx.newLocal(F, hint, t, F.loc);
  }

  void block(Block& b) {
    std::vector<StmtPtr> out;
    for (auto& s : b.stmts) {
      if (s->kind == StmtKind::For) {
        auto replaced = promote(s);
        if (!replaced.empty()) {
          for (auto& r : replaced) out.push_back(std::move(r));
          continue;
        }
      }
      if (auto* f = dyn_cast<For>(s.get()); f && f->parallel) {
        out.push_back(std::move(s));
        continue;
      }
      if (s->kind != StmtKind::Task)
        forEachPart(*s, [](ExprPtr&) {}, [&](Block& nested) { block(nested); });
      out.push_back(std::move(s));
    }
    b.stmts = std::move(out);
  }
};

}  // namespace

void promoteAccumulators(Function& f, PassContext& context) { Promoter(f, context).run(); }

}  // namespace pydd
