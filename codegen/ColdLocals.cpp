#include "codegen/ColdLocals.h"

#include <functional>
#include <set>

#include "ir/Visitor.h"

namespace pydd {
namespace {

/// Whether `e` or anything below it reads the variable `name`.
bool exprRefers(const Expr& e, const std::string& name) {
  if (auto* v = dyn_cast<VarRef>(&e); v && v->name == name) return true;
  bool found = false;
  forEachChild(e, [&](const Expr& c) { found = found || exprRefers(c, name); });
  return found;
}

/// Whether statement `s` (with its nested blocks) refers to `name`.
bool refers(const Stmt& s, const std::string& name) {
  if (auto* f = dyn_cast<For>(&s); f && f->var == name) return true;
  bool found = false;
  forEachPart(
      s, [&](const Expr& e) { found = found || exprRefers(e, name); },
      [&](const Block& b) {
        for (auto& t : b.stmts) found = found || refers(*t, name);
      });
  return found;
}

/// Whether every path through `b` assigns `name` before reading it, so no
/// value of it flows into `b` (see coldBranchLocals).
bool assignedBeforeUse(const Block& b, const std::string& name) {
  for (size_t k = 0; k < b.stmts.size(); ++k) {
    const Stmt& s = *b.stmts[k];
    if (!refers(s, name)) continue;
    bool usedLater = false;
    for (size_t l = k + 1; l < b.stmts.size(); ++l) usedLater = usedLater || refers(*b.stmts[l], name);
    if (auto* a = dyn_cast<Assign>(&s)) {
      if (!a->value || exprRefers(*a->value, name)) return false;
      bool sets = false;
      for (auto& t : a->targets) {
        auto* v = dyn_cast<VarRef>(t.get());
        if (v && v->name == name) sets = true;
        else if (exprRefers(*t, name)) return false;
      }
      return sets;
    }
    if (usedLater) return false;  // (a loop may not run, an if may not assign)
    if (auto* f = dyn_cast<For>(&s)) {
      for (const ExprPtr* h : {&f->start, &f->stop, &f->step, &f->iterable})
        if (*h && exprRefers(**h, name)) return false;
      return f->var == name || assignedBeforeUse(*f->body, name);
    }
    if (auto* i = dyn_cast<If>(&s)) {
      if (exprRefers(*i->cond, name)) return false;
      for (const BlockPtr* part : {&i->thenBody, &i->elseBody})
        if (*part && refers(**part, name) && !assignedBeforeUse(**part, name)) return false;
      return true;
    }
    return false;
  }
  return false;  // not referenced: nothing to move
}

}  // namespace

std::map<const Block*, std::vector<std::string>> coldBranchLocals(const Function& f) {
  // The region each local is referenced in: the outermost rare branch it
  // is in, or null for the rest of the function; and whether in several.
  std::map<std::string, const Block*> region;
  std::set<std::string> shared;
  auto note = [&](const std::string& name, const Block* in) {
    auto [it, added] = region.emplace(name, in);
    if (!added && it->second != in) shared.insert(name);
  };
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

  std::map<const Block*, std::vector<std::string>> out;
  for (auto& l : f.locals) {
    auto it = region.find(l.name);
    if (it == region.end() || !it->second || shared.count(l.name)) continue;
    if (assignedBeforeUse(*it->second, l.name)) out[it->second].push_back(l.name);
  }
  return out;
}

}  // namespace pydd
