#include "opt/ArrayEffects.h"

#include <map>
#include <string>

#include "ir/Visitor.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

using EffectMap = std::map<const Function*, std::vector<bool>>;

/// Finds the uses of one array variable that might write through it.
class UseScanner : public Visitor {
 public:
  using Visitor::visit;
  UseScanner(const Module& m, const EffectMap& effects, const std::string& var)
      : M(m), Effects(effects), Var(var) {}
  bool mayWrite = false;

  void visit(const Stmt& s) override {
    if (auto* a = dyn_cast<Assign>(&s)) {
      for (auto& t : a->targets) {
        if (auto* idx = dyn_cast<Index>(t.get())) {
          if (refersTo(*idx->base)) mayWrite = true;
          for (auto& i : idx->indices) visit(*i);
        } else if (auto* v = dyn_cast<VarRef>(t.get()); v && v->name == Var) {
          // Rebinding the name does not write the caller's array, but
          // what it refers to afterwards is not the parameter any more;
          // stay conservative.
          mayWrite = true;
        }
      }
      if (a->value) {
        // `B = A` or `B = A[i, :]` makes an alias the scanner does not follow.
        if (refersTo(*a->value)) mayWrite = true;
        else visit(*a->value);
      }
      return;
    }
    // Returning the array or a view of it writes nothing: the bridge hands
    // it back as a view of the argument, read-only if the argument was.
    if (auto* r = dyn_cast<Return>(&s); r && r->value && refersTo(*r->value)) return;
    if (auto* f = dyn_cast<For>(&s); f && !f->isRange && refersTo(*f->iterable)) {
      // Elements of a 1-D array are values; rows of a higher-rank array are
      // views, an alias the scanner does not follow.
      if (f->iterable->type.isArray() && f->iterable->type.rank() > 1) mayWrite = true;
      visit(*f->body);
      return;
    }
    visitChildren(s);
  }

  void visit(const Expr& e) override {
    // The parameter anywhere the cases above and below do not handle --
    // inside a tuple, a list or a dict: an alias the scan does not follow.
    if (isVar(e)) {
      mayWrite = true;
      return;
    }
    if (auto* c = dyn_cast<Call>(&e)) {
      for (size_t i = 0; i < c->args.size(); ++i) {
        if (!refersTo(*c->args[i])) {
          visit(*c->args[i]);
          continue;
        }
        if (c->target == CallTarget::Library && !(c->library->writesArgs >> i & 1u)) continue;
        if (c->target == CallTarget::User) {
          auto it = Effects.find(M.find(c->callee));
          if (it != Effects.end() && i < it->second.size() && !it->second[i]) continue;
        }
        mayWrite = true;
      }
      return;
    }
    if (auto* idx = dyn_cast<Index>(&e)) {
      // An element load reads only; a view in a position not seen above
      // (a list element, a tuple part) may be written later.
      if (refersTo(e) && !isVar(e)) mayWrite = true;
      if (!refersTo(*idx->base)) visit(*idx->base);
      for (auto& i : idx->indices) visit(*i);
      return;
    }
    if (auto* s = dyn_cast<Select>(&e)) {
      // A conditional may yield the array itself: an alias.
      if (refersTo(*s->trueValue) || refersTo(*s->falseValue)) mayWrite = true;
    }
    visitChildren(e);
  }

 private:
  bool isVar(const Expr& e) const {
    auto* v = dyn_cast<VarRef>(&e);
    return v && v->name == Var;
  }

  /// The array itself or a view of it (a slice, a row, a transpose).
  bool refersTo(const Expr& e) const {
    if (isVar(e)) return true;
    if (!e.type.isArray()) return false;
    if (auto* idx = dyn_cast<Index>(&e)) return refersTo(*idx->base);
    if (auto* c = dyn_cast<Call>(&e); c && c->library && c->library->returnsView && !c->args.empty())
      return refersTo(*c->args[0]);
    return false;
  }

  const Module& M;
  const EffectMap& Effects;
  const std::string& Var;
};

}  // namespace

std::map<const Function*, std::vector<bool>> writtenArrayParams(const Module& m) {
  // Start from "nothing is written" and grow to a fixed point, so that
  // recursive functions that only read stay read-only.
  EffectMap effects;
  for (auto& f : m.functions) effects[f.get()] = std::vector<bool>(f->params.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& f : m.functions) {
      for (size_t i = 0; i < f->params.size(); ++i) {
        const Type& t = f->params[i].type;
        if (!(t.isArray() || t.isSparse()) || effects[f.get()][i]) continue;
        UseScanner scan(m, effects, f->params[i].name);
        scan.visit(*f->body);
        if (scan.mayWrite) {
          effects[f.get()][i] = true;
          changed = true;
        }
      }
    }
  }
  return effects;
}

}  // namespace pydd
