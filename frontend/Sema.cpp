#include "frontend/Sema.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

// ---- typing rules shared by inference and finalization ----------------------

/// A literal written in the source, possibly negated: weak in arithmetic.
bool isWeak(const Expr& e) {
  if (e.kind == ExprKind::IntLit || e.kind == ExprKind::FloatLit || e.kind == ExprKind::BoolLit) return true;
  if (auto* u = dyn_cast<Unary>(&e)) return u->op != UnaryOp::Invert && isWeak(*u->operand);
  return false;
}

int kindCategory(ScalarKind k) { return k == ScalarKind::Bool ? 0 : isIntegerKind(k) ? 1 : 2; }

/// The common kind of two scalar operands, NEP 50 style: a weak literal
/// takes the other operand's kind when that kind can hold it.
ScalarKind commonKind(ScalarKind l, bool lweak, ScalarKind r, bool rweak) {
  if (lweak == rweak) return promote(l, r);
  ScalarKind weak = lweak ? l : r, strong = lweak ? r : l;
  if (kindCategory(weak) <= kindCategory(strong)) return strong;
  return kindCategory(weak) == 2 ? ScalarKind::Float64 : ScalarKind::Int64;
}

bool isBitwise(BinaryOp op) {
  return op == BinaryOp::BitAnd || op == BinaryOp::BitOr || op == BinaryOp::BitXor || op == BinaryOp::Shl ||
         op == BinaryOp::Shr;
}

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
  if (isBitwise(op)) {
    if (isFloatKind(k)) {
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

  ExprPtr mutate(ExprPtr e) override {
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
    if (auto* attr = dyn_cast<Attribute>(e.get())) {
      if (attr->name == "ndim") {
        auto call = std::make_unique<Call>(attr->loc, "ndim");
        call->args.push_back(std::move(attr->base));
        return resolveCall(std::move(call));
      }
      Diag.error(attr->loc, "attribute '" + attr->name + "' is not supported in pydd kernels" +
                                (attr->name == "shape" ? "; index it, as in A.shape[0]" : ""));
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
      if (c.args.size() > 1) Diag.error(c.loc, c.callee + "() takes at most 1 argument");
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
    if (Function* f = M.find(c.callee)) {
      c.target = CallTarget::User;
      std::vector<std::string> names;
      for (auto& p : f->params) names.push_back(p.name);
      bindArguments(c, names, names.size(), false);
      return e;
    }
    if (const LibraryFunction* lib = lookupLibraryFunction(c.callee)) {
      c.target = CallTarget::Library;
      c.library = lib;
      bool variadic = !lib->params.empty() && std::string(lib->params.back()) == "*";
      std::vector<std::string> names(lib->params.begin(), lib->params.end() - (variadic ? 1 : 0));
      bindArguments(c, names, lib->required, variadic);
      // A dtype argument may be written as a bare type name.
      for (size_t i = 0; i < names.size() && i < c.args.size(); ++i)
        if (names[i] == "dtype" && c.args[i]) c.args[i] = typeNameAsValue(std::move(c.args[i]));
      return e;
    }
    Diag.error(c.loc, "unknown function '" + c.callee + "'");
    return e;
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
      if (pos < c.args.size() && c.args[pos]) {
        Diag.error(kw.loc, c.callee + "() got multiple values for argument '" + kw.name + "'");
        continue;
      }
      if (c.args.size() <= pos) c.args.resize(pos + 1);
      c.args[pos] = std::move(kw.value);
    }
    c.keywords.clear();
    for (size_t i = 0; i < required; ++i) {
      if (i >= c.args.size() || !c.args[i]) {
        Diag.error(c.loc, c.callee + "() missing required argument '" + names[i] + "'");
        return;
      }
    }
    // Trailing omitted optionals are dropped; a gap is impossible to fill.
    while (!c.args.empty() && !c.args.back()) c.args.pop_back();
    for (size_t i = 0; i < c.args.size(); ++i)
      if (!c.args[i]) Diag.error(c.loc, c.callee + "() missing argument '" + names[i] + "'");
  }

  Module& M;
  Diagnostics& Diag;
};

// ---- per-function typing --------------------------------------------------------

struct VarInfo {
  Type type;
  bool declared = false;  // annotated: the type is fixed
  bool isParam = false;
  SourceLoc loc;          // first definition
};

class FunctionTyper {
 public:
  FunctionTyper(Module& m, Function& f, Diagnostics& d) : M(m), F(f), Diag(d) {}

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
    if (!t.isScalar() && !t.isArray()) {
      if (report)
        Diag.error(loc, "'" + name + "' cannot hold " + (t.isTuple() ? std::string("a tuple or list") : t.str()) +
                            "; lists and tuples as values are not supported yet");
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
      if (v.type.isUnknown())
        Diag.error(v.loc, "cannot infer the type of '" + name + "'; add an annotation '" + name + ": Type'");
    }
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
      Type vt = typeOf(*a->value, Reporting);
      if (a->targets.size() == 1) {
        assignInfer(*a->targets[0], vt);
      } else if (auto* tup = dyn_cast<TupleLit>(a->value.get()); tup && tup->elems.size() == a->targets.size()) {
        for (size_t i = 0; i < a->targets.size(); ++i) assignInfer(*a->targets[i], tup->elems[i]->type);
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
        Type it = typeOf(*f->iterable, Reporting);
        if (it.isArray() && it.rank() == 1)
          Changed |= unify(v, f->var, Type::scalar(it.elem()), f->varLoc, Reporting);
        else if (!it.isUnknown() && Reporting)
          Diag.error(f->iterable->loc, "a for loop iterates over range(...) or a 1-D array, not " + it.str());
      }
      inferBlock(*f->body);
      return;
    }
    forEachPart(s, [](ExprPtr&) {}, [&](Block& inner) { inferBlock(inner); });
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
    ReportReads = true;
    assignedBlock(*F.body, state);
  }

  void readsIn(Expr& e, const Assigned& state) {
    if (auto* v = dyn_cast<VarRef>(&e)) {
      auto it = Vars.find(v->name);
      if (ReportReads && it != Vars.end() && !state.count(v->name) && Unbound.insert(v->name).second)
        Diag.error(v->loc, "'" + v->name + "' is used before any assignment to it");
      return;
    }
    forEachChild(e, [&](ExprPtr& c) { readsIn(*c, state); });
  }

  void assignedBlock(Block& b, Assigned& state) {
    for (auto& s : b.stmts) assignedStmt(*s, state);
  }

  /// Runs a loop body to a fixed point without reporting, then once more
  /// reporting, from the state every iteration can start with.
  void assignedLoop(Block& body, Assigned& state, const std::string& loopVar, Expr* cond) {
    bool report = ReportReads;
    ReportReads = false;
    Assigned entry = state;
    for (;;) {
      Assigned s = entry;
      if (!loopVar.empty()) s.insert(loopVar);
      assignedBlock(body, s);
      size_t size = entry.size();
      entry.insert(s.begin(), s.end());
      if (entry.size() == size) break;
    }
    ReportReads = report;
    if (cond) readsIn(*cond, entry);
    Assigned s = entry;
    if (!loopVar.empty()) s.insert(loopVar);
    assignedBlock(body, s);
    state = entry;
    if (!loopVar.empty()) state.insert(loopVar);
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
  Type typeOf(Expr& e, bool report) {
    Type t = computeType(e, report);
    e.type = t;
    return t;
  }

  Type bad(bool report, SourceLoc loc, const std::string& msg) {
    if (report) Diag.error(loc, msg);
    return Type();
  }

  Type computeType(Expr& e, bool report) {
    switch (e.kind) {
      case ExprKind::IntLit: return Type::int64();
      case ExprKind::FloatLit: return Type::float64();
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
        Type t = typeOf(*u.operand, report);
        if (t.isUnknown()) return t;
        if (!t.isScalar()) return bad(report, u.loc, "unary operator on " + t.str() + " is not supported yet");
        if (u.op == UnaryOp::Invert && t.isFloat())
          return bad(report, u.loc, "bad operand type for unary ~: " + t.str());
        return t.isBool() ? Type::int64() : t;
      }
      case ExprKind::Binary: {
        auto& b = static_cast<Binary&>(e);
        Type lt = typeOf(*b.lhs, report), rt = typeOf(*b.rhs, report);
        if (lt.isUnknown() || rt.isUnknown()) return Type();
        std::string err;
        Type t = binaryOperandType(b.op, *b.lhs, *b.rhs, err);
        if (t.isUnknown()) return bad(report, b.loc, err);
        return t;
      }
      case ExprKind::Compare: {
        auto& c = static_cast<Compare&>(e);
        bool known = true;
        for (auto& o : c.operands) {
          Type t = typeOf(*o, report);
          if (t.isUnknown()) known = false;
          else if (!t.isScalar()) return bad(report, o->loc, "comparison of " + t.str() + " is not supported yet");
        }
        return known ? Type::boolTy() : Type();
      }
      case ExprKind::Logical: {
        auto& l = static_cast<Logical&>(e);
        Type a = typeOf(*l.lhs, report), b = typeOf(*l.rhs, report);
        if (a.isUnknown() || b.isUnknown()) return Type();
        for (Expr* o : {l.lhs.get(), l.rhs.get()})
          if (!o->type.isScalar()) return bad(report, o->loc, "the truth value of " + o->type.str() + " is ambiguous");
        return Type::boolTy();
      }
      case ExprKind::Not: {
        Type t = typeOf(*static_cast<Not&>(e).operand, report);
        if (t.isUnknown()) return t;
        if (!t.isScalar()) return bad(report, e.loc, "the truth value of " + t.str() + " is ambiguous");
        return Type::boolTy();
      }
      case ExprKind::Select: {
        auto& s = static_cast<Select&>(e);
        Type c = typeOf(*s.cond, report);
        Type a = typeOf(*s.trueValue, report), b = typeOf(*s.falseValue, report);
        if (c.isUnknown() || a.isUnknown() || b.isUnknown()) return Type();
        if (!c.isScalar()) return bad(report, s.cond->loc, "the truth value of " + c.str() + " is ambiguous");
        if (a.isScalar() && b.isScalar())
          return Type::scalar(commonKind(a.elem(), isWeak(*s.trueValue), b.elem(), isWeak(*s.falseValue)));
        if (a == b) return a;
        return bad(report, s.loc, "both branches of a conditional expression must have one type, got " + a.str() + " and " + b.str());
      }
      case ExprKind::Call: return callType(static_cast<Call&>(e), report);
      case ExprKind::Index: {
        auto& x = static_cast<Index&>(e);
        Type bt = typeOf(*x.base, report);
        bool known = !bt.isUnknown();
        for (auto& i : x.indices) {
          Type it = typeOf(*i, report);
          if (it.isUnknown()) known = false;
          else if (!it.isInteger() && !it.isBool())
            return bad(report, i->loc, "array indices must be integers, got " + it.str());
        }
        if (!known) return Type();
        if (!bt.isArray()) return bad(report, x.base->loc, bt.str() + " cannot be indexed");
        if (static_cast<int>(x.indices.size()) != bt.rank())
          return bad(report, x.loc, "an array with " + std::to_string(bt.rank()) + " dimension" +
                                        (bt.rank() == 1 ? "" : "s") + " needs " + std::to_string(bt.rank()) +
                                        " indices, got " + std::to_string(x.indices.size()) +
                                        " (slices are not supported yet)");
        return Type::scalar(bt.elem());
      }
      case ExprKind::Attribute: return Type();  // reported by the resolver
      case ExprKind::Cast: {
        auto& c = static_cast<Cast&>(e);
        Type t = typeOf(*c.operand, report);
        if (t.isUnknown()) return Type();
        if (!t.isScalar()) return bad(report, c.loc, "cannot convert " + t.str() + " to " + c.target.str());
        return c.target;
      }
      case ExprKind::TupleLit: {
        auto& t = static_cast<TupleLit&>(e);
        std::vector<Type> elems;
        for (auto& el : t.elems) {
          Type et = typeOf(*el, report);
          if (et.isUnknown()) return Type();
          elems.push_back(et);
        }
        return Type::tuple(std::move(elems));
      }
    }
    return Type();
  }

  Type callType(Call& c, bool report) {
    bool known = true;
    for (auto& a : c.args)
      if (typeOf(*a, report).isUnknown()) known = false;
    if (!known) return Type();
    if (c.target == CallTarget::User) return M.find(c.callee)->returnType;
    if (c.target == CallTarget::Library) {
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
      if (!canAssignImplicitly(from.elem(), to.elem()))
        Diag.error(e->loc, "cannot implicitly convert " + from.str() + " to " + to.str() + " for " + what +
                               "; write " + to.str() + "(...) to convert");
      return convert(std::move(e), to);
    }
    if (from != to) Diag.error(e->loc, "expected " + to.str() + " for " + what + ", got " + from.str());
    return e;
  }

  /// What `break` and `continue` may leave from here.
  enum class Jump { None, Loop, ParallelLoop, Task };

  void finalizeBlock(Block& b, Jump jump) {
    for (auto& s : b.stmts) finalizeStmt(*s, jump);
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
    if (typeOf(*e, true).isUnknown()) return;
    e = insertCasts(std::move(e));
  }

  /// Condition of if/while/select: bool, or a scalar's truth value.
  void finalizeCondition(ExprPtr& e) {
    finalizeExpr(e);
    if (e->type.isUnknown()) return;
    if (!e->type.isScalar()) {
      Diag.error(e->loc, "the truth value of " + e->type.str() + " is ambiguous");
      return;
    }
    e = convert(std::move(e), Type::boolTy());
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
          finalizeExpr(f.iterable);
          const Type& t = f.iterable->type;
          if (!t.isUnknown() && !(t.isArray() && t.rank() == 1)) {
            Diag.error(f.iterable->loc, "a for loop iterates over range(...) or a 1-D array, not " + t.str());
          } else if (!t.isUnknown()) {
            // Each element is stored into the loop variable.
            const Type& var = Vars[f.var].type;
            if (var.isScalar() && !canAssignImplicitly(t.elem(), var.elem()))
              Diag.error(f.varLoc, "cannot implicitly convert " + std::string(scalarName(t.elem())) + " to " +
                                       var.str() + " for '" + f.var + "'");
          }
        }
        finalizeBlock(*f.body, f.parallel ? Jump::ParallelLoop : Jump::Loop);
        return;
      }
      case StmtKind::Return: {
        auto& r = static_cast<Return&>(s);
        if (!r.value) {
          if (!F.returnType.isVoid())
            Diag.error(r.loc, "'" + F.name + "' must return a value of type " + F.returnType.str());
          return;
        }
        finalizeExpr(r.value);
        if (F.returnType.isVoid()) {
          Diag.error(r.value->loc, "'" + F.name + "' has no return annotation but returns a value; add '-> " +
                                       r.value->type.str() + "' to its signature");
          return;
        }
        r.value = convertForAssignment(std::move(r.value), F.returnType, "the return value of '" + F.name + "'");
        return;
      }
      case StmtKind::Break:
      case StmtKind::Continue: return checkJump(s, jump);
      case StmtKind::Pass: return;
      case StmtKind::Block: return finalizeBlock(static_cast<Block&>(s), jump);
      case StmtKind::Task: return finalizeBlock(*static_cast<Task&>(s).body, Jump::Task);
    }
  }

  void finalizeAssign(Assign& a) {
    if (!a.value) return;  // a bare declaration
    finalizeExpr(a.value);
    if (a.value->type.isUnknown()) return;
    if (a.targets.size() == 1) {
      finalizeTarget(a.targets[0], a.value);
      return;
    }
    auto* tup = dyn_cast<TupleLit>(a.value.get());
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

  void finalizeTarget(ExprPtr& target, ExprPtr& value) {
    if (auto* var = dyn_cast<VarRef>(target.get())) {
      const Type& t = Vars[var->name].type;
      var->type = t;
      value = convertForAssignment(std::move(value), t, "'" + var->name + "'");
      return;
    }
    finalizeExpr(target);
    if (target->type.isUnknown()) return;
    if (!value->type.isScalar()) {
      Diag.error(value->loc, "cannot store " + value->type.str() + " into an array element");
      return;
    }
    // Element stores convert like NumPy's setitem: any scalar, unchecked.
    value = convert(std::move(value), target->type);
  }

  /// A weak integer literal takes the other operand's type; NumPy 2 raises
  /// OverflowError when it does not fit, and so does pyddc, at compile time.
  void checkLiteralFits(const Expr& e, const Type& to) {
    auto* lit = dyn_cast<IntLit>(&e);
    if (!lit || to != Type::int32()) return;
    if (lit->value < INT32_MIN || lit->value > INT32_MAX)
      Diag.error(lit->loc, "integer literal " + std::to_string(lit->value) + " does not fit in int32, the type of the other operand");
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
        l.lhs = convert(std::move(l.lhs), Type::boolTy());
        l.rhs = convert(std::move(l.rhs), Type::boolTy());
        break;
      }
      case ExprKind::Not: {
        auto& n = static_cast<Not&>(*e);
        n.operand = convert(std::move(n.operand), Type::boolTy());
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
        for (auto& i : static_cast<Index&>(*e).indices) i = convert(std::move(i), Type::int64());
        break;
      }
      case ExprKind::Call: {
        auto& c = static_cast<Call&>(*e);
        if (c.target == CallTarget::User) {
          Function* callee = M.find(c.callee);
          for (size_t i = 0; i < c.args.size(); ++i)
            c.args[i] = convertForAssignment(std::move(c.args[i]), callee->params[i].type,
                                             "argument '" + callee->params[i].name + "' of " + c.callee + "()");
        } else if (c.target == CallTarget::Library && c.library->category == LibraryCategory::Allocation) {
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
  std::map<std::string, VarInfo> Vars;
  bool Changed = false;
  bool Reporting = false;
  bool ReportReads = false;
  std::set<std::string> Unbound;
};

void checkSignatures(Module& m, Diagnostics& diag) {
  std::set<std::string> seen;
  for (auto& f : m.functions) {
    if (!seen.insert(f->name).second) diag.error(f->loc, "function '" + f->name + "' is defined twice");
    for (auto& p : f->params)
      if (p.type.isUnknown()) diag.error(p.loc, "parameter '" + p.name + "' has no usable type");
  }
}

}  // namespace

bool analyzeModule(Module& m, Diagnostics& diag) {
  unsigned before = diag.errorCount();
  checkSignatures(m, diag);
  Resolver resolver(m, diag);
  for (auto& f : m.functions) {
    resolver.Current = f.get();
    resolver.mutate(static_cast<Stmt&>(*f->body));
  }
  if (diag.errorCount() != before) return false;
  for (auto& f : m.functions) FunctionTyper(m, *f, diag).run();
  return diag.errorCount() == before;
}

}  // namespace pydd
