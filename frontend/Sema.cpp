#include "frontend/Sema.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "ir/Builder.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

// ---- typing rules shared by inference and finalization ----------------------

bool isWeak(const Expr& e) { return isWeakLiteral(e); }

/// The value of an integer literal written in the source (`300`, `-1`),
/// which NumPy 2 refuses to convert to an integer type that cannot hold it
/// (OverflowError); pyddc refuses it at compile time.
bool literalOutOfRange(const Expr& e, ScalarKind k, int64_t& value) {
  if (!isIntegerKind(k) || !isWeakLiteral(e) || !constantInt(e, value)) return false;
  return !integerFits(value, k);
}

bool isBitwise(BinaryOp op) {
  return op == BinaryOp::BitAnd || op == BinaryOp::BitOr || op == BinaryOp::BitXor || op == BinaryOp::Shl ||
         op == BinaryOp::Shr;
}

/// `<`, `<=`, `>`, `>=`: the comparisons complex numbers do not have.
bool isOrdering(CmpOp op) { return op == CmpOp::Lt || op == CmpOp::Le || op == CmpOp::Gt || op == CmpOp::Ge; }

/// The kind both operands of `op` are converted to; Unknown with `err` set
/// when the operation is not defined on these kinds.
Type binaryOperandType(BinaryOp op, const Expr& l, const Expr& r, std::string& err) {
  const Type &lt = l.type, &rt = r.type;
  if (lt.isArray() || rt.isArray()) {
    err = std::string("operator '") + spelling(op) + "' on arrays is not supported yet; use an element loop";
    return Type();
  }
  if (!lt.isScalar() || !rt.isScalar()) {
    err = std::string("unsupported operand types for ") + spelling(op) + ": " + lt.str() + " and " + rt.str();
    return Type();
  }
  ScalarKind k = commonKind(lt.elem(), isWeak(l), rt.elem(), isWeak(r));
  // Python defines neither floor division nor modulo on complex numbers.
  if (isComplexKind(k) && (op == BinaryOp::FloorDiv || op == BinaryOp::Mod)) {
    err = std::string("unsupported operand types for ") + spelling(op) + ": " + lt.str() + " and " + rt.str() +
          " (complex numbers have no floor division or modulo)";
    return Type();
  }
  if (isBitwise(op)) {
    if (isFloatKind(k) || isComplexKind(k)) {
      err = std::string("unsupported operand types for ") + spelling(op) + ": " + lt.str() + " and " + rt.str();
      return Type();
    }
    // bool & bool stays bool; shifts always work on integers.
    if (k == ScalarKind::Bool && (op == BinaryOp::Shl || op == BinaryOp::Shr)) k = ScalarKind::Int64;
    return Type::scalar(k);
  }
  // Arithmetic on bools is arithmetic on ints, as in Python.
  if (k == ScalarKind::Bool) k = ScalarKind::Int64;
  // True division of integers gives float64.
  if (op == BinaryOp::Div && isIntegerKind(k)) k = ScalarKind::Float64;
  return Type::scalar(k);
}

// ---- resolve: calls, keywords, attributes, conversions -------------------------

class Resolver : public Mutator {
 public:
  using Mutator::mutate;
  Resolver(Module& m, Diagnostics& d) : M(m), Diag(d) {}

  /// A new axis in an assignment target (`X[None, 0] = v`) would make the
  /// target a call: rejected at the target.
  void mutate(Stmt& s) override {
    if (auto* a = dyn_cast<Assign>(&s))
      for (const ExprPtr& t : a->targets)
        if (auto* idx = dyn_cast<Index>(t.get()))
          if (std::any_of(idx->indices.begin(), idx->indices.end(), [&](const ExprPtr& i) { return isNewaxis(*i); }))
            Diag.error(t->loc, "a new axis (None or np.newaxis) in an assignment target is not supported; assign to "
                               "the subscript without it");
    Mutator::mutate(s);
  }

  ExprPtr mutate(ExprPtr e) override {
    if (ExprPtr expanded = resolveNewaxis(e)) return expanded;
    if (ExprPtr numpy = resolveNumpy(e)) return numpy;
    // `A.shape[k]` -> shape(A, k): the only use of `.shape` so far.
    if (auto* idx = dyn_cast<Index>(e.get())) {
      if (auto* attr = dyn_cast<Attribute>(idx->base.get()); attr && attr->name == "shape") {
        if (idx->indices.size() != 1) {
          Diag.error(idx->loc, "'.shape' takes one index");
          return e;
        }
        auto call = std::make_unique<Call>(idx->loc, "shape");
        call->args.push_back(std::move(attr->base));
        call->args.push_back(std::move(idx->indices[0]));
        return mutate(std::move(call));
      }
    }
    mutateChildren(*e);
    if (auto* idx = dyn_cast<Index>(e.get())) warnFirstSubscript(*idx);
    if (auto* attr = dyn_cast<Attribute>(e.get())) {
      // Array attributes are library calls: A.shape, A.T, A.ndim, A.size, A.dtype.
      static const std::map<std::string, const char*> attributes = {
          {"shape", "shape"}, {"T", "transpose"}, {"ndim", "ndim"}, {"size", "size"}, {"dtype", "dtype"},
          {"real", "real"}, {"imag", "imag"}};
      auto it = attributes.find(attr->name);
      if (it != attributes.end()) {
        auto call = std::make_unique<Call>(attr->loc, it->second);
        // `real(z)`, not `z.real()`: NumPy's real and imag are attributes, not methods.
        call->isMethod = attr->name != "real" && attr->name != "imag";
        call->args.push_back(std::move(attr->base));
        return resolveCall(std::move(call));
      }
      Diag.error(attr->loc, "attribute '" + attr->name + "' is not supported in pydd kernels");
      return e;
    }
    if (e->kind == ExprKind::Call) return resolveCall(std::move(e));
    return e;
  }

  /// A type name used as a value, such as the dtype argument in
  /// `zeros(n, float64)`, means the typed zero `float64()`.
  ExprPtr typeNameAsValue(ExprPtr e) {
    if (auto* v = dyn_cast<VarRef>(e.get())) {
      ScalarKind k;
      if (parseScalarName(v->name, k) && !isVariable(v->name)) return typedZero(v->loc, k);
    }
    return e;
  }

  Function* Current = nullptr;

 private:
  /// `where(c)[0]` written for NumPy's tuple (see LibraryFunction::warnOnFirstSubscript).
  void warnFirstSubscript(const Index& x) {
    auto* c = dyn_cast<Call>(x.base.get());
    int64_t k;
    if (!c || !c->library || !c->library->warnOnFirstSubscript || c->args.size() != c->library->required ||
        x.indices.size() != 1 || !constantInt(*x.indices[0], k) || k != 0)
      return;
    Diag.warning(x.loc, c->library->subscriptNote);
  }

  // ---- NumPy's spelling: np.sum(x), np.float64, np.pi ----

  /// Whether `e` names the numpy module (`np`, `numpy`) or numpy.linalg.
  bool isNumpyModule(const Expr& e) {
    if (auto* v = dyn_cast<VarRef>(&e))
      return !isVariable(v->name) && std::find(M.numpyAliases.begin(), M.numpyAliases.end(), v->name) != M.numpyAliases.end();
    if (auto* a = dyn_cast<Attribute>(&e)) return a->name == "linalg" && isNumpyModule(*a->base);
    return false;
  }

  /// `np.name(args)` becomes the catalog's function for numpy.name (a
  /// plain call, so that sema goes on as for `from pydd import *`), and
  /// `np.float64`, `np.pi`, ... their values. Null when `e` is neither.
  ExprPtr resolveNumpy(ExprPtr& e) {
    if (auto* c = dyn_cast<Call>(e.get()); c && c->isMethod && c->target == CallTarget::Unresolved &&
                                            !c->args.empty() && isNumpyModule(*c->args[0])) {
      bool linalg = c->args[0]->kind == ExprKind::Attribute;
      std::string name = (linalg ? "linalg." : "") + c->callee;
      c->isMethod = false;
      c->args.erase(c->args.begin());
      ScalarKind k;
      if (!linalg && parseNumpyScalarName(c->callee, k)) {
        c->callee = scalarName(k);  // a conversion, as float64(x)
        return mutate(std::move(e));
      }
      const LibraryFunction* lib = lookupNumpyFunction(name);
      if (!lib) {
        Diag.error(c->loc, "numpy." + name + " is not supported in pydd kernels");
        return std::make_unique<IntLit>(c->loc, 0);
      }
      // Bound here: a user function of the same name does not hide it.
      c->callee = lib->name;
      mutateChildren(*e);
      return bindLibrary(std::move(e), *lib);
    }
    auto* attr = dyn_cast<Attribute>(e.get());
    if (!attr || !isNumpyModule(*attr->base)) return nullptr;
    ScalarKind k;
    if (parseNumpyScalarName(attr->name, k)) return typedZero(attr->loc, k);
    static const std::map<std::string, double> constants = {
        {"pi", M_PI}, {"e", M_E}, {"inf", INFINITY}, {"Inf", INFINITY}, {"nan", NAN}, {"NaN", NAN}, {"euler_gamma", 0.5772156649015329}};
    auto it = constants.find(attr->name);
    if (it != constants.end()) return std::make_unique<FloatLit>(attr->loc, it->second);
    Diag.error(attr->loc, "numpy." + attr->name + " is not supported in pydd kernels");
    return std::make_unique<IntLit>(attr->loc, 0);
  }

  /// np.newaxis, or None in a subscript (the parser's VarRef "None").
  bool isNewaxis(const Expr& e) {
    if (auto* v = dyn_cast<VarRef>(&e)) return v->name == "None";
    auto* a = dyn_cast<Attribute>(&e);
    return a && a->name == "newaxis" && isNumpyModule(*a->base);
  }

  /// `x[:, np.newaxis]`: the subscript without its newaxis entries, then
  /// expand_dims at each one's position in the result (slices and newaxis
  /// entries each give one axis of it, integer subscripts none). Null when
  /// `e` has no newaxis entry.
  ExprPtr resolveNewaxis(ExprPtr& e) {
    auto* idx = dyn_cast<Index>(e.get());
    if (!idx || std::none_of(idx->indices.begin(), idx->indices.end(), [&](ExprPtr& i) { return isNewaxis(*i); }))
      return nullptr;
    std::vector<int64_t> positions;
    std::vector<ExprPtr> rest;
    int64_t axis = 0;
    for (auto& i : idx->indices) {
      if (isNewaxis(*i)) positions.push_back(axis++);
      else {
        if (i->kind == ExprKind::Slice) ++axis;
        rest.push_back(std::move(i));
      }
    }
    ExprPtr result = std::move(idx->base);
    if (!rest.empty()) {
      auto sub = std::make_unique<Index>(idx->loc, std::move(result));
      sub->indices = std::move(rest);
      sub->besideNewaxis = true;
      result = std::move(sub);
    }
    for (int64_t p : positions) {
      auto call = std::make_unique<Call>(idx->loc, "expand_dims");
      call->args.push_back(std::move(result));
      call->args.push_back(std::make_unique<IntLit>(idx->loc, p));
      result = std::move(call);
    }
    return mutate(std::move(result));
  }

  /// NumPy's scalar type names: pydd's, and bool_, float_, int_, intp.
  static bool parseNumpyScalarName(const std::string& name, ScalarKind& k) {
    if (name == "bool_") return k = ScalarKind::Bool, true;
    if (name == "float_") return k = ScalarKind::Float64, true;
    if (name == "complex_" || name == "cdouble") return k = ScalarKind::Complex128, true;
    if (name == "csingle") return k = ScalarKind::Complex64, true;
    if (name == "int_" || name == "intp") return k = ScalarKind::Int64, true;
    return name != "int" && name != "float" && name != "complex" && name != "boolean" && parseScalarName(name, k);
  }

  bool isVariable(const std::string& name) {
    if (!Current) return false;
    for (auto& p : Current->params)
      if (p.name == name) return true;
    return false;
  }

  static ExprPtr typedZero(SourceLoc loc, ScalarKind k) {
    return std::make_unique<Cast>(loc, Type::scalar(k), std::make_unique<IntLit>(loc, 0));
  }

  /// `float64("nan")`, `float("inf")`: the way Python spells these values.
  ExprPtr floatFromString(const StrLit& text, ScalarKind k) {
    llvm::StringRef s = llvm::StringRef(text.value).trim();
    bool negative = s.consume_front("-");
    if (!negative) s.consume_front("+");
    std::string lower = s.lower();
    double v;
    if (lower == "nan") v = std::numeric_limits<double>::quiet_NaN();
    else if (lower == "inf" || lower == "infinity") v = std::numeric_limits<double>::infinity();
    else if (s.getAsDouble(v, /*AllowInexact=*/true)) v = std::nan("");
    if (!isFloatKind(k) || (std::isnan(v) && lower != "nan")) {
      Diag.error(text.loc, std::string("cannot convert the string '") + text.value + "' to " + scalarName(k));
      return std::make_unique<IntLit>(text.loc, 0);
    }
    ExprPtr lit = std::make_unique<FloatLit>(text.loc, negative ? -v : v);
    if (k == ScalarKind::Float64) return lit;
    return std::make_unique<Cast>(text.loc, Type::scalar(k), std::move(lit));
  }

  ExprPtr resolveCall(ExprPtr e) {
    auto& c = static_cast<Call&>(*e);
    if (c.target != CallTarget::Unresolved) return e;
    ScalarKind k;
    if (parseScalarName(c.callee, k)) {
      // int32(x) converts; int32() is a typed zero (the dtype idiom).
      if (!c.keywords.empty()) Diag.error(c.keywords[0].loc, c.callee + "() takes no keyword arguments");
      // Python's complex(re, im): the complex128 with these parts (NumPy's
      // complex128() takes one argument).
      if (c.callee == "complex" && c.args.size() == 2) {
        c.callee = "complex_parts";
        c.isMethod = false;
        return bindLibrary(std::move(e), *lookupLibraryFunction("complex_parts"));
      }
      if (c.args.size() > 1) Diag.error(c.loc, c.callee + (c.callee == "complex" ? "() takes at most 2 arguments" : "() takes at most 1 argument"));
      if (c.args.empty()) return typedZero(c.loc, k);
      if (auto* text = dyn_cast<StrLit>(c.args[0].get())) return floatFromString(*text, k);
      return std::make_unique<Cast>(c.loc, Type::scalar(k), std::move(c.args[0]));
    }
    if (c.callee == "range") {
      Diag.error(c.loc, "range() can only be used as the iterable of a for loop");
      return e;
    }
    if (c.callee == "Array") {
      Diag.error(c.loc, "Array(...) is a type; it can only appear in annotations");
      return e;
    }
    if (c.isMethod) {
      // x.name(args) is name(x, args) for every library function, and the
      // only spelling of container methods such as l.append(v).
      const LibraryFunction* lib = lookupLibraryFunction(c.callee);
      if (!lib) {
        Diag.error(c.loc, "unknown method '" + c.callee + "'");
        return e;
      }
      if (lib->functionOnly) {
        Diag.error(c.loc, "x." + c.callee + "() is NumPy's in-place method, which pydd does not have; write x = " + c.callee +
                              "(x) (a new array)");
        return e;
      }
      return bindLibrary(std::move(e), withMoreArguments(c, *lib));
    }
    if (Function* f = M.find(c.callee)) {
      c.target = CallTarget::User;
      std::vector<std::string> names;
      size_t required = 0;
      for (auto& p : f->params) {
        names.push_back(p.name);
        if (p.defaultValue.empty()) required = names.size();
      }
      bindArguments(c, names, required, false);
      return e;
    }
    const LibraryFunction* lib = lookupLibraryFunction(c.callee);
    if (lib) lib = &withMoreArguments(c, *lib);
    if (!lib) lib = lookupNumpyFunction(c.callee);  // `from numpy import subtract`
    if (lib) {
      if (lib->methodOnly) {
        Diag.error(c.loc, "'" + c.callee + "' is a method; call it as x." + c.callee + "(...)");
        return e;
      }
      return bindLibrary(std::move(e), *lib);
    }
    Diag.error(c.loc, "unknown function '" + c.callee + "'");
    return e;
  }

  /// The entry a call of `lib`'s name binds to: `lib`, or its
  /// moreArgumentsEntry when the call passes more arguments than `lib`
  /// takes (`log(x, base)`, `log(x, base=2)`).
  static const LibraryFunction& withMoreArguments(Call& c, const LibraryFunction& lib) {
    if (!lib.moreArgumentsEntry || c.args.size() + c.keywords.size() <= lib.params.size()) return lib;
    const LibraryFunction* more = lookupLibraryFunction(lib.moreArgumentsEntry);
    if (!more) return lib;
    c.callee = more->name;
    return *more;
  }

  ExprPtr bindLibrary(ExprPtr e, const LibraryFunction& lib) {
    auto& c = static_cast<Call&>(*e);
    c.target = CallTarget::Library;
    c.library = &lib;
    bool variadic = !lib.params.empty() && std::string(lib.params.back()) == "*";
    std::vector<std::string> names(lib.params.begin(), lib.params.end() - (variadic ? 1 : 0));
    // arange(n, dtype=T) is arange(0, n, 1, dtype=T): fill the gap.
    if (std::string(lib.name) == "arange" && c.args.size() == 1 && c.keywords.size() == 1 &&
        c.keywords[0].name == "dtype") {
      c.args.insert(c.args.begin(), std::make_unique<IntLit>(c.loc, 0));
      c.args.push_back(std::make_unique<IntLit>(c.loc, 1));
    }
    bindArguments(c, names, lib.required, variadic);
    // A dtype argument may be written as a bare type name.
    for (size_t i = 0; i < names.size() && i < c.args.size(); ++i)
      if (names[i] == "dtype" && c.args[i]) c.args[i] = typeNameAsValue(std::move(c.args[i]));
    return e;
  }

  /// A default value's text ("3", "-0.5", "True") as a literal.
  static ExprPtr literal(llvm::StringRef text, SourceLoc loc) {
    if (text == "True" || text == "False") return std::make_unique<BoolLit>(loc, text == "True");
    int64_t i;
    if (!text.getAsInteger(10, i)) return std::make_unique<IntLit>(loc, i);
    double d = 0;
    (void)text.getAsDouble(d);
    return std::make_unique<FloatLit>(loc, d);
  }

  /// The catalog's default for parameter `name` of `lib` as an expression,
  /// or null when it has none.
  ExprPtr defaultArgument(const LibraryFunction& lib, const std::string& name, SourceLoc loc) {
    for (auto& [param, value] : lib.defaults) {
      if (name != param) continue;
      llvm::StringRef text(value);
      if (text == "True" || text == "False") return std::make_unique<BoolLit>(loc, text == "True");
      if (text.endswith("()")) return resolveCall(std::make_unique<Call>(loc, text.drop_back(2).str()));
      int64_t i;
      if (!text.getAsInteger(10, i)) return std::make_unique<IntLit>(loc, i);
      double d;
      if (!text.getAsDouble(d)) return std::make_unique<FloatLit>(loc, d);
    }
    return nullptr;
  }

  /// `name=None` as the parser gives it (all_axes(), NumPy's None axis).
  static bool isNoneKeyword(const Expr& e) {
    auto* call = dyn_cast<Call>(&e);
    return call && call->callee == "all_axes" && call->args.empty();
  }
  /// Whether parameter `name` of the callee means something by None: a
  /// library parameter whose default is all_axes() (axis=None, ord=None).
  static bool takesNone(const Call& c, const std::string& name) {
    if (c.target != CallTarget::Library) return false;
    for (auto& [param, value] : c.library->defaults)
      if (param == name && std::string(value) == "all_axes()") return true;
    return false;
  }

  /// Moves keyword arguments into position; checks counts like Python.
  void bindArguments(Call& c, const std::vector<std::string>& names, size_t required, bool variadic) {
    if (!variadic && c.args.size() > names.size()) {
      Diag.error(c.args[names.size()]->loc, c.callee + "() takes " + std::to_string(names.size()) +
                                                " positional argument" + (names.size() == 1 ? "" : "s") + " but " +
                                                std::to_string(c.args.size()) + " were given");
      return;
    }
    for (auto& kw : c.keywords) {
      size_t pos = names.size();
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == kw.name) pos = i;
      if (pos == names.size()) {
        Diag.error(kw.loc, c.callee + "() got an unexpected keyword argument '" + kw.name + "'");
        continue;
      }
      if (c.target == CallTarget::Library && pos < c.library->positionalOnly) {
        Diag.error(kw.loc, c.callee + "() takes no keyword arguments: pass '" + kw.name + "' by position");
        continue;
      }
      if (pos < c.args.size() && c.args[pos]) {
        Diag.error(kw.loc, c.callee + "() got multiple values for argument '" + kw.name + "'");
        continue;
      }
      if (c.args.size() <= pos) c.args.resize(pos + 1);
      if (isNoneKeyword(*kw.value) && !takesNone(c, kw.name)) {
        Diag.error(kw.value->loc, c.callee + "() does not take None for '" + kw.name + "'");
        continue;
      }
      c.args[pos] = std::move(kw.value);
    }
    c.keywords.clear();
    for (size_t i = 0; i < required; ++i) {
      if (i >= c.args.size() || !c.args[i]) {
        Diag.error(c.loc, c.callee + "() missing required argument '" + names[i] + "'");
        return;
      }
    }
    // Trailing omitted optionals are dropped; a gap takes the catalog's
    // default for that parameter, or is an error.
    while (!c.args.empty() && !c.args.back()) c.args.pop_back();
    if (c.target == CallTarget::Library)
      for (size_t i = 0; i < c.args.size(); ++i)
        if (!c.args[i]) c.args[i] = defaultArgument(*c.library, names[i], c.loc);
    // A user function's call passes every argument: its defaults are filled in.
    if (c.target == CallTarget::User) {
      const Function& f = *M.find(c.callee);
      c.args.resize(f.params.size());
      for (size_t i = 0; i < c.args.size(); ++i)
        if (!c.args[i] && !f.params[i].defaultValue.empty()) c.args[i] = literal(f.params[i].defaultValue, c.loc);
    }
    for (size_t i = 0; i < c.args.size(); ++i)
      if (!c.args[i]) Diag.error(c.loc, c.callee + "() missing argument '" + names[i] + "'");
  }

  Module& M;
  Diagnostics& Diag;
};

// ---- per-function typing --------------------------------------------------------

/// The instances of each rank-generic function (one with `Array(T)`
/// parameters), by its name: one per combination of ranks that type-checks.
using RankInstances = std::map<std::string, std::vector<Function*>>;

/// A function whose parameters include `Array(T)` without a rank, as
/// written (its instances have ranks).
bool isRankGeneric(const Function& f) {
  return f.generic.empty() && std::any_of(f.params.begin(), f.params.end(), [](const Param& p) { return p.anyRank; });
}

/// "1, 2 or 4".
std::string listOfRanks(const std::vector<int>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size(); ++i)
    s += (i == 0 ? "" : i + 1 == ranks.size() ? " or " : ", ") + std::to_string(ranks[i]);
  return s;
}

struct VarInfo {
  Type type;
  /// Assigned an empty container (`l = []`) and nothing typed yet: the
  /// element type comes from what the code appends (`l.append(x)`).
  Type empty;
  bool declared = false;  // annotated: the type is fixed
  bool isParam = false;
  SourceLoc loc;          // first definition
};

class FunctionTyper {
 public:
  FunctionTyper(Module& m, Function& f, Diagnostics& d, const RankInstances& instances)
      : M(m), F(f), Diag(d), Instances(instances) {}

  bool run() {
    unsigned before = Diag.errorCount();
    for (auto& p : F.params) {
      if (Vars.count(p.name)) Diag.error(p.loc, "duplicate parameter '" + p.name + "'");
      VarInfo& v = Vars[p.name];
      v.type = p.type;
      v.declared = v.isParam = true;
      v.loc = p.loc;
    }
    collectDeclarations(*F.body);
    if (Diag.errorCount() != before) return false;
    infer();
    if (Diag.errorCount() != before) return false;
    if (F.inferReturn) inferReturnType(*F.body);
    if (Diag.errorCount() != before) return false;
    checkAssignedBeforeUse();
    if (Diag.errorCount() != before) return false;
    finalizeBlock(*F.body, Jump::None);
    if (Diag.errorCount() != before) return false;
    // Locals in order of their first appearance in the source.
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, std::string>> order;
    for (auto& [name, v] : Vars)
      if (!v.isParam) order.push_back({{v.loc.line, v.loc.col}, name});
    std::sort(order.begin(), order.end());
    for (auto& [_, name] : order) F.locals.push_back({name, Vars[name].type, Vars[name].loc});
    return true;
  }

 private:
  // ---- declarations ----

  /// The variable `name`, created at its first definition. Declarations
  /// are collected before inference walks the body, so an earlier plain
  /// assignment still moves the recorded first definition up.
  VarInfo& define(const std::string& name, SourceLoc loc) {
    auto [it, created] = Vars.try_emplace(name);
    VarInfo& v = it->second;
    if (created || (!v.isParam && before(loc, v.loc))) v.loc = loc;
    return v;
  }

  static bool before(SourceLoc a, SourceLoc b) { return a.line < b.line || (a.line == b.line && a.col < b.col); }

  void collectDeclarations(Block& b) {
    for (auto& s : b.stmts) {
      if (auto* a = dyn_cast<Assign>(s.get()); a && !a->declared.isUnknown()) {
        auto* var = dyn_cast<VarRef>(a->targets[0].get());
        if (!var) {
          Diag.error(a->targets[0]->loc, "only variables can be annotated");
          continue;
        }
        VarInfo& v = define(var->name, var->loc);
        if (v.isParam) {
          Diag.error(var->loc, "cannot re-declare parameter '" + var->name + "'");
        } else if (v.declared && v.type != a->declared) {
          Diag.error(var->loc, "'" + var->name + "' was declared " + v.type.str() + " and is now declared " +
                                   a->declared.str());
        }
        v.type = a->declared;
        v.declared = true;
      }
      forEachPart(*s, [](ExprPtr&) {}, [&](Block& inner) { collectDeclarations(inner); });
    }
  }

  // ---- inference ----

  /// Merges `t`, the type of a value assigned at `loc`, into `var`.
  bool unify(VarInfo& v, const std::string& name, const Type& t, SourceLoc loc, bool report) {
    if (t.isUnknown() || v.declared) return false;
    if (t.isVoid()) {
      if (report) Diag.error(loc, "'" + name + "' is assigned the result of a call that returns nothing");
      return false;
    }
    if (t.isString()) {
      if (report) Diag.error(loc, "'" + name + "' cannot hold a string; strings are only print() arguments");
      return false;
    }
    if (!t.isComplete()) {
      // `l = []` is typed by the appends that follow; an empty literal
      // then takes l's type.
      if (v.type.isUnknown() && t.isList()) {
        v.empty = t;
        return false;
      }
      if (v.type.kind() == t.kind()) return false;
      if (report) reportEmpty(name, t, loc);
      return false;
    }
    if (v.type.isUnknown()) {
      v.type = t;
      return true;
    }
    if (v.type == t) return false;
    if (v.type.isScalar() && t.isScalar()) {
      Type joined = Type::scalar(promote(v.type.elem(), t.elem()));
      bool changed = joined != v.type;
      v.type = joined;
      return changed;
    }
    if (report)
      Diag.error(loc, "'" + name + "' is " + v.type.str() + " (from line " + std::to_string(v.loc.line) +
                          ") but is assigned " + t.str() + " here; a variable keeps one type");
    return false;
  }

  void infer() {
    // Types only grow along the promotion lattice, so this terminates;
    // the bound guards against a bug turning into a hang.
    for (int round = 0; round < 64; ++round) {
      Changed = false;
      Reporting = false;
      inferBlock(*F.body);
      if (!Changed) break;
    }
    // One more round that reports: type conflicts, and any error inside a
    // value, which is the real reason when a variable stays unknown.
    unsigned before = Diag.errorCount();
    Reporting = true;
    inferBlock(*F.body);
    if (Diag.errorCount() != before) return;
    for (auto& [name, v] : Vars) {
      if (v.type.isUnknown() && !v.empty.isUnknown())
        reportEmpty(name, v.empty, v.loc);
      else if (v.type.isUnknown())
        Diag.error(v.loc, "cannot infer the type of '" + name + "'; add an annotation '" + name + ": Type'");
    }
  }

  void reportEmpty(const std::string& name, const Type& t, SourceLoc loc) {
    Diag.error(loc, "cannot infer the element type of an empty " + t.str().substr(0, t.str().find('(')) +
                        "; annotate it, as in '" + name + ": " +
                        (t.isDict() ? "Dict(int64, float64)" : t.isHeap() ? "Heap(float64)" : "List(int64)") + " = ...'" +
                        (t.isList() ? " (or append to it)" : ""));
  }

  /// The return type of a function without a return annotation: the type
  /// of the values it returns (scalars promote, as assignments do), or
  /// nothing when no return has a value.
  void inferReturnType(Block& b) {
    for (auto& s : b.stmts) {
      if (auto* r = dyn_cast<Return>(s.get()); r && r->value) {
        Type t = typeOf(r->value, true);
        if (t.isUnknown()) continue;
        VarInfo result;
        result.type = ReturnSoFar;
        result.loc = ReturnLoc;
        if (!t.isComplete() || t.isVoid() || t.isString()) {
          Diag.error(r->value->loc, "cannot infer the return type of '" + F.sourceName() + "' from a value of type " + t.str() +
                                        "; annotate it, as in 'def " + F.sourceName() + "(...) -> Type:'");
          continue;
        }
        if (!ReturnSoFar.isUnknown() && ReturnSoFar != t && !(ReturnSoFar.isScalar() && t.isScalar())) {
          Diag.error(r->value->loc, "'" + F.sourceName() + "' returns " + t.str() + " here and " + ReturnSoFar.str() + " at line " +
                                        std::to_string(ReturnLoc.line) + "; annotate its return type");
          continue;
        }
        if (ReturnSoFar.isUnknown()) ReturnLoc = r->value->loc;
        ReturnSoFar = ReturnSoFar.isUnknown() ? t : ReturnSoFar.isScalar() ? Type::scalar(promote(ReturnSoFar.elem(), t.elem())) : t;
      }
      forEachPart(*s, [](ExprPtr&) {}, [&](Block& inner) { inferReturnType(inner); });
    }
    if (&b == F.body.get()) F.returnType = ReturnSoFar.isUnknown() ? Type::voidTy() : ReturnSoFar;
  }
  Type ReturnSoFar;
  SourceLoc ReturnLoc;

  /// `l.append(x)` on a list so far only assigned `[]` makes it a List of x's type.
  void inferAppend(ExprStmt& s) {
    auto* c = dyn_cast<Call>(s.expr.get());
    if (!c || !c->isMethod || c->callee != "append" || c->args.size() != 2) return;
    auto* var = dyn_cast<VarRef>(c->args[0].get());
    auto it = var ? Vars.find(var->name) : Vars.end();
    if (it == Vars.end() || !it->second.type.isUnknown() || it->second.empty.isUnknown()) return;
    Type elem = typeOf(c->args[1], false);
    if (elem.isUnknown() || elem.isVoid() || elem.isString()) return;
    Changed |= unify(it->second, var->name, Type::list(elem), var->loc, false);
  }

  void inferBlock(Block& b) {
    for (auto& s : b.stmts) inferStmt(*s);
  }

  void inferStmt(Stmt& s) {
    if (auto* a = dyn_cast<Assign>(&s)) {
      if (!a->value) {
        defineTargets(*a);
        return;
      }
      hintShape(a->value.get(), declaredTarget(*a));
      Type vt = typeOf(a->value, Reporting);
      hintShape(nullptr, Type());
      if (a->targets.size() == 1) {
        // `A += B` on an array updates A in place: A keeps its type.
        if (auto* v = dyn_cast<VarRef>(a->targets[0].get()); v && a->augmented && Vars.count(v->name) && Vars[v->name].type.isArray()) return;
        assignInfer(*a->targets[0], vt);
      } else if (auto* tup = dyn_cast<TupleLit>(a->value.get()); tup && !tup->isList && tup->elems.size() == a->targets.size()) {
        for (size_t i = 0; i < a->targets.size(); ++i) assignInfer(*a->targets[i], tup->elems[i]->type);
      } else if (vt.isTuple() && vt.elems().size() == a->targets.size()) {
        for (size_t i = 0; i < a->targets.size(); ++i) assignInfer(*a->targets[i], vt.elems()[i]);
      } else if (vt.isArray() && !a->augmented) {
        // `x, y, z = v` for a 1-D array: its elements, unpack(v, 3), whose
        // tuple the branch above then assigns (on the next round).
        ExprPtr count = std::make_unique<IntLit>(a->value->loc, static_cast<int64_t>(a->targets.size()));
        ExprPtr call = std::make_unique<Call>(a->value->loc, "unpack");
        lowerToCall(call, "unpack", takeOperands(a->value, count), Reporting);
        a->value = std::move(call);
        Changed = true;
      } else {
        defineTargets(*a);
      }
      return;
    }
    if (auto* f = dyn_cast<For>(&s)) {
      VarInfo& v = define(f->var, f->varLoc);
      if (f->isRange) {
        Changed |= unify(v, f->var, Type::int64(), f->varLoc, Reporting);
      } else {
        Type it = typeOf(f->iterable, Reporting);
        Type elem = iteratedType(it);
        if (!elem.isUnknown())
          Changed |= unify(v, f->var, elem, f->varLoc, Reporting);
        else if (!it.isUnknown() && Reporting)
          Diag.error(f->iterable->loc, "a for loop iterates over range(...), an array, a list or a dict, not " + it.str());
      }
      inferBlock(*f->body);
      return;
    }
    if (auto* e = dyn_cast<ExprStmt>(&s)) inferAppend(*e);
    forEachPart(s, [](ExprPtr&) {}, [&](Block& inner) { inferBlock(inner); });
  }

  /// What `for x in c` binds x to: an element of a 1-D array, a row view
  /// of a higher-rank array, a list element, a dict key.
  static Type iteratedType(const Type& t) {
    if (t.isArray()) return t.rank() == 1 ? Type::scalar(t.elem()) : Type::array(t.elem(), t.rank() - 1);
    if (t.isList() || t.isDict()) return t.elems()[0];
    return Type();
  }

  void defineTargets(Assign& a) {
    for (auto& t : a.targets)
      if (auto* v = dyn_cast<VarRef>(t.get())) define(v->name, v->loc);
  }

  void assignInfer(Expr& target, const Type& t) {
    if (auto* var = dyn_cast<VarRef>(&target)) {
      VarInfo& v = define(var->name, var->loc);
      if (v.isParam && !t.isUnknown() && !(v.type.isScalar() && t.isScalar()) && v.type != t && Reporting)
        Diag.error(var->loc, "parameter '" + var->name + "' is " + v.type.str() + " but is assigned " + t.str());
      Changed |= unify(v, var->name, t, var->loc, Reporting);
    }
  }

  // ---- use before assignment ----

  // A read of a local that no path has assigned yet fails in Python with
  // UnboundLocalError; pyddc says so at compile time. "Maybe assigned" is a
  // union over paths, so treating break/return as falling through only adds
  // paths: it can hide an error, never invent one.
  using Assigned = std::set<std::string>;

  void checkAssignedBeforeUse() {
    Assigned state;
    for (auto& p : F.params) state.insert(p.name);
    assignedBlock(*F.body, state);
  }

  void readsIn(Expr& e, const Assigned& state) {
    if (auto* v = dyn_cast<VarRef>(&e)) {
      auto it = Vars.find(v->name);
      if (it != Vars.end() && !state.count(v->name) && Unbound.insert(v->name).second)
        Diag.error(v->loc, "'" + v->name + "' is used before any assignment to it");
      return;
    }
    forEachChild(e, [&](ExprPtr& c) { readsIn(*c, state); });
  }

  void assignedBlock(Block& b, Assigned& state) {
    for (auto& s : b.stmts) assignedStmt(*s, state);
  }

  /// A loop body runs from the state before the loop or after any
  /// iteration. "Maybe assigned" only grows and every statement of the body
  /// is on some path, so that is the state before the loop plus every
  /// variable the body assigns anywhere: collected in one walk, where
  /// iterating the body to a fixed point walked a nest of depth d 3^d times.
  void assignedLoop(Block& body, Assigned& state, const std::string& loopVar, Expr* cond) {
    struct Targets : Visitor {
      using Visitor::visit;
      Assigned& names;
      explicit Targets(Assigned& n) : names(n) {}
      void visit(const Stmt& s) override {
        if (auto* f = dyn_cast<For>(&s)) names.insert(f->var);
        if (auto* a = dyn_cast<Assign>(&s); a && a->value)
          for (auto& t : a->targets)
            if (auto* v = dyn_cast<VarRef>(t.get())) names.insert(v->name);
        visitChildren(s);
      }
    };
    Assigned entry = state;
    if (!loopVar.empty()) entry.insert(loopVar);
    Targets(entry).visit(static_cast<const Stmt&>(body));
    if (cond) readsIn(*cond, entry);
    Assigned inBody = entry;
    assignedBlock(body, inBody);
    state = std::move(entry);
  }

  void assignedStmt(Stmt& s, Assigned& state) {
    switch (s.kind) {
      case StmtKind::Assign: {
        auto& a = static_cast<Assign&>(s);
        if (a.value) readsIn(*a.value, state);
        for (auto& t : a.targets) {
          if (auto* v = dyn_cast<VarRef>(t.get())) {
            if (a.value) state.insert(v->name);
          } else {
            readsIn(*t, state);
          }
        }
        return;
      }
      case StmtKind::If: {
        auto& i = static_cast<If&>(s);
        readsIn(*i.cond, state);
        Assigned other = state;
        assignedBlock(*i.thenBody, state);
        if (i.elseBody) assignedBlock(*i.elseBody, other);
        state.insert(other.begin(), other.end());
        return;
      }
      case StmtKind::While: {
        auto& w = static_cast<While&>(s);
        readsIn(*w.cond, state);
        assignedLoop(*w.body, state, "", w.cond.get());
        return;
      }
      case StmtKind::For: {
        auto& f = static_cast<For&>(s);
        if (f.isRange) {
          for (Expr* bound : {f.start.get(), f.stop.get(), f.step.get()}) readsIn(*bound, state);
        } else {
          readsIn(*f.iterable, state);
        }
        assignedLoop(*f.body, state, f.var, nullptr);
        return;
      }
      default:
        forEachPart(s, [&](ExprPtr& e) { readsIn(*e, state); }, [&](Block& inner) { assignedBlock(inner, state); });
    }
  }

  // ---- expression types ----

  /// Computes and records the type of `e` and its children. With `report`
  /// false (during inference) problems yield Unknown silently.
  Type typeOf(ExprPtr& e, bool report) {
    Type t = computeType(e, report);
    e->type = t;
    return t;
  }

  Type bad(bool report, SourceLoc loc, const std::string& msg) {
    if (report) Diag.error(loc, msg);
    return Type();
  }

  template <typename... Slots>
  static std::vector<ExprPtr> takeOperands(Slots&... slots) {
    std::vector<ExprPtr> out;
    (out.push_back(std::move(slots)), ...);
    return out;
  }

  static const char* arrayComparisonFunction(CmpOp op) {
    switch (op) {
      case CmpOp::Lt: return "lt";
      case CmpOp::Le: return "le";
      case CmpOp::Gt: return "gt";
      case CmpOp::Ge: return "ge";
      case CmpOp::Eq: return "eq";
      default: return "neq";
    }
  }

  /// `S @ x`, `S * x`, `S + T` with a sparse operand: spmv/spmm/spmm_dense,
  /// spm_mul (element-wise, SciPy's multiply), spm_add.
  Type sparseOperator(ExprPtr& slot, Binary& b, bool report) {
    const Type &lt = b.lhs->type, &rt = b.rhs->type;
    switch (b.op) {
      case BinaryOp::MatMul: {
        const char* name = lt.isSparse() && rt.isSparse() ? "spmm"
                           : lt.isSparse() && rt.isArray() && rt.rank() == 1 ? "spmv"
                                                                             : "spmm_dense";
        return lowerToCall(slot, name, takeOperands(b.lhs, b.rhs), report);
      }
      case BinaryOp::Mul:
        // The sparse operand first: the product is commutative and the
        // runtime keeps the sparse operand's structure.
        if (!lt.isSparse()) return lowerToCall(slot, "spm_mul", takeOperands(b.rhs, b.lhs), report);
        return lowerToCall(slot, "spm_mul", takeOperands(b.lhs, b.rhs), report);
      case BinaryOp::Add:
        if (!lt.isSparse()) return lowerToCall(slot, "spm_add", takeOperands(b.rhs, b.lhs), report);
        return lowerToCall(slot, "spm_add", takeOperands(b.lhs, b.rhs), report);
      default:
        return bad(report, b.loc, std::string("operator '") + spelling(b.op) +
                                      "' on a SparseMat is not supported; use @, * (spm_mul) or + (spm_add)");
    }
  }

  /// f(S) for a one-operand element-wise f and a SparseMat S (the call in
  /// `slot`): when f(0) == 0 it maps S's stored values and keeps S's
  /// structure, as SciPy's S.sqrt() and abs(S) do (spm_map); any other f is
  /// NumPy's f of the dense matrix, f(S.toarray()).
  Type sparseElementwise(ExprPtr& slot, bool report) {
    auto& c = static_cast<Call&>(*slot);
    if (c.library->element->preservesZero) {
      ExprPtr name = std::make_unique<StrLit>(c.loc, c.library->name);
      return lowerToCall(slot, "spm_map", takeOperands(c.args[0], name), report);
    }
    ExprPtr operand = std::move(c.args[0]);
    c.args[0] = std::make_unique<IntLit>(operand->loc, 0);  // the slot toarray() takes
    Type dense = lowerToCall(c.args[0], "toarray", takeOperands(operand), report);
    if (dense.isUnknown()) return dense;
    c.args[0]->type = dense;
    return callType(c, report, /*argsTyped=*/true);
  }

  /// Containers whose truth value is "not empty", as in Python.
  static bool isSized(const Type& t) { return t.isList() || t.isDict() || t.isHeap(); }

  /// Replaces `slot` by a call of the library function `name` on `args`
  /// and types it: how sema rewrites operators on arrays (a + b becomes
  /// add(a, b)), which is what later passes optimize. The caller has typed
  /// the operands in `args`; the literals it adds are typed here.
  Type lowerToCall(ExprPtr& slot, const char* name, std::vector<ExprPtr> args, bool report) {
    auto call = std::make_unique<Call>(slot->loc, name);
    call->target = CallTarget::Library;
    call->library = lookupLibraryFunction(name);
    call->args = std::move(args);
    slot = std::move(call);
    return callType(static_cast<Call&>(*slot), report, /*argsTyped=*/true);
  }

  Type computeType(ExprPtr& slot, bool report) {
    Expr& e = *slot;
    switch (e.kind) {
      case ExprKind::IntLit: return Type::int64();
      case ExprKind::FloatLit: return static_cast<FloatLit&>(e).imaginary ? Type::complex128() : Type::float64();
      case ExprKind::BoolLit: return Type::boolTy();
      case ExprKind::StrLit: return Type::string();
      case ExprKind::Var: {
        auto& v = static_cast<VarRef&>(e);
        auto it = Vars.find(v.name);
        if (it != Vars.end()) return it->second.type;
        ScalarKind k;
        if (M.find(v.name) || lookupLibraryFunction(v.name))
          return bad(report, v.loc, "function '" + v.name + "' cannot be used as a value");
        if (parseScalarName(v.name, k))
          return bad(report, v.loc, "type '" + v.name + "' cannot be used as a value here; write " + v.name + "() for a typed zero");
        return bad(report, v.loc, "name '" + v.name + "' is not defined");
      }
      case ExprKind::Unary: {
        auto& u = static_cast<Unary&>(e);
        Type t = typeOf(u.operand, report);
        if (t.isUnknown()) return t;
        if (t.isArray()) {
          if (u.op == UnaryOp::Invert)
            return bad(report, u.loc, "'~' on arrays is not supported; use logical_not for bool arrays");
          // +A is a copy in NumPy (numpy.positive).
          return lowerToCall(slot, u.op == UnaryOp::Neg ? "minus" : "copy", takeOperands(u.operand), report);
        }
        if (t.isSparse() && u.op == UnaryOp::Neg) {
          ExprPtr name = std::make_unique<StrLit>(u.loc, "minus");
          return lowerToCall(slot, "spm_map", takeOperands(u.operand, name), report);
        }
        if (!t.isScalar()) return bad(report, u.loc, "bad operand type for unary operator: " + t.str());
        if (u.op == UnaryOp::Invert && (t.isFloat() || t.isComplex()))
          return bad(report, u.loc, "bad operand type for unary ~: " + t.str());
        return t.isBool() ? Type::int64() : t;
      }
      case ExprKind::Binary: {
        auto& b = static_cast<Binary&>(e);
        Type lt = typeOf(b.lhs, report), rt = typeOf(b.rhs, report);
        if (lt.isUnknown() || rt.isUnknown()) return Type();
        if (lt.isSparse() || rt.isSparse()) return sparseOperator(slot, b, report);
        if (lt.isArray() || rt.isArray() || b.op == BinaryOp::MatMul) {
          const char* name = elementwiseOperatorName(b.op);
          if (!name)
            return bad(report, b.loc, std::string("operator '") + spelling(b.op) +
                                          "' on arrays is not supported; use logical_and/logical_or for bool arrays");
          return lowerToCall(slot, name, takeOperands(b.lhs, b.rhs), report);
        }
        std::string err;
        Type t = binaryOperandType(b.op, *b.lhs, *b.rhs, err);
        if (t.isUnknown()) return bad(report, b.loc, err);
        return t;
      }
      case ExprKind::Compare: {
        auto& c = static_cast<Compare&>(e);
        bool known = true, arrays = false, membership = false;
        for (auto& o : c.operands) {
          Type t = typeOf(o, report);
          if (t.isUnknown()) known = false;
          arrays |= t.isArray();
        }
        for (CmpOp op : c.ops) membership |= op == CmpOp::In || op == CmpOp::NotIn;
        if (!known) return Type();
        if ((arrays || membership) && c.operands.size() > 2)
          return bad(report, c.loc, membership ? "'in' cannot be part of a comparison chain in pydd kernels"
                                               : "a comparison chain on arrays is ambiguous; combine comparisons with logical_and");
        if (membership) {
          // `x in c` is contains(c, x); `x not in c` is not contains(c, x).
          bool negated = c.ops[0] == CmpOp::NotIn;
          Type t = lowerToCall(slot, "contains", takeOperands(c.operands[1], c.operands[0]), report);
          if (!negated || t.isUnknown()) return t;
          slot->type = t;
          slot = std::make_unique<Not>(slot->loc, std::move(slot));
          return Type::boolTy();
        }
        if (arrays) return lowerToCall(slot, arrayComparisonFunction(c.ops[0]), takeOperands(c.operands[0], c.operands[1]), report);
        for (auto& o : c.operands)
          if (!o->type.isScalar()) return bad(report, o->loc, "comparison of " + o->type.str() + " is not supported");
        for (size_t i = 0; i < c.ops.size(); ++i)
          if (isOrdering(c.ops[i]) && (c.operands[i]->type.isComplex() || c.operands[i + 1]->type.isComplex()))
            return bad(report, c.loc, std::string("'") + spelling(c.ops[i]) + "' is not supported between " +
                                          c.operands[i]->type.str() + " and " + c.operands[i + 1]->type.str() +
                                          ": complex numbers have no order (compare .real or abs(...))");
        return Type::boolTy();
      }
      case ExprKind::Logical: {
        auto& l = static_cast<Logical&>(e);
        Type a = typeOf(l.lhs, report), b = typeOf(l.rhs, report);
        if (a.isUnknown() || b.isUnknown()) return Type();
        // On arrays `and`/`or` are element-wise (pydd's meaning; NumPy
        // itself refuses the truth value of an array).
        if (a.isArray() || b.isArray())
          return lowerToCall(slot, l.isAnd ? "logical_and" : "logical_or", takeOperands(l.lhs, l.rhs), report);
        // A list, dict or heap stands for its non-emptiness, as in `while h:`.
        for (Expr* o : {l.lhs.get(), l.rhs.get()})
          if (!o->type.isScalar() && !isSized(o->type))
            return bad(report, o->loc, "the truth value of " + o->type.str() + " is ambiguous");
        return Type::boolTy();
      }
      case ExprKind::Not: {
        Type t = typeOf(static_cast<Not&>(e).operand, report);
        if (t.isUnknown()) return t;
        if (t.isArray()) return lowerToCall(slot, "logical_not", takeOperands(static_cast<Not&>(e).operand), report);
        if (!t.isScalar() && !isSized(t)) return bad(report, e.loc, "the truth value of " + t.str() + " is ambiguous");
        return Type::boolTy();
      }
      case ExprKind::Select: {
        auto& s = static_cast<Select&>(e);
        Type c = typeOf(s.cond, report);
        Type a = typeOf(s.trueValue, report), b = typeOf(s.falseValue, report);
        if (c.isUnknown() || a.isUnknown() || b.isUnknown()) return Type();
        if (!c.isScalar()) return bad(report, s.cond->loc, "the truth value of " + c.str() + " is ambiguous");
        if (a.isScalar() && b.isScalar())
          return Type::scalar(commonKind(a.elem(), isWeak(*s.trueValue), b.elem(), isWeak(*s.falseValue)));
        if (a == b) return a;
        return bad(report, s.loc, "both branches of a conditional expression must have one type, got " + a.str() + " and " + b.str());
      }
      case ExprKind::Call: {
        auto& c = static_cast<Call&>(e);
        bool known = true;
        for (auto& a : c.args)
          if (typeOf(a, report).isUnknown()) known = false;
        if (!known) return Type();
        if (c.target == CallTarget::Library && c.library->element && c.args.size() == 1 && c.args[0]->type.isSparse())
          return sparseElementwise(slot, report);
        return callType(c, report, /*argsTyped=*/true);
      }
      case ExprKind::Index: {
        auto& x = static_cast<Index&>(e);
        // x[mask] and x[idx] (a bool or an integer array among slices) read
        // through extract(), mask_take() and take(); stores through them are
        // statements of their own (maskOrIndexStore).
        size_t pos;
        int axis;
        switch (arrayIndex(x, report, pos, axis)) {
          case ArrayIndexKind::None: break;
          case ArrayIndexKind::Invalid: return Type();
          case ArrayIndexKind::Mask:
          case ArrayIndexKind::Indices: {
            if (x.besideNewaxis)
              return bad(report, x.indices[pos]->loc,
                         "np.newaxis in a subscript with an index array or a mask is not supported; index first, then "
                         "add the axis with expand_dims(a, axis)");
            if (TypingTarget)
              return bad(report, x.loc, "storing through a boolean mask or an index array is not supported here; use a loop");
            bool mask = x.indices[pos]->type.elem() == ScalarKind::Bool;
            int rank = x.base->type.rank();
            if (mask && x.indices.size() == 1 && x.indices[0]->type.rank() == rank)
              return lowerToCall(slot, "extract", takeOperands(x.indices[0], x.base), report);
            if (!mask && rank == 1) return lowerToCall(slot, "take", takeOperands(x.base, x.indices[0]), report);
            ExprPtr view = viewAroundArrayIndex(x, pos);
            ExprPtr ax = std::make_unique<IntLit>(x.loc, axis);
            return lowerToCall(slot, mask ? "mask_take" : "take", takeOperands(view, x.indices[pos], ax), report);
          }
        }
        return indexType(x, report);
      }
      case ExprKind::Attribute: return Type();  // reported by the resolver
      case ExprKind::Cast: {
        auto& c = static_cast<Cast&>(e);
        Type t = typeOf(c.operand, report);
        if (t.isUnknown()) return Type();
        if (!t.isScalar()) return bad(report, c.loc, "cannot convert " + t.str() + " to " + c.target.str());
        // Python's float(z) and int(z) raise TypeError; NumPy's astype
        // drops the imaginary part with a warning. Neither is silent here.
        if (t.isComplex() && !c.target.isComplex() && !c.target.isBool())
          return bad(report, c.loc, "cannot convert " + t.str() + " to " + c.target.str() +
                                        "; take z.real, z.imag or abs(z) first");
        if (int64_t v; literalOutOfRange(*c.operand, c.target.elem(), v))
          return bad(report, c.operand->loc, "integer literal " + std::to_string(v) + " is out of bounds for " + c.target.str());
        return c.target;
      }
      case ExprKind::TupleLit: {
        auto& t = static_cast<TupleLit&>(e);
        std::vector<Type> elems;
        bool known = true;
        for (auto& el : t.elems) {
          elems.push_back(typeOf(el, report));
          known &= !elems.back().isUnknown();
        }
        if (!known) return Type();
        if (!t.isList) return Type::tuple(std::move(elems));
        return Type::list(elementType(t.elems, "list", report));
      }
      case ExprKind::DictLit: {
        auto& d = static_cast<DictLit&>(e);
        bool known = true;
        for (size_t i = 0; i < d.keys.size(); ++i) {
          known &= !typeOf(d.keys[i], report).isUnknown();
          known &= !typeOf(d.values[i], report).isUnknown();
        }
        if (!known) return Type();
        Type k = elementType(d.keys, "dict keys", report), v = elementType(d.values, "dict values", report);
        if (k.isComplete() && (!k.isScalar() || k.isComplex()))
          return bad(report, d.keys[0]->loc, "dict keys must be bool or real numbers, got " + k.str());
        return Type::dict(k, v);
      }
      case ExprKind::Slice: {
        auto& sl = static_cast<Slice&>(e);
        for (ExprPtr* part : {&sl.start, &sl.stop, &sl.step}) {
          if (!*part) continue;
          Type t = typeOf(*part, report);
          if (t.isUnknown()) return t;
          if (!t.isInteger() && !t.isBool())
            return bad(report, (*part)->loc, "slice indices must be integers, got " + t.str());
        }
        return Type::int64();  // a placeholder: a slice is not a value
      }
    }
    return Type();
  }

  /// The element type of a list literal or of dict keys/values: the common
  /// kind of scalars (literals weak, so [1, 2] is int64 and [1, x] takes
  /// x's type), or one type shared by every element. Unknown inside the
  /// result when empty.
  Type elementType(const std::vector<ExprPtr>& elems, const char* what, bool report) {
    if (elems.empty()) return Type();
    Type t = elems[0]->type;
    bool weak = isWeak(*elems[0]);
    for (size_t i = 1; i < elems.size(); ++i) {
      const Expr& el = *elems[i];
      if (t.isScalar() && el.type.isScalar()) {
        t = Type::scalar(commonKind(t.elem(), weak, el.type.elem(), isWeak(el)));
        weak = weak && isWeak(el);
      } else if (t != el.type) {
        bad(report, el.loc, std::string(what) + " must share one type, got " + t.str() + " and " + el.type.str());
        return Type::voidTy();
      }
    }
    return t;
  }

  /// How an array is indexed: without an array among the indices, with one
  /// bool mask or one integer index array among slices (NumPy's advanced
  /// indexing with a single advanced index), or in a way pydd does not
  /// support (reported).
  enum class ArrayIndexKind { None, Mask, Indices, Invalid };

  /// For an array x with an array among its indices: the index's position
  /// in x.indices and the first axis of x it applies to. The other indices
  /// must be slices: they only make a view, so the selection applies to
  /// that view along the same axis.
  ArrayIndexKind arrayIndex(Index& x, bool report, size_t& pos, int& axis) {
    // Typed quietly: indexType reports what is wrong inside the indices.
    Type bt = typeOf(x.base, false);
    if (!bt.isArray()) return ArrayIndexKind::None;
    std::vector<size_t> arrays;
    for (size_t i = 0; i < x.indices.size(); ++i) {
      if (x.indices[i]->kind == ExprKind::Slice) continue;
      Type it = typeOf(x.indices[i], false);
      if (it.isUnknown()) return ArrayIndexKind::None;
      if (it.isArray()) arrays.push_back(i);
    }
    if (arrays.empty()) return ArrayIndexKind::None;
    const Expr& first = *x.indices[arrays[0]];
    if (arrays.size() > 1) {
      bad(report, x.indices[arrays[1]]->loc,
          "indexing with more than one index array or mask (as in A[rows, cols]) is not supported; index one axis at a time "
          "(A[rows][:, cols]) or use a loop");
      return ArrayIndexKind::Invalid;
    }
    pos = arrays[0];
    const Type& it = first.type;
    bool mask = it.elem() == ScalarKind::Bool;
    if (!mask && !isIntegerKind(it.elem())) {
      bad(report, first.loc, "arrays used as indices must be of integer or boolean type, got " + it.str());
      return ArrayIndexKind::Invalid;
    }
    // Integer indices next to it (A[i, idx], A[idx, j]) index the view
    // first: NumPy puts the selection where the array index stands. With a
    // slice between them NumPy moves the selection's axes first instead.
    size_t lo = pos, hi = pos;
    int ints = 0, slicesBefore = 0;
    for (size_t i = 0; i < x.indices.size(); ++i) {
      if (x.indices[i]->kind == ExprKind::Slice) {
        slicesBefore += i < pos;
        continue;
      }
      if (i == pos) continue;
      if (!x.indices[i]->type.isInteger() && !x.indices[i]->type.isBool()) {
        bad(report, x.indices[i]->loc, "array indices must be integers, got " + x.indices[i]->type.str());
        return ArrayIndexKind::Invalid;
      }
      ++ints;
      lo = std::min(lo, i), hi = std::max(hi, i);
    }
    for (size_t i = lo; i < hi; ++i)
      if (x.indices[i]->kind == ExprKind::Slice) {
        bad(report, x.indices[i]->loc,
            std::string("a slice between an integer index and ") + (mask ? "a boolean mask" : "an index array") +
                " is not supported (NumPy moves the selected axes first); index with the integer first");
        return ArrayIndexKind::Invalid;
      }
    int consumed = static_cast<int>(x.indices.size()) - 1 + (mask ? it.rank() : 1);
    if (consumed > bt.rank()) {
      bad(report, x.loc, "too many indices for array: array is " + std::to_string(bt.rank()) + "-dimensional, but " +
                             std::to_string(consumed) + " were indexed");
      return ArrayIndexKind::Invalid;
    }
    int result = bt.rank() - ints - (mask ? it.rank() : 1) + (mask ? 1 : it.rank());
    if (result > 8) {
      bad(report, x.loc, "indexing " + bt.str() + " with " + it.str() + " gives an array of " + std::to_string(result) +
                             " dimensions; arrays have at most 8");
      return ArrayIndexKind::Invalid;
    }
    axis = slicesBefore;
    return mask ? ArrayIndexKind::Mask : ArrayIndexKind::Indices;
  }

  /// The array an array index at `pos` selects from: x's base, or the view
  /// the other indices (slices) make of it, with full slices in place of
  /// the array index's axes. Moves x.base (and the slices) out of x.
  ExprPtr viewAroundArrayIndex(Index& x, size_t pos) {
    bool full = true;
    for (size_t i = 0; i < x.indices.size(); ++i) {
      if (i == pos) continue;
      auto* sl = dyn_cast<Slice>(x.indices[i].get());
      full = full && sl && !sl->start && !sl->stop && !sl->step;
    }
    if (full) return std::move(x.base);
    auto view = std::make_unique<Index>(x.base->loc, std::move(x.base));
    const Type& it = x.indices[pos]->type;
    int axes = it.elem() == ScalarKind::Bool ? it.rank() : 1;
    for (size_t i = 0; i < x.indices.size(); ++i) {
      if (i != pos) {
        view->indices.push_back(std::move(x.indices[i]));
        continue;
      }
      for (int k = 0; k < axes; ++k) view->indices.push_back(std::make_unique<Slice>(x.indices[pos]->loc));
    }
    return view;
  }

  /// `A[i, j]` (an element), `A[i]`/`A[:, j]` (a view), `L[i]`, `d[k]`, `t[0]`.
  Type indexType(Index& x, bool report) {
    Type bt = typeOf(x.base, report);
    bool known = !bt.isUnknown();
    int integers = 0, slices = 0;
    for (auto& i : x.indices) {
      Type it = typeOf(i, report);
      if (it.isUnknown()) {
        known = false;
        continue;
      }
      if (i->kind == ExprKind::Slice) {
        ++slices;
        continue;
      }
      if (bt.isDict()) continue;  // keys are checked below
      if (!it.isInteger() && !it.isBool())
        return bad(report, i->loc, (bt.isList() ? "list indices must be integers, got " : "array indices must be integers, got ") + it.str());
      ++integers;
    }
    if (!known) return Type();
    if (bt.isSparse()) {
      if (x.indices.size() != 2 || slices)
        return bad(report, x.loc, "a SparseMat is indexed by a row and a column, as in S[r, c]");
      return Type::scalar(bt.elem());
    }
    if (bt.isArray()) {
      int n = static_cast<int>(x.indices.size());
      if (n > bt.rank())
        return bad(report, x.loc, "too many indices for array: array is " + std::to_string(bt.rank()) +
                                      "-dimensional, but " + std::to_string(n) + " were indexed");
      if (integers == bt.rank()) return Type::scalar(bt.elem());
      return Type::array(bt.elem(), bt.rank() - integers);
    }
    if (x.indices.size() != 1)
      return bad(report, x.loc, bt.str() + " takes one index, got " + std::to_string(x.indices.size()));
    if (slices) return bad(report, x.indices[0]->loc, "slices of " + bt.str() + " are not supported; slices apply to arrays");
    if (bt.isList()) return bt.elems()[0];
    if (bt.isDict()) {
      const Type& k = x.indices[0]->type;
      if (!k.isScalar() || !canAssignImplicitly(k.elem(), bt.elems()[0].elem()))
        return bad(report, x.indices[0]->loc, "a key of " + bt.str() + " cannot be " + k.str());
      return bt.elems()[1];
    }
    if (bt.isTuple()) {
      int64_t i;
      if (!constantInt(*x.indices[0], i) || i < -static_cast<int64_t>(bt.elems().size()) ||
          i >= static_cast<int64_t>(bt.elems().size()))
        return bad(report, x.indices[0]->loc, "a tuple index must be a constant in range, as in t[0]");
      return bt.elems()[static_cast<size_t>(i < 0 ? i + static_cast<int64_t>(bt.elems().size()) : i)];
    }
    std::string note;
    if (auto* c = dyn_cast<Call>(x.base.get()); c && c->library && c->library->subscriptNote && !c->library->warnOnFirstSubscript)
      note = std::string("; ") + c->library->subscriptNote;
    return bad(report, x.base->loc, bt.str() + " cannot be indexed" + note);
  }


  /// The function a call of a user function runs: of a rank-generic one,
  /// the instance for the ranks of the arguments (null when there is none,
  /// reported with `report`).
  Function* calleeOf(const Call& c, bool report) {
    Function* f = M.find(c.callee);
    if (!isRankGeneric(*f)) return f;
    const std::vector<Function*>& instances = Instances.at(f->name);
    auto rankAt = [&](size_t i) { return c.args[i]->type.isArray() ? c.args[i]->type.rank() : 0; };
    for (Function* inst : instances) {
      bool match = true;
      for (size_t i = 0; i < f->params.size(); ++i)
        if (f->params[i].anyRank && rankAt(i) != inst->params[i].type.rank()) match = false;
      if (match) return inst;
    }
    // A generic function without instances has had its error reported.
    if (!report || instances.empty()) return nullptr;
    std::string given;
    for (size_t i = 0; i < f->params.size(); ++i) {
      if (!f->params[i].anyRank) continue;
      std::vector<int> ranks;
      for (Function* inst : instances) ranks.push_back(inst->params[i].type.rank());
      std::sort(ranks.begin(), ranks.end());
      ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
      if (!std::count(ranks.begin(), ranks.end(), rankAt(i))) {
        Diag.error(c.args[i]->loc, "argument '" + f->params[i].name + "' of " + c.callee + "() must be an array of rank " +
                                       listOfRanks(ranks) + ", not " + c.args[i]->type.str());
        return nullptr;
      }
      given += (given.empty() ? "" : ", ") + f->params[i].name + ": " + std::to_string(rankAt(i));
    }
    Diag.error(c.loc, c.callee + "() does not take arrays of these ranks together (" + given +
                          "): its Array(T) parameters without subscripts share one rank");
    return nullptr;
  }

  /// `argsTyped`: the caller has just typed the arguments (it typed the
  /// operands it lowers, or the call's own arguments to choose a form);
  /// only nodes without a type yet, the literals it added, are typed here.
  /// Typing them again made each level of a nested call or operator chain
  /// type its subtree twice: exponential in the nesting, quadratic in a chain.
  Type callType(Call& c, bool report, bool argsTyped = false) {
    bool known = true;
    for (auto& a : c.args)
      if ((argsTyped && !a->type.isUnknown() ? a->type : typeOf(a, report)).isUnknown()) known = false;
    if (!known) return Type();
    if (c.target == CallTarget::User) {
      Function* callee = calleeOf(c, report);
      if (!callee) return Type();
      if (callee->returnType.isAnyRankArray())  // typed after its callers: only in a cycle of calls
        return bad(report, c.loc, "'" + c.callee + "' is called recursively, so the rank of its result cannot be inferred; annotate it");
      return callee->returnType;
    }
    if (c.target == CallTarget::Library) {
      // `x: Array(T, n) = zeros(l)` with a List shape: the annotation gives
      // the rank, checked against the list's length when it runs.
      // (A list written out, `zeros([2, n])`, has its rank already.)
      if (&c == ShapeHint.call && c.library->newArray != LibraryFunction::NewArray::No && !c.args.empty() &&
          c.args[0]->kind != ExprKind::TupleLit && c.args[0]->type.isList() && c.args[0]->type.elems()[0].isInteger()) {
        SourceLoc loc = c.args[0]->loc;
        ExprPtr list = std::move(c.args[0]);
        ExprPtr rank = std::make_unique<IntLit>(loc, ShapeHint.rank);
        c.args[0] = std::make_unique<IntLit>(loc, 0);
        Type shape = lowerToCall(c.args[0], "shape_from_list", takeOperands(list, rank), report);
        if (shape.isUnknown()) return Type();
        c.args[0]->type = shape;
      }
      if (!c.library->acceptsComplex)
        for (auto& a : c.args)
          if (a && (a->type.isScalar() || a->type.isArray() || a->type.isSparse()) && isComplexKind(a->type.elem()))
            return bad(report, a->loc, std::string(c.callee) + "() does not support complex numbers (got " + a->type.str() + ")");
      TypeRuleError err;
      Type t = c.library->resultType(c, err);
      if (t.isUnknown()) {
        SourceLoc at = err.argIndex >= 0 && err.argIndex < static_cast<int>(c.args.size()) ? c.args[err.argIndex]->loc : c.loc;
        return bad(report, at, err.message);
      }
      return t;
    }
    return Type();  // unresolved: reported by the resolver
  }

  /// The value of an assignment to a variable annotated as an array (or of
  /// a return with an annotated array type), while it is typed: an
  /// allocation there may take a List shape, of the annotation's rank.
  struct {
    const Expr* call = nullptr;
    int rank = 0;
  } ShapeHint;
  void hintShape(const Expr* value, const Type& target) {
    ShapeHint.call = target.isArray() ? value : nullptr;
    ShapeHint.rank = target.isArray() ? target.rank() : 0;
  }
  /// The annotated array type `a` stores into, or Unknown.
  Type declaredTarget(const Assign& a) {
    if (a.targets.size() != 1) return Type();
    auto* v = dyn_cast<VarRef>(a.targets[0].get());
    auto it = v ? Vars.find(v->name) : Vars.end();
    return it != Vars.end() && it->second.declared ? it->second.type : Type();
  }

  // ---- finalize: check statements, make conversions explicit ----

  /// Wraps `e` in a Cast to `to` if it is a scalar of another type.
  static ExprPtr convert(ExprPtr e, const Type& to) {
    if (e->type == to || !e->type.isScalar() || !to.isScalar()) return e;
    // Fold conversions of literals so the IR reads naturally.
    if (auto* i = dyn_cast<IntLit>(e.get())) {
      if (to.isFloat()) {
        auto f = std::make_unique<FloatLit>(i->loc, static_cast<double>(i->value));
        f->type = to;
        if (to == Type::float64()) return f;
        return std::make_unique<Cast>(i->loc, to, std::move(f));
      }
    }
    SourceLoc loc = e->loc;
    return std::make_unique<Cast>(loc, to, std::move(e));
  }

  /// Converts a value for storage into something of type `to`, checking
  /// that the conversion is one NumPy's same-kind rule would do silently.
  ExprPtr convertForAssignment(ExprPtr e, const Type& to, const std::string& what) {
    const Type& from = e->type;
    if (from.isUnknown()) return e;
    if (to.isScalar() && from.isScalar()) {
      if (int64_t v; literalOutOfRange(*e, to.elem(), v))
        Diag.error(e->loc, "integer literal " + std::to_string(v) + " does not fit in " + to.str() + " for " + what);
      else if (!canAssignImplicitly(from.elem(), to.elem()))
        Diag.error(e->loc, "cannot implicitly convert " + from.str() + " to " + to.str() + " for " + what +
                               (from.isComplex() ? "; take .real, .imag or abs(...)" : "; write " + to.str() + "(...) to convert"));
      return convert(std::move(e), to);
    }
    if (from != to && (to.isList() || to.isDict() || to.isHeap()) && from.kind() == to.kind())
      return adaptContainerLiteral(std::move(e), to, what);
    if (auto* tup = dyn_cast<TupleLit>(e.get()); tup && !tup->isList && to.isTuple() && tup->elems.size() == to.elems().size()) {
      // `return i, x` into a declared (int64, float64): part by part.
      for (size_t i = 0; i < tup->elems.size(); ++i)
        tup->elems[i] = convertForAssignment(std::move(tup->elems[i]), to.elems()[i], "part " + std::to_string(i + 1) + " of " + what);
      e->type = to;
      return e;
    }
    if (from != to) Diag.error(e->loc, "expected " + to.str() + " for " + what + ", got " + from.str());
    return e;
  }

  /// A container literal (`[]`, `[1, 2]`, `{}`, heapinit()) takes the
  /// container type it is stored as: `x: List(float64) = [1, 2]` holds
  /// floats. Other container values must have the type exactly.
  ExprPtr adaptContainerLiteral(ExprPtr e, const Type& to, const std::string& what) {
    if (auto* list = dyn_cast<TupleLit>(e.get()); list && list->isList) {
      for (auto& el : list->elems) el = convertForAssignment(std::move(el), to.elems()[0], "an element of " + what);
    } else if (auto* dict = dyn_cast<DictLit>(e.get())) {
      for (auto& k : dict->keys) k = convertForAssignment(std::move(k), to.elems()[0], "a key of " + what);
      for (auto& v : dict->values) v = convertForAssignment(std::move(v), to.elems()[1], "a value of " + what);
    } else if (auto* c = dyn_cast<Call>(e.get()); !(c && c->library && std::string(c->callee) == "heapinit")) {
      Diag.error(e->loc, "expected " + to.str() + " for " + what + ", got " + e->type.str());
      return e;
    }
    e->type = to;
    return e;
  }

  /// The truth value of a list, dict or heap: whether it is non-empty.
  ExprPtr truthValue(ExprPtr e) {
    if (!isSized(e->type)) return convert(std::move(e), Type::boolTy());
    auto len = std::make_unique<Call>(e->loc, "len");
    len->target = CallTarget::Library;
    len->library = lookupLibraryFunction("len");
    len->type = Type::int64();
    len->args.push_back(std::move(e));
    return convert(std::move(len), Type::boolTy());
  }

  /// What `break` and `continue` may leave from here.
  enum class Jump { None, Loop, ParallelLoop, Task };
  /// How many async, finish and isolated blocks enclose the statement.
  int TaskDepth = 0;

  void finalizeBlock(Block& b, Jump jump) {
    for (auto& s : b.stmts) {
      if (StmtPtr store = maskOrIndexStore(*s)) s = std::move(store);
      finalizeStmt(*s, jump);
    }
    // Bare declarations (`x: float64`) have done their work in inference.
    auto isDeclaration = [](const StmtPtr& st) {
      auto* a = dyn_cast<Assign>(st.get());
      return a && !a->value;
    };
    b.stmts.erase(std::remove_if(b.stmts.begin(), b.stmts.end(), isDeclaration), b.stmts.end());
  }

  void checkJump(const Stmt& s, Jump jump) {
    bool isBreak = s.kind == StmtKind::Break;
    std::string word = isBreak ? "'break'" : "'continue'";
    if (jump == Jump::None) Diag.error(s.loc, word + " outside loop");
    else if (jump == Jump::Task) Diag.error(s.loc, word + " cannot leave an async, finish or isolated block");
    else if (jump == Jump::ParallelLoop && isBreak)
      Diag.error(s.loc, "'break' is not allowed in a pfor loop: its iterations are independent");
  }

  void finalizeExpr(ExprPtr& e) {
    if (typeOf(e, true).isUnknown()) return;
    e = insertCasts(std::move(e));
  }

  /// Condition of if/while/select: bool, or a scalar's truth value.
  void finalizeCondition(ExprPtr& e) {
    finalizeExpr(e);
    if (e->type.isUnknown()) return;
    if (!e->type.isScalar() && !isSized(e->type)) {
      Diag.error(e->loc, "the truth value of " + e->type.str() + " is ambiguous");
      return;
    }
    e = truthValue(std::move(e));
  }

  void finalizeStmt(Stmt& s, Jump jump) {
    switch (s.kind) {
      case StmtKind::Assign: return finalizeAssign(static_cast<Assign&>(s));
      case StmtKind::ExprStmt: {
        auto& es = static_cast<ExprStmt&>(s);
        finalizeExpr(es.expr);
        return;
      }
      case StmtKind::If: {
        auto& i = static_cast<If&>(s);
        finalizeCondition(i.cond);
        finalizeBlock(*i.thenBody, jump);
        if (i.elseBody) finalizeBlock(*i.elseBody, jump);
        return;
      }
      case StmtKind::While: {
        auto& w = static_cast<While&>(s);
        finalizeCondition(w.cond);
        finalizeBlock(*w.body, Jump::Loop);
        return;
      }
      case StmtKind::For: {
        auto& f = static_cast<For&>(s);
        if (f.isRange) {
          for (ExprPtr* bound : {&f.start, &f.stop, &f.step}) {
            finalizeExpr(*bound);
            if ((*bound)->type.isUnknown()) continue;
            if (!(*bound)->type.isInteger() && !(*bound)->type.isBool()) {
              Diag.error((*bound)->loc, "range() arguments must be integers, got " + (*bound)->type.str());
              continue;
            }
            *bound = convert(std::move(*bound), Type::int64());
          }
          const Type& var = Vars[f.var].type;
          if (var.isScalar() && !canAssignImplicitly(ScalarKind::Int64, var.elem()))
            Diag.error(f.varLoc, "cannot implicitly convert int64 to " + var.str() + " for '" + f.var + "'");
        } else {
          IterationSource = f.iterable.get();
          finalizeExpr(f.iterable);
          IterationSource = nullptr;
          Type elem = iteratedType(f.iterable->type);
          const Type& var = Vars[f.var].type;
          if (f.iterable->type.isUnknown()) {
          } else if (elem.isUnknown()) {
            Diag.error(f.iterable->loc, "a for loop iterates over range(...), an array, a list or a dict, not " +
                                            f.iterable->type.str());
          } else if (var.isScalar() && elem.isScalar() ? !canAssignImplicitly(elem.elem(), var.elem()) : var != elem) {
            // Each element is stored into the loop variable.
            Diag.error(f.varLoc, "cannot implicitly convert " + elem.str() + " to " + var.str() + " for '" + f.var + "'");
          }
        }
        finalizeBlock(*f.body, f.parallel ? Jump::ParallelLoop : Jump::Loop);
        return;
      }
      case StmtKind::Return: {
        auto& r = static_cast<Return&>(s);
        // A task runs apart from its function, and a finish or isolated
        // block is an OpenMP region that no jump may leave.
        if (TaskDepth > 0) Diag.error(r.loc, "'return' cannot leave an async, finish or isolated block");
        if (!r.value) {
          if (!F.returnType.isVoid())
            Diag.error(r.loc, "'" + F.sourceName() + "' must return a value of type " + F.returnType.str());
          return;
        }
        hintShape(r.value.get(), F.inferReturn ? Type() : F.returnType);
        finalizeExpr(r.value);
        hintShape(nullptr, Type());
        if (F.returnType.isVoid()) {
          Diag.error(r.value->loc, "'" + F.sourceName() + "' is declared '-> None' but returns a value; declare '-> " +
                                       r.value->type.str() + "' (or leave the return type out to infer it)");
          return;
        }
        r.value = convertForAssignment(std::move(r.value), F.returnType, "the return value of '" + F.sourceName() + "'");
        return;
      }
      case StmtKind::Break:
      case StmtKind::Continue: return checkJump(s, jump);
      case StmtKind::Pass: return;
      case StmtKind::Block: return finalizeBlock(static_cast<Block&>(s), jump);
      case StmtKind::Task:
        ++TaskDepth;
        finalizeBlock(*static_cast<Task&>(s).body, Jump::Task);
        --TaskDepth;
        return;
    }
  }

  /// `x[mask] = v` (a bool array of x's shape) and `x[idx] = v` (an
  /// integer array on a 1-D x) as the statements mask_assign(x, mask, v)
  /// and index_assign(x, idx, v), NumPy's setitem: null for any other
  /// statement. Augmented forms arrive as `x[m] = x[m] op v` (the parser
  /// evaluates m once), so they store the same way.
  StmtPtr maskOrIndexStore(Stmt& s) {
    auto* a = dyn_cast<Assign>(&s);
    if (!a || !a->value || a->targets.size() != 1) return nullptr;
    auto* x = dyn_cast<Index>(a->targets[0].get());
    if (!x) return nullptr;
    size_t pos;
    int axis;
    ArrayIndexKind kind = arrayIndex(*x, false, pos, axis);  // finalizeStmt reports
    if (kind != ArrayIndexKind::Mask && kind != ArrayIndexKind::Indices) return nullptr;
    const char* name = kind == ArrayIndexKind::Mask ? "mask_assign" : "index_assign";
    int rank = x->base->type.rank();
    bool plain = kind == ArrayIndexKind::Mask ? x->indices.size() == 1 && x->indices[0]->type.rank() == rank : rank == 1;
    ExprPtr call = std::make_unique<Call>(x->loc, name);
    if (plain) {
      lowerToCall(call, name, takeOperands(x->base, x->indices[0], a->value), false);  // finalizeStmt reports
    } else {
      ExprPtr view = viewAroundArrayIndex(*x, pos);
      ExprPtr ax = std::make_unique<IntLit>(x->loc, axis);
      lowerToCall(call, name, takeOperands(view, x->indices[pos], a->value, ax), false);
    }
    auto stmt = std::make_unique<ExprStmt>(a->loc, std::move(call));
    return stmt;
  }

  /// A store target `A[i][j]` (`B[k][i][j]`, `A[i][1:]`) whose inner
  /// subscripts are integers only, as the one subscript `A[i, j]`: A[i] is
  /// then a view of A, and storing into it stores into A, as in NumPy.
  /// False (and `target` unchanged) for a chain through a slice or an
  /// array index, or not down to a variable.
  bool flattenViewChain(ExprPtr& target) {
    std::vector<Index*> levels;  // outermost first
    Expr* e = target.get();
    for (auto* x = dyn_cast<Index>(e); x; x = dyn_cast<Index>(e)) {
      levels.push_back(x);
      e = x->base.get();
    }
    if (!isa<VarRef>(*e) || !typeOf(levels.back()->base, false).isArray()) return false;
    for (size_t l = 1; l < levels.size(); ++l)
      for (ExprPtr& i : levels[l]->indices) {
        if (isa<Slice>(*i)) return false;
        Type t = typeOf(i, false);
        if (!t.isScalar() || !t.isInteger()) return false;
      }
    auto flat = std::make_unique<Index>(target->loc, std::move(levels.back()->base));
    for (size_t l = levels.size(); l-- > 0;)
      for (ExprPtr& i : levels[l]->indices) flat->indices.push_back(std::move(i));
    target = std::move(flat);
    return true;
  }

  void finalizeAssign(Assign& a) {
    if (!a.value) return;  // a bare declaration
    hintShape(a.value.get(), declaredTarget(a));
    finalizeExpr(a.value);
    hintShape(nullptr, Type());
    if (a.value->type.isUnknown()) return;
    if (a.targets.size() == 1) {
      if (auto* v = dyn_cast<VarRef>(a.targets[0].get()); v && a.augmented && Vars.count(v->name) && Vars[v->name].type.isArray())
        a.targets[0] = inPlaceTarget(*v, *a.value);
      finalizeTarget(a.targets[0], a.value);
      return;
    }
    auto* tup = dyn_cast<TupleLit>(a.value.get());
    if (!tup && a.value->type.isTuple() && a.value->type.elems().size() == a.targets.size()) {
      // `q, r = f(x)`: each part of the tuple value is stored in turn.
      for (size_t i = 0; i < a.targets.size(); ++i) finalizeUnpackedTarget(a.targets[i], a.value->type.elems()[i]);
      return;
    }
    if (!tup || tup->isList || tup->elems.size() != a.targets.size()) {
      Diag.error(a.value->loc, "cannot unpack " + a.value->type.str() + " into " + std::to_string(a.targets.size()) + " targets");
      return;
    }
    for (size_t i = 0; i < a.targets.size(); ++i) finalizeTarget(a.targets[i], tup->elems[i]);
    tup->type = Type::tuple([&] {
      std::vector<Type> ts;
      for (auto& el : tup->elems) ts.push_back(el->type);
      return ts;
    }());
  }

  /// `A op= B` on an array variable A stores into A's memory, as NumPy
  /// does: the target becomes A[:, ...]. The result must convert to A's
  /// element type by the same-kind rule (NumPy's in-place ufunc casting).
  ExprPtr inPlaceTarget(VarRef& var, const Expr& value) {
    const Type& t = Vars[var.name].type;
    if (value.type.isArray() && !canAssignImplicitly(value.type.elem(), t.elem()))
      Diag.error(value.loc, std::string("cannot store the ") + scalarName(value.type.elem()) + " result of '" + var.name +
                                " op= ...' into " + t.str() + " in place; write '" + var.name + " = " + var.name + " op ...'");
    auto idx = std::make_unique<Index>(var.loc, std::make_unique<VarRef>(var.loc, var.name));
    for (int k = 0; k < t.rank(); ++k) idx->indices.push_back(std::make_unique<Slice>(var.loc));
    return idx;
  }

  void finalizeTarget(ExprPtr& target, ExprPtr& value) {
    if (auto* var = dyn_cast<VarRef>(target.get())) {
      const Type& t = Vars[var->name].type;
      var->type = t;
      value = convertForAssignment(std::move(value), t, "'" + var->name + "'");
      return;
    }
    // A store through an unnamed view: A[i][j] = v is the element A[i, j]
    // (flattenViewChain). Stores through a mask or an index array were
    // made calls before this; anything else needs the view named.
    if (auto* x = dyn_cast<Index>(target.get()); x && x->base->kind != ExprKind::Var && !flattenViewChain(target)) {
      Diag.error(target->loc, "only elements of a named array can be assigned; name the view first (row = A[i])");
      return;
    }
    TypingTarget = true;
    finalizeExpr(target);
    TypingTarget = false;
    if (target->type.isUnknown()) return;
    const Type& base = static_cast<Index&>(*target).base->type;
    if (base.isTuple()) {
      Diag.error(target->loc, "tuples cannot be modified");
      return;
    }
    if (base.isList() || base.isDict()) {
      value = convertForAssignment(std::move(value), target->type, "an element of " + base.str());
      return;
    }
    // NumPy's setitem refuses a complex value for a real array (TypeError).
    if ((value->type.isScalar() || value->type.isArray()) && isComplexKind(value->type.elem()) &&
        (target->type.isScalar() || target->type.isArray()) && !isComplexKind(target->type.elem())) {
      Diag.error(value->loc, "cannot store " + value->type.str() + " into an array of " + scalarName(target->type.elem()) +
                                 "; take .real, .imag or abs(...)");
      return;
    }
    // A tuple of numbers stored into a 1-D view is its values, as NumPy's
    // setitem reads a sequence: A[i] = (x, y, z) stores array([x, y, z]).
    if (auto* tup = dyn_cast<TupleLit>(value.get()); tup && !tup->isList && target->type.isArray() &&
        target->type.rank() == 1 && !tup->elems.empty() &&
        std::all_of(tup->elems.begin(), tup->elems.end(), [](const ExprPtr& e) { return e->type.isScalar(); })) {
      tup->isList = true;
      auto call = std::make_unique<Call>(value->loc, "array");
      call->target = CallTarget::Library;
      call->library = lookupLibraryFunction("array");
      call->args.push_back(std::move(value));
      value = std::move(call);
      finalizeExpr(value);
    }
    if (target->type.isArray()) {
      // A store into a view broadcasts a scalar or an array into it,
      // converting elements as NumPy's setitem does.
      if (!value->type.isScalar() && !value->type.isArray())
        Diag.error(value->loc, "cannot store " + value->type.str() + " into an array");
      else if (value->type.isArray() && value->type.rank() > target->type.rank())
        Diag.error(value->loc, "cannot broadcast " + value->type.str() + " into a view of " + std::to_string(target->type.rank()) +
                                   (target->type.rank() == 1 ? " dimension" : " dimensions"));
      return;
    }
    if (!value->type.isScalar()) {
      Diag.error(value->loc, "cannot store " + value->type.str() + " into an array element");
      return;
    }
    // Element stores convert like NumPy's setitem: any scalar, unchecked.
    value = convert(std::move(value), target->type);
  }

  /// A target of `a, b = t` for a tuple value t: stored part by part.
  void finalizeUnpackedTarget(ExprPtr& target, const Type& part) {
    if (auto* var = dyn_cast<VarRef>(target.get())) {
      const Type& t = Vars[var->name].type;
      var->type = t;
      bool ok = t.isScalar() && part.isScalar() ? canAssignImplicitly(part.elem(), t.elem()) : t == part;
      if (!ok) Diag.error(var->loc, "cannot implicitly convert " + part.str() + " to " + t.str() + " for '" + var->name + "'");
      return;
    }
    Diag.error(target->loc, "unpacking a tuple value stores into variables only; assign elements one by one");
  }

  /// A weak integer literal takes the other operand's type; NumPy 2 raises
  /// OverflowError when it does not fit, and so does pyddc, at compile time.
  void checkLiteralFits(const Expr& e, const Type& to) {
    int64_t v;
    if (to.isScalar() && literalOutOfRange(e, to.elem(), v))
      Diag.error(e.loc, "integer literal " + std::to_string(v) + " does not fit in " + to.str() + ", the type of the other operand");
  }

  /// Makes the conversions of an already typed expression explicit.
  ExprPtr insertCasts(ExprPtr e) {
    forEachChild(*e, [&](ExprPtr& c) { c = insertCasts(std::move(c)); });
    switch (e->kind) {
      case ExprKind::Binary: {
        auto& b = static_cast<Binary&>(*e);
        std::string err;
        Type operand = binaryOperandType(b.op, *b.lhs, *b.rhs, err);
        checkLiteralFits(*b.lhs, operand);
        checkLiteralFits(*b.rhs, operand);
        b.lhs = convert(std::move(b.lhs), operand);
        b.rhs = convert(std::move(b.rhs), operand);
        break;
      }
      case ExprKind::Unary: {
        auto& u = static_cast<Unary&>(*e);
        u.operand = convert(std::move(u.operand), u.type);
        break;
      }
      case ExprKind::Compare: {
        // Each link compares in the common kind of its two operands. An
        // operand shared by two links keeps its own type; the emitter
        // converts it per link.
        auto& c = static_cast<Compare&>(*e);
        c.linkTypes.clear();
        for (size_t i = 0; i + 1 < c.operands.size(); ++i) {
          const Expr &l = *c.operands[i], &r = *c.operands[i + 1];
          c.linkTypes.push_back(Type::scalar(commonKind(l.type.elem(), isWeak(l), r.type.elem(), isWeak(r))));
        }
        if (c.operands.size() == 2) {
          checkLiteralFits(*c.operands[0], c.linkTypes[0]);
          checkLiteralFits(*c.operands[1], c.linkTypes[0]);
          c.operands[0] = convert(std::move(c.operands[0]), c.linkTypes[0]);
          c.operands[1] = convert(std::move(c.operands[1]), c.linkTypes[0]);
        }
        break;
      }
      case ExprKind::Logical: {
        auto& l = static_cast<Logical&>(*e);
        l.lhs = truthValue(std::move(l.lhs));
        l.rhs = truthValue(std::move(l.rhs));
        break;
      }
      case ExprKind::Not: {
        auto& n = static_cast<Not&>(*e);
        n.operand = truthValue(std::move(n.operand));
        break;
      }
      case ExprKind::Select: {
        auto& s = static_cast<Select&>(*e);
        s.cond = convert(std::move(s.cond), Type::boolTy());
        checkLiteralFits(*s.trueValue, s.type);
        checkLiteralFits(*s.falseValue, s.type);
        s.trueValue = convert(std::move(s.trueValue), s.type);
        s.falseValue = convert(std::move(s.falseValue), s.type);
        break;
      }
      case ExprKind::Index: {
        auto& x = static_cast<Index&>(*e);
        if (x.base->type.isTuple()) break;  // a constant position
        if (x.base->type.isDict()) {
          x.indices[0] = convert(std::move(x.indices[0]), x.base->type.elems()[0]);
          break;
        }
        for (auto& i : x.indices) i = convert(std::move(i), Type::int64());
        break;
      }
      case ExprKind::Slice: {
        auto& sl = static_cast<Slice&>(*e);
        for (ExprPtr* part : {&sl.start, &sl.stop, &sl.step})
          if (*part) *part = convert(std::move(*part), Type::int64());
        break;
      }
      case ExprKind::TupleLit: {
        auto& t = static_cast<TupleLit&>(*e);
        if (t.isList && t.type.isList())
          for (auto& el : t.elems) el = convert(std::move(el), t.type.elems()[0]);
        break;
      }
      case ExprKind::DictLit: {
        auto& d = static_cast<DictLit&>(*e);
        for (auto& k : d.keys) k = convert(std::move(k), d.type.elems()[0]);
        for (auto& v : d.values) v = convert(std::move(v), d.type.elems()[1]);
        break;
      }
      case ExprKind::Call: {
        auto& c = static_cast<Call&>(*e);
        if (c.target == CallTarget::User) {
          Function* callee = calleeOf(c, true);
          if (!callee) break;
          c.callee = callee->name;
          for (size_t i = 0; i < c.args.size(); ++i)
            c.args[i] = convertForAssignment(std::move(c.args[i]), callee->params[i].type,
                                             "argument '" + callee->params[i].name + "' of " + c.callee + "()");
        } else if (c.target == CallTarget::Library && c.library->element && c.type.isComplete()) {
          // `a + 300` on a uint8 array: the literal takes the array's kind.
          const ScalarKind k = elementOperandKind(c);
          for (auto& a : c.args) checkLiteralFits(*a, Type::scalar(k));
        } else if (c.target == CallTarget::Library && c.library->yieldsEntries &&
                   &c != IterationSource) {
          Diag.error(c.loc, (c.callee == "row" ? std::string("S.row(i)") : std::string("S.nonzeros()")) +
                                " can only be the iterable of a for loop");
        } else if (c.target == CallTarget::Library && !c.library->params.empty() &&
                   std::string(c.library->params[0]) == "shape") {
          // Shape entries are int64 in the runtime.
          if (auto* shape = dyn_cast<TupleLit>(c.args[0].get())) {
            for (auto& el : shape->elems) el = convert(std::move(el), Type::int64());
            std::vector<Type> ts(shape->elems.size(), Type::int64());
            shape->type = Type::tuple(ts);
          } else {
            c.args[0] = convert(std::move(c.args[0]), Type::int64());
          }
        }
        break;
      }
      default: break;
    }
    return e;
  }

  Module& M;
  Function& F;
  Diagnostics& Diag;
  const RankInstances& Instances;
  std::map<std::string, VarInfo> Vars;
  bool Changed = false;
  bool Reporting = false;
  /// The expression being typed is an assignment's target.
  bool TypingTarget = false;
  std::set<std::string> Unbound;
  /// The iterable of the for loop being finalized (S.row(i) may only be one).
  const Expr* IterationSource = nullptr;
};

/// Heaps live inside kernels: every function of a module is callable from
/// Python or C++, and a heap has no value there (it is a list in Python).
bool containsHeap(const Type& t) {
  if (t.isHeap()) return true;
  for (auto& e : t.elems())
    if (containsHeap(e)) return true;
  return false;
}

/// A default value must be one the parameter accepts from Python.
void checkDefault(const Param& p, Diagnostics& diag) {
  llvm::StringRef text(p.defaultValue);
  if (!p.type.isScalar()) {
    diag.error(p.loc, "only scalar parameters can have a default value; '" + p.name + "' is " + p.type.str());
    return;
  }
  bool isFloat = text != "True" && text != "False" && text.find_first_of(".e") != llvm::StringRef::npos;
  int64_t i = 0;
  if (isFloat && !isFloatKind(p.type.elem()) && !isComplexKind(p.type.elem()))
    diag.error(p.loc, "the default value " + p.defaultValue + " of '" + p.name + "' is not a " + p.type.str());
  else if (isIntegerKind(p.type.elem()) && !text.getAsInteger(10, i) && !integerFits(i, p.type.elem()))
    diag.error(p.loc, "the default value " + p.defaultValue + " of '" + p.name + "' does not fit in " + p.type.str());
}

void checkSignatures(Module& m, Diagnostics& diag) {
  std::set<std::string> seen;
  for (auto& f : m.functions) {
    if (!seen.insert(f->name).second) diag.error(f->loc, "function '" + f->name + "' is defined twice");
    for (auto& p : f->params) {
      if (p.type.isUnknown()) diag.error(p.loc, "parameter '" + p.name + "' has no usable type");
      if (!p.defaultValue.empty() && !p.type.isUnknown()) checkDefault(p, diag);
      if (containsHeap(p.type))
        diag.error(p.loc, "parameter '" + p.name + "' is a " + p.type.str() +
                              ", which has no Python equivalent to pass; pass a List and build the heap inside");
    }
    if (containsHeap(f->returnType))
      diag.error(f->loc, "'" + f->name + "' returns a " + f->returnType.str() + ", which has no Python equivalent; return a List");
  }
}

}  // namespace

bool returnsValue(const Block& b) {
  for (auto& s : b.stmts) {
    if (auto* r = dyn_cast<Return>(s.get()); r && r->value) return true;
    bool found = false;
    forEachPart(*s, [](const Expr&) {}, [&](const Block& inner) { found = found || returnsValue(inner); });
    if (found) return true;
  }
  return false;
}

/// The module's functions, each after the functions it calls; a function
/// without a return annotation that is part of a cycle of calls is an
/// error (its return type would depend on itself).
std::vector<Function*> calleesFirst(Module& m, Diagnostics& diag) {
  std::map<Function*, std::vector<Function*>> calls;
  for (auto& f : m.functions) {
    std::function<void(const Expr&)> visit = [&](const Expr& e) {
      if (auto* c = dyn_cast<Call>(&e); c && c->target == CallTarget::User)
        if (Function* callee = m.find(c->callee)) calls[f.get()].push_back(callee);
      forEachChild(e, visit);
    };
    std::function<void(const Block&)> walk = [&](const Block& b) {
      for (auto& s : b.stmts) forEachPart(*s, visit, walk);
    };
    walk(*f->body);
  }
  std::vector<Function*> order;
  std::map<Function*, int> state;  // 1: on the path, 2: done
  std::function<void(Function*)> dfs = [&](Function* f) {
    state[f] = 1;
    for (Function* g : calls[f]) {
      if (state[g] == 1 && g->inferReturn && returnsValue(*g->body))
        diag.error(g->loc, "'" + g->name + "' is called recursively, so its return type cannot be inferred; annotate it");
      if (!state[g]) dfs(g);
    }
    state[f] = 2;
    order.push_back(f);
  };
  for (auto& f : m.functions)
    if (!state[f.get()]) dfs(f.get());
  return order;
}

// ---- rank-generic functions ------------------------------------------------------

/// `Array(T)` parameters are compiled for ranks 1 to this.
constexpr int kMaxGenericRank = 4;

/// Calls `fn` on every expression of `b`, nested ones included.
void forEachExpr(const Block& b, const std::function<void(const Expr&)>& fn) {
  struct Walk : Visitor {
    const std::function<void(const Expr&)>& fn;
    explicit Walk(const std::function<void(const Expr&)>& f) : fn(f) {}
    void visit(const Expr& e) override {
      fn(e);
      visitChildren(e);
    }
    using Visitor::visit;
  } walk(fn);
  walk.visit(static_cast<const Stmt&>(b));
}

/// Whether `f` calls itself (an instance calls its generic function's name
/// until it is typed).
bool callsItself(const Function& f) {
  bool found = false;
  forEachExpr(*f.body, [&](const Expr& e) {
    if (auto* c = dyn_cast<Call>(&e); c && c->target == CallTarget::User && c->callee == f.sourceName()) found = true;
  });
  return found;
}

/// Types `f`, whose result is a rank-less `-> Array(T)` and which calls
/// itself: its own calls need the result's rank before the body is typed,
/// so ranks from 1 up are tried as if annotated, each on a copy of the
/// body with its diagnostics held; the first that type-checks is kept.
/// Otherwise the user sees rank 1's errors.
bool typeRecursiveAnyRank(Module& m, Function& f, Diagnostics& diag, const RankInstances& instances) {
  const ScalarKind elem = f.returnType.elem();
  const BlockPtr original = cloneBlock(*f.body);
  std::vector<Diagnostics::Held> rank1;
  for (int r = 1; r <= kMaxGenericRank; ++r) {
    f.returnType = Type::array(elem, r);
    f.body = cloneBlock(*original);
    f.locals.clear();
    std::vector<Diagnostics::Held> held;
    diag.beginCapture(held);
    const bool ok = FunctionTyper(m, f, diag, instances).run();
    diag.endCapture();
    if (ok || r == kMaxGenericRank) diag.replay(ok ? held : rank1);
    if (ok) return true;
    if (r == 1) rank1 = std::move(held);
  }
  return false;
}

/// Types `f`. Under a rank-less `-> Array(T)` the result's rank is inferred
/// from the values returned, as without an annotation, and T must match.
bool typeFunction(Module& m, Function& f, Diagnostics& diag, const RankInstances& instances) {
  if (f.returnAnyRank && callsItself(f)) return typeRecursiveAnyRank(m, f, diag, instances);
  unsigned before = diag.errorCount();
  const Type declared = f.returnType;
  if (f.returnAnyRank) f.inferReturn = true;
  FunctionTyper(m, f, diag, instances).run();
  if (diag.errorCount() != before) return false;
  if (f.returnAnyRank && !(f.returnType.isArray() && f.returnType.elem() == declared.elem()))
    diag.error(f.loc, "'" + f.sourceName() + "' returns " + f.returnType.str() + ", not the " + declared.str() +
                          " of its annotation");
  else if (f.inferReturn && containsHeap(f.returnType))
    diag.error(f.loc, "'" + f.sourceName() + "' returns a " + f.returnType.str() + ", which has no Python equivalent; return a List");
  return diag.errorCount() == before;
}

/// Whether `e` is a mask by form: a comparison, a logical operator, or a
/// variable in `masks`.
bool isMaskForm(const Expr& e, const std::set<std::string>& masks) {
  if (isa<Compare>(e) || isa<Not>(e) || isa<Logical>(e)) return true;
  auto* v = dyn_cast<VarRef>(&e);
  return v && masks.count(v->name);
}

/// The variables assigned a mask by form (`m = x > 0`, `k = m`), to a fixed
/// point. A name also assigned something else is left out: `x[m]` is then
/// ambiguous and read as one subscript, as before.
std::set<std::string> maskVariables(const Block& body) {
  std::set<std::string> masks, other;
  for (bool changed = true; changed;) {
    changed = false;
    struct Walk : Visitor {
      std::set<std::string>& masks;
      std::set<std::string>& other;
      bool& changed;
      Walk(std::set<std::string>& m, std::set<std::string>& o, bool& c) : masks(m), other(o), changed(c) {}
      void visit(const Stmt& s) override {
        if (auto* a = dyn_cast<Assign>(&s); a && a->value)
          for (const ExprPtr& t : a->targets)
            if (auto* v = dyn_cast<VarRef>(t.get()))
              changed |= isMaskForm(*a->value, masks) ? masks.insert(v->name).second : other.insert(v->name).second;
        visitChildren(s);
      }
      using Visitor::visit;
    } walk(masks, other, changed);
    walk.visit(static_cast<const Stmt&>(body));
  }
  for (const std::string& n : other) masks.erase(n);
  return masks;
}

/// The most subscripts of an element access `name[i, j]` (2), or 0. Read
/// before typing, so by form: a slice makes a view, and a comparison, a
/// logical operator or a variable assigned only those (m = x > 0) a mask;
/// any other array variable as the index (x[idx]) looks like an element
/// access and counts.
size_t elementSubscripts(const Block& body, const std::string& name) {
  const std::set<std::string> masks = maskVariables(body);
  auto element = [&](const ExprPtr& i) { return !isa<Slice>(*i) && !isMaskForm(*i, masks); };
  size_t most = 0;
  forEachExpr(body, [&](const Expr& e) {
    if (auto* x = dyn_cast<Index>(&e))
      if (auto* v = dyn_cast<VarRef>(x->base.get());
          v && v->name == name && std::all_of(x->indices.begin(), x->indices.end(), element))
        most = std::max(most, x->indices.size());
  });
  return most;
}

/// Makes the instances of `g` (see Function::generic). Its `Array(T)`
/// parameters that the body does not subscript share one rank r, 1 to
/// kMaxGenericRank: like one type variable, they keep the instances (and
/// the C++ compile time) to four whatever their number, where every
/// combination would be 4^n; an operand meant to broadcast from a lower
/// rank says so with its own rank (`b: Array(T, 1)`). Each r is typed on a
/// copy of the body with its diagnostics held; those that type-check are
/// kept, named g__rank<r>. When none does, the user sees the errors of
/// rank 1 (with the subscripted parameters at their ranks), not one copy
/// per rank.
void instantiate(Module& m, Function& g, Diagnostics& diag, RankInstances& instances) {
  // The rank of each rank-less parameter in an instance: k for one the
  // body subscripts x[i, j] (k subscripts), else the instance's rank r,
  // shared by all such parameters.
  std::vector<size_t> pinned(g.params.size(), 0);
  bool shared = false;
  for (size_t i = 0; i < g.params.size(); ++i) {
    if (!g.params[i].anyRank) continue;
    const size_t k = elementSubscripts(*g.body, g.params[i].name);
    pinned[i] = k <= kMaxGenericRank ? k : 0;
    shared |= pinned[i] == 0;
  }
  std::vector<Function*>& made = instances[g.name];
  std::vector<Diagnostics::Held> naturalErrors;
  bool reported = false;
  // Rank 1 first: the natural one, whose errors the user sees if no rank fits.
  for (int r = 1; r <= (shared ? kMaxGenericRank : 1); ++r) {
    auto inst = std::make_unique<Function>();
    inst->name = g.name + "__rank" + std::to_string(r);
    while (m.find(inst->name)) inst->name += "_";
    inst->params = g.params;
    for (size_t i = 0; i < g.params.size(); ++i)
      if (g.params[i].anyRank)
        inst->params[i].type = Type::array(g.params[i].type.elem(), pinned[i] ? static_cast<int>(pinned[i]) : r);
    inst->generic = g.name;
    inst->loc = g.loc;
    inst->returnType = g.returnType;
    inst->inferReturn = g.inferReturn;
    inst->returnAnyRank = g.returnAnyRank;
    inst->body = cloneBlock(*g.body);
    Function* f = inst.get();
    // In the module (and the list) while it is typed: it may call itself.
    m.functions.push_back(std::move(inst));
    made.push_back(f);
    std::vector<Diagnostics::Held> held;
    diag.beginCapture(held);
    bool ok = typeFunction(m, *f, diag, instances);
    diag.endCapture();
    if (ok) {
      if (!reported) diag.replay(held);  // its warnings, once
      reported = true;
      continue;
    }
    made.pop_back();
    m.functions.pop_back();
    if (r == 1) naturalErrors = std::move(held);
  }
  if (made.size() == 1) {
    // One rank fits (x[i, j] asks for 2-D): an ordinary function of that
    // rank, under its own name (as if the annotation had said it).
    Function& only = *made[0];
    struct RenameCalls : Mutator {
      using Mutator::mutate;
      std::string from, to;
      ExprPtr mutate(ExprPtr e) override {
        if (auto* c = dyn_cast<Call>(e.get()); c && c->callee == from) c->callee = to;
        mutateChildren(*e);
        return e;
      }
    } rename;
    rename.from = only.name;
    rename.to = g.name;
    rename.mutate(static_cast<Stmt&>(*only.body));
    only.name = g.name;
    only.generic.clear();
    for (Param& p : only.params) p.anyRank = false;
    only.returnAnyRank = false;
  }
  if (!made.empty()) return;
  diag.replay(naturalErrors);
}

bool analyzeModule(Module& m, Diagnostics& diag) {
  unsigned before = diag.errorCount();
  checkSignatures(m, diag);
  Resolver resolver(m, diag);
  for (auto& f : m.functions) {
    resolver.Current = f.get();
    resolver.mutate(static_cast<Stmt&>(*f->body));
  }
  if (diag.errorCount() != before) return false;
  // Callees first: a call's type is its callee's return type, which may
  // be inferred, and a call of a rank-generic function needs its instances.
  RankInstances instances;
  for (Function* f : calleesFirst(m, diag)) {
    if (isRankGeneric(*f)) instantiate(m, *f, diag, instances);
    else typeFunction(m, *f, diag, instances);
  }
  // Each generic function is replaced by its instances (appended as they
  // were typed), where it was.
  std::vector<std::unique_ptr<Function>> all = std::move(m.functions);
  std::map<const Function*, std::unique_ptr<Function>*> slot;
  for (auto& f : all) slot[f.get()] = &f;
  m.functions.clear();
  for (auto& f : all) {
    if (!f) continue;  // an instance, already in place
    if (!isRankGeneric(*f)) m.functions.push_back(std::move(f));
    else
      for (Function* inst : instances[f->name]) m.functions.push_back(std::move(*slot[inst]));
  }
  return diag.errorCount() == before;
}

}  // namespace pydd
