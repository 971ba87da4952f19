#include "opt/PrivateArrays.h"

#include <map>
#include <set>
#include <vector>

#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// What a parent expression does with a child whose value refers to the
/// accumulator's memory.
enum class Use { Safe, Alias, Escape };

Use useBy(const Expr& parent, const Expr& child) {
  switch (parent.kind) {
    case ExprKind::Index: {
      auto& x = cast<Index>(parent);
      if (x.base.get() != &child) return Use::Safe;  // an index array: its elements are read
      return x.type.isArray() ? Use::Alias : Use::Safe;
    }
    case ExprKind::Call: {
      auto& c = cast<Call>(parent);
      if (c.target != CallTarget::Library || !c.library) return Use::Escape;  // a kernel function may keep it
      size_t at = 0;
      while (at < c.args.size() && c.args[at].get() != &child) ++at;
      if (at >= 32 || (c.library->writesArgs & ~(1u << at))) return Use::Escape;  // stored into another argument
      if (c.library->returnsView && at == 0) return Use::Alias;
      if (holdsReference(c.type) && !c.type.isArray()) return Use::Escape;  // a container that may hold it
      return Use::Safe;
    }
    case ExprKind::Select:
      return cast<Select>(parent).cond.get() == &child ? Use::Safe : Use::Alias;
    case ExprKind::Unary:
    case ExprKind::Binary:
    case ExprKind::Compare:
    case ExprKind::Logical:
    case ExprKind::Not:
    case ExprKind::Cast:
      return Use::Safe;  // a new value
    default:
      return Use::Escape;  // tuple, list and dict literals, attributes
  }
}

/// The variables bound to views of each tracked array, and the arrays
/// whose memory escapes: the whole-function question behind "only acc
/// reaches acc's memory". One walk answers it for every tracked name (each
/// variable reference is judged on its own), so the analysis stays linear
/// in the function's size however many arrays it has.
struct AliasScan {
  std::set<std::string> tracked;
  std::map<std::string, std::set<std::string>> aliases;  // tracked name -> its view variables
  std::set<std::string> escaping;

  void expr(const Expr& e, std::vector<const Expr*>& path, const std::string* bindsTo, bool isTarget) {
    if (auto* v = dyn_cast<VarRef>(&e); v && tracked.count(v->name)) resolve(e, path, bindsTo, isTarget, v->name);
    path.push_back(&e);
    forEachChild(e, [&](const Expr& c) { expr(c, path, bindsTo, isTarget); });
    path.pop_back();
  }

  void resolve(const Expr& leaf, const std::vector<const Expr*>& path, const std::string* bindsTo, bool isTarget,
               const std::string& name) {
    const Expr* cur = &leaf;
    for (size_t i = path.size(); i-- > 0;) {
      Use u = useBy(*path[i], *cur);
      if (u == Use::Safe) return;
      if (u == Use::Escape) {
        escaping.insert(name);
        return;
      }
      cur = path[i];
    }
    if (isTarget) return;  // a store into it (or its own binding)
    if (!bindsTo) return;  // returned, iterated, tested: read in place
    aliases[name].insert(*bindsTo);
  }

  void stmt(const Stmt& s) {
    if (auto* b = dyn_cast<Block>(&s)) {
      for (auto& t : b->stmts) stmt(*t);
      return;
    }
    std::vector<const Expr*> path;
    if (auto* a = dyn_cast<Assign>(&s)) {
      const std::string* bindsTo = nullptr;
      if (a->targets.size() == 1)
        if (auto* v = dyn_cast<VarRef>(a->targets[0].get())) bindsTo = &v->name;
      // `v op= view` updates v's own memory: a read in place.
      if (a->value) expr(*a->value, path, a->augmented ? nullptr : bindsTo, false);
      for (auto& t : a->targets) expr(*t, path, nullptr, true);
      return;
    }
    forEachPart(s, [&](const Expr& e) { expr(e, path, nullptr, false); }, [&](const Block& b) { stmt(b); });
  }
};

/// The plain (not augmented: `a += x` updates a's memory in place)
/// bindings of each variable, and the assignment of those bound by one.
struct Bindings {
  std::map<std::string, int> count;
  std::map<std::string, const Assign*> assignment;

  void stmt(const Stmt& s) {
    if (auto* b = dyn_cast<Block>(&s)) {
      for (auto& t : b->stmts) stmt(*t);
      return;
    }
    if (auto* f = dyn_cast<For>(&s)) ++count[f->var];
    if (auto* a = dyn_cast<Assign>(&s); a && !a->augmented)
      for (auto& t : a->targets)
        if (auto* v = dyn_cast<VarRef>(t.get())) {
          ++count[v->name];
          if (a->targets.size() == 1 && a->value) assignment[v->name] = a;
        }
    forEachPart(s, [](const Expr&) {}, [&](const Block& b) { stmt(b); });
  }
};

}  // namespace

std::map<std::string, PrivateArray> privateArrays(const Function& f) {
  Bindings bindings;
  bindings.stmt(*f.body);
  std::set<std::string> params;
  for (auto& p : f.params) params.insert(p.name);
  AliasScan arrays;  // locals bound once to a new array
  for (auto& l : f.locals) {
    if (!l.type.isArray() || bindings.count[l.name] != 1 || !bindings.assignment.count(l.name) || params.count(l.name))
      continue;
    auto* call = dyn_cast<Call>(bindings.assignment.at(l.name)->value.get());
    if (!call || call->target != CallTarget::Library || !call->library ||
        (!call->library->returnsNew && call->library->newArray == LibraryFunction::NewArray::No))
      continue;  // a view of something, or a kernel function's array
    arrays.tracked.insert(l.name);
  }
  arrays.stmt(*f.body);
  // The views' own uses: read in place, never viewed again or kept.
  AliasScan views;
  for (auto& [array, names] : arrays.aliases) views.tracked.insert(names.begin(), names.end());
  views.stmt(*f.body);
  std::map<std::string, PrivateArray> out;
  for (auto& name : arrays.tracked) {
    if (arrays.escaping.count(name)) continue;
    const std::set<std::string>& own = arrays.aliases[name];
    bool kept = true;
    for (auto& v : own) kept = kept && !views.escaping.count(v) && views.aliases[v].empty();
    if (kept) out[name] = PrivateArray{own};
  }
  return out;
}

}  // namespace pydd
