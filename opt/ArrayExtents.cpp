#include "opt/ArrayExtents.h"

#include <functional>

#include "ir/Visitor.h"
#include "opt/ElementTree.h"
#include "stdlib/Catalog.h"

namespace pydd {

ArrayExtents::ArrayExtents(const Function& f) {
  // Every binding of every variable: an assignment's value, or null for a
  // binding of unknown value (a loop variable). Integers also count the
  // bindings inside loops, which may give a new value each iteration.
  std::map<std::string, std::vector<Binding>> values;
  std::map<std::string, int> intBindings;
  std::map<std::string, Binding> lastValue;
  std::function<void(const Block&, int)> walk = [&](const Block& b, int loops) {
    for (auto& s : b.stmts) {
      if (auto* loop = dyn_cast<For>(s.get())) {
        values[loop->var].push_back(Binding{});
        intBindings[loop->var] += 2;
      }
      if (auto* a = dyn_cast<Assign>(s.get()); a && a->value) {
        // One target takes the value; several unpack it (`a, b = x, y`).
        const bool unpacks = a->targets.size() > 1;
        for (size_t k = 0; k < a->targets.size(); ++k)
          if (auto* v = dyn_cast<VarRef>(a->targets[k].get())) {
            const Binding b{a->value.get(), unpacks ? static_cast<int>(k) : -1};
            values[v->name].push_back(b);
            intBindings[v->name] += loops ? 2 : 1;
            lastValue[v->name] = b;
          }
      }
      const int inner = loops + (s->kind == StmtKind::For || s->kind == StmtKind::While);
      forEachPart(*s, [](const Expr&) {}, [&](const Block& nested) { walk(nested, inner); });
    }
  };
  walk(*f.body, 0);

  for (auto& p : f.params) {
    if (p.type.isInteger() && !intBindings.count(p.name)) FixedInts[p.name] = Binding{};
    if (!p.type.isArray() || p.type.rank() < 1) continue;
    Value initial{Value::Named, {}};
    for (int k = 0; k < p.type.rank(); ++k) initial.names.push_back(p.name + ".shape[" + std::to_string(k) + "]");
    Arrays[p.name] = initial;
  }
  for (auto& l : f.locals) {
    if (l.type.isInteger() && intBindings[l.name] == 1) FixedInts[l.name] = lastValue[l.name];
    if (l.type.isArray() && l.type.rank() >= 1) Arrays[l.name] = Value{};
  }

  // From the optimistic start, each variable's value is the meet of its
  // parameter value (if any) and all its assignments' values under the
  // current assumptions, until nothing changes. A consistent answer holds
  // by induction over the assignments a call executes. (An integer's name
  // may change once the array it measures is named, so the rounds are
  // bounded; past the bound nothing is named.)
  bool changed = true;
  for (int round = 0; changed && round < 32; ++round) {
    changed = false;
    for (auto& [name, current] : Arrays) {
      if (current.kind == Value::Unnamed) continue;
      Value next;
      for (auto& p : f.params)
        if (p.name == name) next = current;  // the parameter's own extents
      for (const Binding& b : values[name]) next = meet(next, eval(b));
      if (next.kind != current.kind || next.names != current.names) {
        current = next;
        changed = true;
      }
    }
  }
  for (auto& [name, v] : Arrays)
    if (changed || v.kind == Value::Unknown) v = Value{Value::Unnamed, {}};
}

std::optional<ArrayExtents::Names> ArrayExtents::ofVar(const std::string& name) const {
  auto it = Arrays.find(name);
  if (it == Arrays.end() || it->second.kind != Value::Named) return std::nullopt;
  return it->second.names;
}

std::optional<ArrayExtents::Names> ArrayExtents::of(const Expr& e) const {
  Value v = eval(e);
  if (v.kind != Value::Named) return std::nullopt;
  return v.names;
}

void ArrayExtents::addTemporary(const std::string& name, const Expr& value) {
  Value v = eval(value);
  if (v.kind == Value::Unknown) v.kind = Value::Unnamed;
  Arrays[name] = v;
}

ArrayExtents::Value ArrayExtents::meet(const Value& a, const Value& b) {
  if (a.kind == Value::Unknown) return b;
  if (b.kind == Value::Unknown) return a;
  if (a.kind == Value::Named && b.kind == Value::Named && a.names == b.names) return a;
  return Value{Value::Unnamed, {}};
}

std::optional<std::string> ArrayExtents::intName(const Expr& e, int depth) const {
  int64_t literal;
  if (constantInt(e, literal)) return std::to_string(literal);
  if (auto* v = dyn_cast<VarRef>(&e)) {
    auto it = FixedInts.find(v->name);
    if (it == FixedInts.end()) return std::nullopt;
    std::optional<std::string> value = depth < 8 ? intName(it->second, depth + 1) : std::nullopt;
    return value ? value : v->name;
  }
  if (auto* c = dyn_cast<Cast>(&e); c && c->operand->type == e.type) return intName(*c->operand, depth);
  // shape(a, k) of an array with named extents.
  auto* c = dyn_cast<Call>(&e);
  if (c && c->target == CallTarget::Library && c->library == lookupLibraryFunction("shape") && c->args.size() == 2) {
    Value a = eval(*c->args[0]);
    int64_t axis;
    if (a.kind != Value::Named || !constantInt(*c->args[1], axis)) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(a.names.size());
    if (axis < 0) axis += rank;
    if (axis >= 0 && axis < rank) return a.names[static_cast<size_t>(axis)];
  }
  return std::nullopt;
}

std::optional<std::string> ArrayExtents::intName(const Binding& b, int depth) const {
  if (!b.value) return std::nullopt;
  if (b.element < 0) return intName(*b.value, depth);
  if (auto* t = dyn_cast<TupleLit>(b.value); t && b.element < static_cast<int>(t->elems.size()))
    return intName(*t->elems[static_cast<size_t>(b.element)], depth);
  // `n, m = shape(X)`: X's extents.
  auto* c = dyn_cast<Call>(b.value);
  if (c && c->target == CallTarget::Library && c->library == lookupLibraryFunction("shape") && c->args.size() == 1) {
    Value a = eval(*c->args[0]);
    if (a.kind == Value::Named && b.element < static_cast<int>(a.names.size()))
      return a.names[static_cast<size_t>(b.element)];
  }
  return std::nullopt;
}

ArrayExtents::Value ArrayExtents::eval(const Binding& b) const {
  if (!b.value) return Value{Value::Unnamed, {}};
  if (b.element < 0) return eval(*b.value);
  if (auto* t = dyn_cast<TupleLit>(b.value); t && b.element < static_cast<int>(t->elems.size()))
    return eval(*t->elems[static_cast<size_t>(b.element)]);
  return Value{Value::Unnamed, {}};
}

ArrayExtents::Value ArrayExtents::eval(const Expr& e) const {
  const Value unnamed{Value::Unnamed, {}};
  if (!e.type.isArray() || e.type.rank() < 1) return unnamed;
  const size_t rank = static_cast<size_t>(e.type.rank());
  auto named = [&](std::vector<std::optional<std::string>> extents) {
    Value v{Value::Named, {}};
    for (auto& x : extents) {
      if (!x) return unnamed;
      v.names.push_back(*x);
    }
    return v.names.size() == rank ? v : unnamed;
  };
  if (auto* v = dyn_cast<VarRef>(&e)) {
    auto it = Arrays.find(v->name);
    return it == Arrays.end() ? unnamed : it->second;
  }
  if (auto* c = dyn_cast<Cast>(&e))
    return c->operand->type.isArray() && c->operand->type.rank() == e.type.rank() ? eval(*c->operand) : unnamed;
  auto* c = dyn_cast<Call>(&e);
  if (!c || c->target != CallTarget::Library || !c->library) return unnamed;
  if (isElementwiseArrayCall(e)) {
    // Operands of the result's rank with equal extents: no broadcasting.
    Value v;
    bool anyArray = false;
    for (auto& a : c->args) {
      if (!a || !a->type.isArray()) continue;
      if (a->type.rank() != e.type.rank()) return unnamed;
      anyArray = true;
      v = meet(v, eval(*a));
    }
    return anyArray ? v : unnamed;
  }
  if (c->library->newArray != LibraryFunction::NewArray::No && !c->args.empty() && c->args[0]) {
    const Expr& shape = *c->args[0];
    if (shape.type.isInteger()) return named({intName(shape)});
    auto* t = dyn_cast<TupleLit>(&shape);
    if (!t) return unnamed;
    std::vector<std::optional<std::string>> extents;
    for (auto& x : t->elems) extents.push_back(x && x->type.isInteger() ? intName(*x) : std::nullopt);
    return named(extents);
  }
  if (c->library == lookupLibraryFunction("arange")) {
    // arange(stop), arange(0, stop), arange(0, stop, 1) of integers.
    const size_t n = c->args.size();
    auto arg = [&](size_t i) -> const Expr* { return i < n ? c->args[i].get() : nullptr; };
    int64_t start = 0, step = 1;
    const Expr* stop = n == 1 ? arg(0) : arg(1);
    if (n >= 2 && (!arg(0) || !constantInt(*arg(0), start))) return unnamed;
    if (arg(2) && !constantInt(*arg(2), step)) return unnamed;
    if (!stop || !stop->type.isInteger() || start != 0 || step != 1) return unnamed;
    return named({intName(*stop)});
  }
  return unnamed;
}

}  // namespace pydd
