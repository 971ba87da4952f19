#include "opt/Contiguity.h"

#include <functional>
#include <map>
#include <vector>

#include "ir/Visitor.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// Whether the runtime makes `c`'s result as a new C-contiguous array:
/// allocations, copies and element-wise results all come from
/// Array::empty (or zeros, filled) with the default strides.
bool makesNewArray(const Call& c) {
  if (c.target != CallTarget::Library || !c.library || !c.type.isArray()) return false;
  const LibraryFunction& f = *c.library;
  if (f.returnsView) return false;
  if (f.newArray != LibraryFunction::NewArray::No || f.returnsNew) return true;
  return f.element && (f.element->arity == 0 || c.args.size() == f.element->arity);
}

}  // namespace

std::set<std::string> unitStrideArrays(const Function& f) {
  // Each array local's assigned values; a local assigned any other way
  // (a loop variable, a tuple target) is out from the start.
  std::map<std::string, std::vector<const Expr*>> values;
  std::set<std::string> out;
  for (auto& l : f.locals)
    if (l.type.isArray() && l.type.rank() >= 1) values[l.name];
  std::function<void(const Block&)> walk = [&](const Block& b) {
    for (auto& s : b.stmts) {
      if (auto* loop = dyn_cast<For>(s.get())) values.erase(loop->var);
      if (auto* a = dyn_cast<Assign>(s.get())) {
        for (auto& t : a->targets) {
          auto* v = dyn_cast<VarRef>(t.get());
          if (!v || !values.count(v->name)) continue;
          if (a->targets.size() == 1 && a->value) values[v->name].push_back(a->value.get());
          else values.erase(v->name);
        }
      }
      forEachPart(*s, [](const Expr&) {}, walk);
    }
  };
  walk(*f.body);
  // Start from every candidate and drop those with a value of unknown
  // layout, until none changes (a copy of a dropped local drops too).
  for (auto& [name, vs] : values) out.insert(name);
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [name, vs] : values) {
      if (!out.count(name)) continue;
      for (const Expr* e : vs) {
        auto* c = dyn_cast<Call>(e);
        auto* v = dyn_cast<VarRef>(e);
        if ((c && makesNewArray(*c)) || (v && out.count(v->name))) continue;
        out.erase(name);
        changed = true;
        break;
      }
    }
  }
  return out;
}

}  // namespace pydd
