#include "codegen/ColdLocals.h"

#include <functional>
#include <set>

#include "ir/Visitor.h"

namespace pydd {
namespace {

/// The variables each expression root and statement refers to, computed
/// once per node: asking "does s refer to x" per local and per statement
/// walked a region once per local (cubic in a fused loop's general path of
/// a long expression, with its hundreds of temporaries).
class References {
 public:
  bool in(const Expr& e, const std::string& name) { return of(e).count(name) > 0; }
  bool in(const Stmt& s, const std::string& name) { return of(s).count(name) > 0; }

  /// The indices of `b`'s statements that refer to `name`, in order.
  const std::vector<size_t>& statementsOf(const Block& b, const std::string& name) {
    auto [it, fresh] = ByBlock.try_emplace(&b);
    if (fresh)
      for (size_t k = 0; k < b.stmts.size(); ++k)
        for (auto& n : of(*b.stmts[k])) it->second[n].push_back(k);
    static const std::vector<size_t> none;
    auto found = it->second.find(name);
    return found == it->second.end() ? none : found->second;
  }

 private:
  std::map<const Expr*, std::set<std::string>> ByExpr;
  std::map<const Stmt*, std::set<std::string>> ByStmt;
  std::map<const Block*, std::map<std::string, std::vector<size_t>>> ByBlock;

  static void collect(const Expr& e, std::set<std::string>& out) {
    if (auto* v = dyn_cast<VarRef>(&e)) out.insert(v->name);
    forEachChild(e, [&](const Expr& c) { collect(c, out); });
  }

  const std::set<std::string>& of(const Expr& e) {
    auto [it, fresh] = ByExpr.try_emplace(&e);
    if (fresh) collect(e, it->second);
    return it->second;
  }

  const std::set<std::string>& of(const Stmt& s) {
    auto [it, fresh] = ByStmt.try_emplace(&s);
    std::set<std::string>& names = it->second;  // std::map keeps references valid across inserts
    if (!fresh) return names;
    auto add = [&](const std::set<std::string>& more) { names.insert(more.begin(), more.end()); };
    if (auto* f = dyn_cast<For>(&s)) names.insert(f->var);
    forEachPart(
        s, [&](const Expr& e) { add(of(e)); },
        [&](const Block& b) {
          for (auto& t : b.stmts) add(of(*t));
        });
    return names;
  }
};

/// Whether every path through `b` assigns `name` before reading it, so no
/// value of it flows into `b` (see coldBranchLocals).
bool assignedBeforeUse(const Block& b, const std::string& name, References& refs) {
  const std::vector<size_t>& at = refs.statementsOf(b, name);
  if (at.empty()) return false;  // not referenced: nothing to move
  const Stmt& s = *b.stmts[at.front()];
  const bool usedLater = at.size() > 1;
  if (auto* a = dyn_cast<Assign>(&s)) {
    if (!a->value || refs.in(*a->value, name)) return false;
    bool sets = false;
    for (auto& t : a->targets) {
      auto* v = dyn_cast<VarRef>(t.get());
      if (v && v->name == name) sets = true;
      else if (refs.in(*t, name)) return false;
    }
    return sets;
  }
  if (usedLater) return false;  // (a loop may not run, an if may not assign)
  if (auto* f = dyn_cast<For>(&s)) {
    for (const ExprPtr* h : {&f->start, &f->stop, &f->step, &f->iterable})
      if (*h && refs.in(**h, name)) return false;
    return f->var == name || assignedBeforeUse(*f->body, name, refs);
  }
  if (auto* i = dyn_cast<If>(&s)) {
    if (refs.in(*i->cond, name)) return false;
    for (const BlockPtr* part : {&i->thenBody, &i->elseBody})
      if (*part && refs.in(**part, name) && !assignedBeforeUse(**part, name, refs)) return false;
    return true;
  }
  return false;
}

/// Calls note(name, branch) for each reference to a variable in `f`, with
/// the outermost rare branch it is in (null outside them).
void forEachReference(const Function& f, const std::function<void(const std::string&, const Block*)>& note) {
  std::function<void(const Expr&, const Block*)> onExpr = [&](const Expr& e, const Block* in) {
    if (auto* v = dyn_cast<VarRef>(&e)) note(v->name, in);
    forEachChild(e, [&](const Expr& c) { onExpr(c, in); });
  };
  std::function<void(const Block&, const Block*)> onBlock = [&](const Block& b, const Block* in) {
    for (auto& s : b.stmts) {
      if (auto* loop = dyn_cast<For>(s.get())) note(loop->var, in);
      auto* i = dyn_cast<If>(s.get());
      forEachPart(
          *s, [&](const Expr& e) { onExpr(e, in); },
          [&](const Block& inner) {
            const bool rare = !in && i && i->rareElse && &inner == i->elseBody.get();
            onBlock(inner, rare ? &inner : in);
          });
    }
  };
  onBlock(*f.body, nullptr);
}

}  // namespace

std::map<const Block*, std::vector<std::string>> coldBranchLocals(const Function& f) {
  // The region each local is referenced in: the outermost rare branch it
  // is in, or null for the rest of the function; and whether in several.
  std::map<std::string, const Block*> region;
  std::set<std::string> shared;
  forEachReference(f, [&](const std::string& name, const Block* in) {
    auto [it, added] = region.emplace(name, in);
    if (!added && it->second != in) shared.insert(name);
  });

  std::map<const Block*, std::vector<std::string>> out;
  References refs;
  for (auto& l : f.locals) {
    auto it = region.find(l.name);
    if (it == region.end() || !it->second || shared.count(l.name)) continue;
    if (assignedBeforeUse(*it->second, l.name, refs)) out[it->second].push_back(l.name);
  }
  return out;
}

std::map<const Block*, std::set<std::string>> coldBranchReferences(const Function& f) {
  std::map<const Block*, std::set<std::string>> out;
  forEachReference(f, [&](const std::string& name, const Block* in) {
    if (in) out[in].insert(name);
  });
  return out;
}

}  // namespace pydd
