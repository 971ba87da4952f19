// Python's containers and builtins on them: List (append, pop), Dict (get,
// items), the heapq functions on Heap, len, `in` (contains) and print.
#include "stdlib/Rules.h"

namespace pydd::catalog {
namespace {

Type expectContainer(const Call& c, Type::Kind kind, const char* what, TypeRuleError& err) {
  const Type& t = arg(c, 0)->type;
  if (t.kind() != kind) return fail(err, 0, std::string(c.callee) + "() expects " + what + ", got " + t.str());
  return t;
}

/// A value stored into a container converts implicitly only within its kind
/// or upward (bool -> int -> float), as for variables.
bool storable(const Call& c, size_t i, const Type& into, TypeRuleError& err) {
  const Type& t = c.args[i]->type;
  if (into.isScalar() && t.isScalar() && canAssignImplicitly(t.elem(), into.elem())) return true;
  if (t == into) return true;
  fail(err, static_cast<int>(i), "cannot store " + t.str() + " into a container of " + into.str());
  return false;
}
/// The argument converted to the container's element type.
std::string stored(const Call& c, size_t i, const Type& into, const std::string& text) {
  return into.isScalar() && c.args[i]->type != into ? castTo(into.elem(), text) : text;
}

// ---- len and `in` -------------------------------------------------------------

Type lenType(const Call& c, TypeRuleError& err) {
  const Type& t = arg(c, 0)->type;
  if (!t.isArray() && !t.isList() && !t.isDict() && !t.isHeap())
    return fail(err, 0, "len() expects an array, a list, a dict or a heap, got " + t.str());
  return Type::int64();
}
std::string emitLen(const Call& c, llvm::ArrayRef<std::string> args) {
  if (c.args[0]->type.isArray()) return "(" + args[0] + ").shape(0)";
  return "static_cast<int64_t>((" + args[0] + ").size())";
}

/// contains(c, x) is `x in c` (sema writes it with the container first).
Type containsType(const Call& c, TypeRuleError& err) {
  const Type &t = arg(c, 0)->type, &x = arg(c, 1)->type;
  bool scalarElements = t.isArray() || ((t.isList() || t.isDict()) && t.elems()[0].isScalar());
  if (!scalarElements) return fail(err, 0, "'in' needs an array, a list of scalars or a dict, got " + t.str());
  if (!x.isScalar()) return fail(err, 1, "'in' looks for a scalar, got " + x.str());
  return Type::boolTy();
}
std::string emitContains(const Call& c, llvm::ArrayRef<std::string> args) {
  const Type& t = c.args[0]->type;
  // Lists and dicts compare by value as Python does (2.0 in [2] is true,
  // 2.5 in [2] is not): no conversion of the probe to the element type.
  const char* fn = t.isArray() ? "pydd::contains(" : t.isList() ? "pydd::list_contains(" : "pydd::dict_contains(";
  return fn + args[0] + ", " + args[1] + ")";
}

// ---- List ---------------------------------------------------------------------

Type appendType(const Call& c, TypeRuleError& err) {
  Type l = expectContainer(c, Type::Kind::List, "a list", err);
  if (l.isUnknown() || !storable(c, 1, l.elems()[0], err)) return Type();
  return Type::voidTy();
}
std::string emitAppend(const Call& c, llvm::ArrayRef<std::string> args) {
  return "(" + args[0] + ").append(" + stored(c, 1, c.args[0]->type.elems()[0], args[1]) + ")";
}

Type popType(const Call& c, TypeRuleError& err) {
  Type l = expectContainer(c, Type::Kind::List, "a list", err);
  if (l.isUnknown()) return l;
  if (c.args.size() > 1 && !c.args[1]->type.isInteger()) return fail(err, 1, "pop() index must be an integer");
  return l.elems()[0];
}
std::string emitPop(const Call& c, llvm::ArrayRef<std::string> args) {
  return "(" + args[0] + ").pop(" + (c.args.size() > 1 ? "int64_t(" + args[1] + ")" : "") + ")";
}

// ---- Dict ---------------------------------------------------------------------

Type getType(const Call& c, TypeRuleError& err) {
  Type d = expectContainer(c, Type::Kind::Dict, "a dict", err);
  if (d.isUnknown()) return d;
  if (!arg(c, 1)->type.isScalar()) return fail(err, 1, "dict keys are scalars, got " + arg(c, 1)->type.str());
  if (c.args.size() < 3) return fail(err, -1, "get() needs a default value: d.get(key, default)");
  if (!storable(c, 2, d.elems()[1], err)) return Type();
  return d.elems()[1];
}
std::string emitGet(const Call& c, llvm::ArrayRef<std::string> args) {
  return "pydd::dict_get(" + args[0] + ", " + args[1] + ", " + stored(c, 2, c.args[0]->type.elems()[1], args[2]) + ")";
}

/// items(), keys(), values(): lists taken when called (iteration then
/// sees the dict as it was, where Python would raise if it changed size).
Type viewType(const Call& c, TypeRuleError& err) {
  Type d = expectContainer(c, Type::Kind::Dict, "a dict", err);
  if (d.isUnknown()) return d;
  std::string name = c.callee;
  if (name == "keys") return Type::list(d.elems()[0]);
  if (name == "values") return Type::list(d.elems()[1]);
  return Type::list(Type::tuple(d.elems()));
}
std::string emitView(const Call& c, llvm::ArrayRef<std::string> args) {
  return std::string("pydd::dict_") + c.callee + "(" + args[0] + ")";
}

// ---- Heap (heapq) ---------------------------------------------------------------

/// heapinit() makes an empty heap whose element types come from the
/// annotation of the variable it initializes (sema fills them in).
Type heapinitType(const Call&, TypeRuleError&) { return Type::heap(Type()); }
std::string emitHeapinit(const Call& c, llvm::ArrayRef<std::string>) { return cxxType(c.type) + "()"; }

Type heappushType(const Call& c, TypeRuleError& err) {
  Type h = expectContainer(c, Type::Kind::Heap, "a heap", err);
  if (h.isUnknown()) return h;
  size_t want = h.elems().size() + 1;
  if (c.args.size() != want)
    return fail(err, -1, "heappush() on " + h.str() + " takes " + std::to_string(want) + " arguments, got " +
                             std::to_string(c.args.size()));
  for (size_t i = 1; i < want; ++i)
    if (!storable(c, i, h.elems()[i - 1], err)) return Type();
  return Type::voidTy();
}
std::string emitHeappush(const Call& c, llvm::ArrayRef<std::string> args) {
  const Type& h = c.args[0]->type;
  std::string s = "(" + args[0] + ").push(";
  for (size_t i = 1; i < args.size(); ++i) s += (i > 1 ? ", " : "") + stored(c, i, h.elems()[i - 1], args[i]);
  return s + ")";
}

/// heappop/heappeek: the smallest key, or the (key, value) pair.
Type heapTopType(const Call& c, TypeRuleError& err) {
  Type h = expectContainer(c, Type::Kind::Heap, "a heap", err);
  if (h.isUnknown()) return h;
  return h.isKeyValueHeap() ? Type::tuple(h.elems()) : h.elems()[0];
}
std::string emitHeapTop(const Call& c, llvm::ArrayRef<std::string> args) {
  return "(" + args[0] + ")." + (std::string(c.callee) == "heappop" ? "pop()" : "peek()");
}

// ---- print --------------------------------------------------------------------

/// Scalars, and lists, dicts and tuples of them (nested too): what print
/// shows as Python's repr.
bool printableInContainer(const Type& t) {
  if (t.isScalar()) return true;
  if (!t.isList() && !t.isDict() && !t.isTuple()) return false;
  for (const Type& e : t.elems())
    if (!printableInContainer(e)) return false;
  return true;
}

Type printType(const Call& c, TypeRuleError& err) {
  for (size_t i = 0; i < c.args.size(); ++i) {
    const Type& t = c.args[i]->type;
    if (!t.isString() && !(t.isArray() && t.rank() == 1) && !printableInContainer(t))
      return fail(err, static_cast<int>(i), "print() of " + t.str() +
                                                " is not supported; print scalars, 1-D arrays, and lists, dicts and tuples of scalars");
  }
  return Type::voidTy();
}
std::string emitPrint(const Call&, llvm::ArrayRef<std::string> args) { return callText("pydd::print", args); }

/// assertion_error(message): what a failed `assert cond, "message"` calls.
Type assertionErrorType(const Call& c, TypeRuleError& err) {
  if (const Expr* m = arg(c, 0); m && !m->type.isString())
    return fail(err, 0, "an assert message must be a string literal, got " + m->type.str());
  return Type::voidTy();
}
std::string emitAssertionError(const Call&, llvm::ArrayRef<std::string> args) {
  return "pydd::assertion_error(" + (args.empty() ? std::string("\"\"") : args[0]) + ")";
}

Type timeType(const Call&, TypeRuleError&) { return Type::scalar(ScalarKind::Float64); }
std::string emitTime(const Call&, llvm::ArrayRef<std::string>) { return "pydd::wall_time()"; }

}  // namespace

void addContainerFunctions(std::vector<LibraryFunction>& out) {
  using C = LibraryCategory;
  out.push_back(entry("len", C::Query, {"a"}, 1, "len", lenType, emitLen));
  out.back().readsHeaderOnly = true;
  out.push_back(entry("contains", C::Query, {"container", "x"}, 2, "x in container", containsType, emitContains));
  auto method = [&](LibraryFunction f, uint32_t writes) {
    f.methodOnly = true;
    f.writesArgs = writes;
    out.push_back(std::move(f));
  };
  method(entry("append", C::Container, {"list", "x"}, 2, "list.append", appendType, emitAppend), 1);
  out.back().positionalOnly = 2;
  method(entry("pop", C::Container, {"list", "index"}, 1, "list.pop", popType, emitPop), 1);
  out.back().positionalOnly = 2;
  method(entry("get", C::Container, {"dict", "key", "default"}, 2, "dict.get", getType, emitGet), 0);
  out.back().positionalOnly = 3;
  method(entry("items", C::Container, {"dict"}, 1, "dict.items", viewType, emitView), 0);
  method(entry("keys", C::Container, {"dict"}, 1, "dict.keys", viewType, emitView), 0);
  method(entry("values", C::Container, {"dict"}, 1, "dict.values", viewType, emitView), 0);
  out.push_back(entry("heapinit", C::Container, {}, 0, "[]", heapinitType, emitHeapinit));
  LibraryFunction push = entry("heappush", C::Container, {"heap", "*"}, 1, "heapq.heappush", heappushType, emitHeappush);
  push.writesArgs = 1;
  out.push_back(push);
  LibraryFunction pop = entry("heappop", C::Container, {"heap"}, 1, "heapq.heappop", heapTopType, emitHeapTop);
  pop.writesArgs = 1;
  out.push_back(pop);
  out.push_back(entry("heappeek", C::Container, {"heap"}, 1, "heap[0]", heapTopType, emitHeapTop));
  LibraryFunction print = entry("print", C::IO, {"*"}, 0, "print", printType, emitPrint);
  print.io = true;
  out.push_back(print);
  // Each call reads the clock: an effect, so that no pass moves or merges it.
  LibraryFunction time = entry("time", C::IO, {}, 0, "time.time", timeType, emitTime);
  time.io = true;
  out.push_back(time);
  out.push_back(entry("assertion_error", C::IO, {"message"}, 0, "raise AssertionError(message)", assertionErrorType,
                      emitAssertionError));
  // Generic over the element type: complex numbers too.
  acceptComplex(out, {"len", "contains", "append", "pop", "get", "items", "keys", "values", "print"});
}

}  // namespace pydd::catalog
