// The design is in CudaEmitter.h; which loops become kernels is
// opt/DeviceLoops.h's decision, asked here, never made here.
#include "codegen/CudaEmitter.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <set>

#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/Privatization.h"
#include "opt/ValueRanges.h"
#include "stdlib/Catalog.h"

namespace pydd {

std::string cxxVariable(const Module& m, const Function& f, const std::string& name);  // CppEmitter.cpp

namespace {

/// The pydd::op functors pydd/cuda/kernel.h has a device form of (as
/// pydd::cuda::op::<name>).
const std::set<std::string>& deviceFunctors() {
  static const std::set<std::string> names = {
      "add",     "sub",    "mul",         "truediv",     "floordiv",   "mod",         "power",      "maximum",
      "minimum", "eq",     "ne",          "lt",          "le",         "gt",          "ge",         "logical_and",
      "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "arctan2", "hypot", "negative",
      "absolute", "logical_not", "isnan",  "isinf",       "floor",      "ceil",        "square",     "sign",
      "sqrt",    "exp",    "log",         "cos",         "sin",        "tan",         "arccos",     "arcsin",
      "arctan",  "tanh",   "sinh",        "cosh",        "log2",       "log10",       "exp2",       "expm1",
      "log1p"};
  return names;
}

/// "add" for "pydd::op::add"; empty when the functor has no device form.
std::string deviceFunctor(const LibraryFunction& f) {
  if (!f.element || !f.element->functor) return "";
  std::string name = f.element->functor;
  const std::string prefix = "pydd::op::";
  if (name.compare(0, prefix.size(), prefix) != 0) return "";
  name = name.substr(prefix.size());
  return deviceFunctors().count(name) ? name : "";
}

/// The header queries a kernel reads from its views: shape, len, size, ndim.
bool headerQuery(const Call& c) {
  if (!c.library || !c.library->readsHeaderOnly || c.args.empty() || !c.type.isScalar()) return false;
  std::string n = c.library->name;
  if (!c.args[0]->type.isArray() || c.args[0]->kind != ExprKind::Var) return false;
  if (n == "shape") {
    int64_t axis = 0;
    return c.args.size() == 2 && constantInt(*c.args[1], axis);
  }
  return (n == "len" || n == "size" || n == "ndim") && c.args.size() == 1;
}

/// `where(c, a, b)` on scalars: the element-wise function whose catalog
/// entry spells its own element form (no functor).
bool scalarWhere(const Call& c) {
  return c.library && c.library->element && (!c.library->element->functor || !*c.library->element->functor) &&
         c.args.size() == 3 && c.type.isScalar();
}

class Support : public DeviceSupport {
 public:
  std::string unsupported(const Stmt& s) const override {
    if (auto* a = dyn_cast<Assign>(&s)) {
      for (auto& t : a->targets) {
        if (t->type.isArray() && t->kind == ExprKind::Var) return "rebinds an array (arrays are not assigned on the device)";
        if (t->type.isArray()) return "stores into an array view (only element stores run on the device)";
      }
      if (a->targets.size() > 1 && (!a->value || a->value->kind != ExprKind::TupleLit))
        return "unpacks a tuple value (no tuples on the device)";
    }
    if (auto* f = dyn_cast<For>(&s); f && !f->isRange) {
      const Expr& it = *f->iterable;
      if (!(it.kind == ExprKind::Var && it.type.isArray() && it.type.rank() == 1))
        return "loops over what is neither a range nor a 1-D array";
    }
    return "";
  }
  std::string unsupported(const Expr& e) const override {
    if (e.type.isComplex()) return "uses complex numbers (the CUDA emitter has no complex arithmetic)";
    if (auto* f = dyn_cast<FloatLit>(&e); f && f->imaginary) return "uses complex numbers (the CUDA emitter has no complex arithmetic)";
    if (e.type.isSparse()) return "reads a sparse matrix (only dense arrays are copied to the device)";
    if (e.type.isTuple() && e.kind != ExprKind::TupleLit) return "uses a tuple value (no tuples on the device)";
    if (e.type.isArray() && e.kind != ExprKind::Var)
      return "computes an array value (only element accesses run on the device)";
    if (auto* b = dyn_cast<Binary>(&e); b && b->op == BinaryOp::MatMul) return "multiplies matrices (@)";
    if (auto* c = dyn_cast<Call>(&e); c && c->library) {
      const LibraryFunction& f = *c->library;
      bool ok = f.category == LibraryCategory::Elementwise ? (!deviceFunctor(f).empty() || scalarWhere(*c))
                                                            : headerQuery(*c);
      if (!ok) return std::string("calls '") + f.name + "', which has no CUDA form in the emitter";
    }
    return "";
  }
  bool rowKernels() const override { return false; }
};

std::string intLit(int64_t v) {
  if (v == INT64_MIN) return "int64_t(-9223372036854775807LL - 1)";
  return "int64_t(" + std::to_string(v) + (v > INT32_MAX || v < INT32_MIN ? "LL" : "") + ")";
}

std::string floatLit(double v) {
  if (std::isnan(v)) return "__builtin_nan(\"\")";
  if (std::isinf(v)) return v > 0 ? "__builtin_huge_val()" : "(-__builtin_huge_val())";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return v < 0 ? "(" + s + ")" : s;
}

std::string scalarType(const Type& t) { return cxxScalarType(t.elem()); }

/// How a reduction's values combine (pydd::cuda::combine::*) and start.
struct ReductionForm {
  std::string var, type, combine, identity;
};

ReductionForm reductionForm(const std::string& var, const Type& t, const std::string& op, int64_t foldIdentity) {
  ReductionForm r{var, scalarType(t), "", ""};
  std::string T = r.type;
  bool isFloat = t.isFloat();
  if (op == "+" || op == "-" || op == "add") r.combine = "add", r.identity = T + "(0)";
  else if (op == "*" || op == "mul") r.combine = "mul", r.identity = T + "(1)";
  else if (op == "&" || op == "bitwise_and") r.combine = "bit_and", r.identity = T + "(~" + T + "(0))";
  else if (op == "|" || op == "bitwise_or") r.combine = "bit_or", r.identity = T + "(0)";
  else if (op == "^" || op == "bitwise_xor") r.combine = "bit_xor", r.identity = T + "(0)";
  else if (op == "&&" || op == "logical_and") r.combine = "logical_and", r.identity = T + "(true)";
  else if (op == "||" || op == "logical_or") r.combine = "logical_or", r.identity = T + "(false)";
  else if (op == "max") r.combine = "max", r.identity = isFloat ? T + "(-__builtin_huge_val())" : "pydd::detail::int_min<" + T + ">()";
  else if (op == "min") r.combine = "min", r.identity = isFloat ? T + "(__builtin_huge_val())" : "pydd::detail::int_max<" + T + ">()";
  else if (op == "maximum") r.combine = "maximum", r.identity = isFloat ? T + "(-__builtin_huge_val())" : "pydd::detail::int_min<" + T + ">()";
  else if (op == "minimum") r.combine = "minimum", r.identity = isFloat ? T + "(__builtin_huge_val())" : "pydd::detail::int_max<" + T + ">()";
  if (foldIdentity != INT64_MIN && !r.combine.empty()) r.identity = T + "(" + intLit(foldIdentity) + ")";
  return r;
}

/// The variables of a kernel's loop and what each is to the kernel.
struct LoopVars {
  std::vector<const For*> nest;
  std::vector<std::string> arrays;  // in order of first use
  std::map<std::string, unsigned> direction;  // Transfers::kIn | kOut
  std::vector<std::string> scalars;   // read, not assigned: by value
  std::vector<std::string> privates;  // assigned: each iteration's own
  std::vector<std::string> lasts;     // privates whose last iteration's value leaves the loop
  std::vector<ReductionForm> reductions;
};

class VarScan {
 public:
  explicit VarScan(LoopVars& v) : V(v) {}
  std::vector<std::string> order;  // scalars, in order of first use
  std::set<std::string> assigned;

  void stmt(const Stmt& s) {
    if (auto* b = dyn_cast<Block>(&s)) {
      for (auto& c : b->stmts) stmt(*c);
      return;
    }
    if (auto* a = dyn_cast<Assign>(&s)) {
      if (a->value) expr(*a->value);
      for (auto& t : a->targets) {
        if (auto* v = dyn_cast<VarRef>(t.get())) {
          use(v->name, t->type);
          assigned.insert(v->name);
        } else if (auto* x = dyn_cast<Index>(t.get())) {
          if (auto* base = dyn_cast<VarRef>(x->base.get())) array(base->name, 2);
          for (auto& i : x->indices) expr(*i);
        }
      }
      return;
    }
    if (auto* f = dyn_cast<For>(&s)) {
      use(f->var, Type::int64());
      assigned.insert(f->var);
      if (f->isRange) {
        for (auto* e : {f->start.get(), f->stop.get(), f->step.get()})
          if (e) expr(*e);
      } else if (auto* it = dyn_cast<VarRef>(f->iterable.get())) {
        array(it->name, 1);
      }
      stmt(*f->body);
      return;
    }
    forEachPart(s, [&](const Expr& e) { expr(e); }, [&](const Block& b) { stmt(b); });
  }

  void expr(const Expr& e) {
    if (auto* x = dyn_cast<Index>(&e)) {
      if (auto* base = dyn_cast<VarRef>(x->base.get()); base && base->type.isArray()) {
        array(base->name, 1);
        for (auto& i : x->indices) expr(*i);
        return;
      }
    }
    if (auto* v = dyn_cast<VarRef>(&e)) {
      if (v->type.isArray()) array(v->name, 0);
      else use(v->name, v->type);
      return;
    }
    forEachChild(e, [&](const Expr& c) { expr(c); });
  }

 private:
  LoopVars& V;
  std::set<std::string> seen;
  void array(const std::string& name, unsigned dir) {
    if (!V.direction.count(name)) V.arrays.push_back(name);
    V.direction[name] |= dir;
  }
  void use(const std::string& name, const Type&) {
    if (seen.insert(name).second) order.push_back(name);
  }
};

/// Prints a kernel's body: the loop's IR with pydd/cuda/kernel.h's forms.
class DeviceBody {
 public:
  DeviceBody(const Module& m, const Function& f, bool boundsCheck) : M(m), F(f), BoundsCheck(boundsCheck) {
    NonNeg = nonNegativeVars(f);
  }
  std::string Out;
  bool Checks = false;  // a statement tests pydd_err
  std::map<std::string, std::string> Views;  // array -> its DView parameter

  std::string var(const std::string& name) const { return cxxVariable(M, F, name); }

  void line(int depth, const std::string& text) {
    Out.append(static_cast<size_t>(depth) * 2, ' ');
    Out += text + "\n";
  }
  std::string temp(const std::string& hint) { return "pydd_" + hint + std::to_string(Next++); }

  // ---- expressions ----
  std::string expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::IntLit: return intLit(static_cast<const IntLit&>(e).value);
      case ExprKind::FloatLit: return floatLit(static_cast<const FloatLit&>(e).value);
      case ExprKind::BoolLit: return static_cast<const BoolLit&>(e).value ? "true" : "false";
      case ExprKind::Var: return var(static_cast<const VarRef&>(e).name);
      case ExprKind::Unary: {
        auto& u = static_cast<const Unary&>(e);
        std::string t = scalarType(e.type), v = expr(*u.operand);
        if (u.op == UnaryOp::Neg) return "pydd::cuda::wrap_neg<" + t + ">(" + v + ")";
        return t + "(" + (u.op == UnaryOp::Pos ? "+" : "~") + v + ")";
      }
      case ExprKind::Binary: return binary(static_cast<const Binary&>(e));
      case ExprKind::Compare: return compare(static_cast<const Compare&>(e));
      case ExprKind::Logical: {
        auto& l = static_cast<const Logical&>(e);
        return "(" + expr(*l.lhs) + (l.isAnd ? " && " : " || ") + expr(*l.rhs) + ")";
      }
      case ExprKind::Not: return "(!" + expr(*static_cast<const Not&>(e).operand) + ")";
      case ExprKind::Select: {
        auto& s = static_cast<const Select&>(e);
        return "(" + expr(*s.cond) + " ? " + expr(*s.trueValue) + " : " + expr(*s.falseValue) + ")";
      }
      case ExprKind::Call: return call(static_cast<const Call&>(e));
      case ExprKind::Index: return index(static_cast<const Index&>(e));
      case ExprKind::Cast: {
        auto& c = static_cast<const Cast&>(e);
        std::string v = expr(*c.operand);
        if (c.type.isBool()) return "(" + v + " != 0)";
        if (c.operand->type.isFloat() && c.type.isInteger()) return "pydd::cuda::convert<" + scalarType(c.type) + ">(" + v + ")";
        return "static_cast<" + scalarType(c.type) + ">(" + v + ")";
      }
      default: break;  // DeviceSupport keeps the rest on the host
    }
    return "/* no device form */";
  }

  std::string raising(const std::string& call) {
    Raises = true;
    return call;
  }

  std::string binary(const Binary& b) {
    std::string t = scalarType(b.type), l = expr(*b.lhs), r = expr(*b.rhs);
    switch (b.op) {
      case BinaryOp::Add: return "pydd::cuda::wrap_add<" + t + ">(" + l + ", " + r + ")";
      case BinaryOp::Sub:
        // As the CPU build: g++ folds 0.0 - (double)i into -(double)i (-0.0
        // for i == 0); testing the integer survives its folding.
        if (b.type.isFloat() && isPositiveZero(*b.lhs))
          if (auto* c = dyn_cast<Cast>(b.rhs.get()); c && !c->operand->type.isFloat())
            return "(" + expr(*c->operand) + " == 0 ? " + t + "(0) : " + t + "(-" + r + "))";
        return "pydd::cuda::wrap_sub<" + t + ">(" + l + ", " + r + ")";
      case BinaryOp::Mul: return "pydd::cuda::wrap_mul<" + t + ">(" + l + ", " + r + ")";
      case BinaryOp::Div: return raising("pydd::cuda::truediv<" + t + ">(" + l + ", " + r + ", pydd_err)");
      case BinaryOp::FloorDiv: return raising("pydd::cuda::floordiv<" + t + ">(" + l + ", " + r + ", pydd_err)");
      case BinaryOp::Mod: return raising("pydd::cuda::mod<" + t + ">(" + l + ", " + r + ", pydd_err)");
      case BinaryOp::Pow: return raising("pydd::cuda::power<" + t + ">(" + l + ", " + r + ", pydd_err)");
      case BinaryOp::BitAnd: return t + "(" + l + " & " + r + ")";
      case BinaryOp::BitOr: return t + "(" + l + " | " + r + ")";
      case BinaryOp::BitXor: return t + "(" + l + " ^ " + r + ")";
      case BinaryOp::Shl: return raising("pydd::cuda::shift_left<" + t + ">(" + l + ", " + r + ", pydd_err)");
      case BinaryOp::Shr: return raising("pydd::cuda::shift_right<" + t + ">(" + l + ", " + r + ", pydd_err)");
      case BinaryOp::MatMul: break;
    }
    return "/* no device form */";
  }

  static bool isPositiveZero(const Expr& e) {
    if (auto* c = dyn_cast<Cast>(&e)) return isPositiveZero(*c->operand);
    if (auto* f = dyn_cast<FloatLit>(&e)) return f->value == 0 && !std::signbit(f->value);
    if (auto* i = dyn_cast<IntLit>(&e)) return i->value == 0;
    return false;
  }

  std::string compare(const Compare& c) {
    auto op = [](CmpOp o) { return std::string(" ") + spelling(o) + " "; };
    if (c.operands.size() == 2) return "(" + expr(*c.operands[0]) + op(c.ops[0]) + expr(*c.operands[1]) + ")";
    // A chain: each operand once, stopping at the first false link.
    std::string s = "[&]() -> bool { ";
    std::vector<std::string> names;
    for (size_t i = 0; i < c.operands.size(); ++i) {
      names.push_back(temp("cmp"));
      s += "const " + scalarType(c.operands[i]->type) + " " + names[i] + " = " + expr(*c.operands[i]) + "; ";
      if (i == 0) continue;
      std::string t = scalarType(c.linkTypes[i - 1]);
      std::string test = t + "(" + names[i - 1] + ")" + op(c.ops[i - 1]) + t + "(" + names[i] + ")";
      s += i + 1 < c.operands.size() ? "if (!(" + test + ")) return false; " : "return " + test + "; ";
    }
    return s + "}()";
  }

  std::string call(const Call& c) {
    const LibraryFunction& f = *c.library;
    if (f.category != LibraryCategory::Elementwise) {
      const std::string& view = Views.at(static_cast<const VarRef&>(*c.args[0]).name);
      std::string n = f.name;
      int rank = c.args[0]->type.rank();
      if (n == "shape") {
        int64_t axis = 0;
        constantInt(*c.args[1], axis);
        if (axis < 0) axis += rank;
        return view + ".shape[" + std::to_string(axis) + "]";
      }
      if (n == "len") return view + ".shape[0]";
      if (n == "size") return view + ".size()";
      return intLit(rank);  // ndim
    }
    std::string result = scalarType(c.type);
    if (scalarWhere(c))
      return "(bool(" + expr(*c.args[0]) + ") ? static_cast<" + result + ">(" + expr(*c.args[1]) + ") : static_cast<" +
             result + ">(" + expr(*c.args[2]) + "))";
    std::string compute = cxxScalarType(elementComputeKind(c));
    std::string functor = deviceFunctor(f);
    if (functor == "power") Raises = true;
    std::string s = "pydd::cuda::op::" + functor + "{pydd_err}(";
    for (size_t i = 0; i < c.args.size(); ++i) s += (i ? ", " : "") + ("static_cast<" + compute + ">(" + expr(*c.args[i]) + ")");
    return "static_cast<" + result + ">(" + s + "))";
  }

  std::string index(const Index& x) {
    auto& base = static_cast<const VarRef&>(*x.base);
    const std::string& view = Views.at(base.name);
    std::string s = view + "(";
    for (size_t k = 0; k < x.indices.size(); ++k) {
      std::string i = expr(*x.indices[k]), extent = view + ".shape[" + std::to_string(k) + "]";
      if (BoundsCheck) i = raising("pydd::cuda::checked_index(" + i + ", " + extent + ", pydd_err)");
      else if (!x.inRange && !nonNegative(*x.indices[k], NonNeg)) i = "pydd::cuda::wrap_index(" + i + ", " + extent + ")";
      s += (k ? ", " : "") + i;
    }
    return s + ")";
  }

  // ---- statements ----
  void check(int depth) {
    if (!Raises) return;
    Raises = false;
    Checks = true;
    line(depth, "if (pydd_err) goto pydd_fail;");
  }

  void block(const Block& b, int depth) {
    for (auto& s : b.stmts) stmt(*s, depth);
  }

  /// A branch's or loop's condition, evaluated into a local (its error
  /// tested) before the test; returns the local.
  std::string condition(const Expr& cond, int depth) {
    std::string c = temp("cond");
    line(depth, "const bool " + c + " = " + expr(cond) + ";");
    check(depth);
    return c;
  }

  void store(const Expr& target, const std::string& value, int depth) {
    if (target.kind == ExprKind::Var) return line(depth, expr(target) + " = " + value + ";");
    // The value first, as Python evaluates it before the target's indices.
    std::string t = temp("value");
    line(depth, "{");
    line(depth + 1, "const " + scalarType(target.type) + " " + t + " = " + value + ";");
    check(depth + 1);
    line(depth + 1, expr(target) + " = " + t + ";");
    check(depth + 1);
    line(depth, "}");
  }

  void stmt(const Stmt& s, int depth) {
    switch (s.kind) {
      case StmtKind::Block:
        line(depth, "{");
        block(static_cast<const Block&>(s), depth + 1);
        line(depth, "}");
        return;
      case StmtKind::Assign: {
        auto& a = static_cast<const Assign&>(s);
        if (!a.value) return;
        if (a.targets.size() == 1) {
          store(*a.targets[0], expr(*a.value), depth);
          check(depth);
          return;
        }
        // Tuple assignment: every value before any store.
        auto& tup = static_cast<const TupleLit&>(*a.value);
        line(depth, "{");
        std::vector<std::string> temps;
        for (auto& el : tup.elems) {
          temps.push_back(temp("tup"));
          line(depth + 1, "const " + scalarType(el->type) + " " + temps.back() + " = " + expr(*el) + ";");
        }
        check(depth + 1);
        for (size_t i = 0; i < a.targets.size(); ++i) store(*a.targets[i], temps[i], depth + 1);
        line(depth, "}");
        return;
      }
      case StmtKind::ExprStmt:
        line(depth, "(void)" + expr(*static_cast<const ExprStmt&>(s).expr) + ";");
        check(depth);
        return;
      case StmtKind::If: {
        auto& i = static_cast<const If&>(s);
        line(depth, "{");
        std::string c = condition(*i.cond, depth + 1);
        line(depth + 1, "if (" + c + ") {");
        block(*i.thenBody, depth + 2);
        if (i.elseBody) {
          line(depth + 1, "} else {");
          block(*i.elseBody, depth + 2);
        }
        line(depth + 1, "}");
        line(depth, "}");
        return;
      }
      case StmtKind::While: {
        auto& w = static_cast<const While&>(s);
        line(depth, "for (;;) {");
        line(depth + 1, "if (!" + condition(*w.cond, depth + 1) + ") break;");
        block(*w.body, depth + 1);
        line(depth, "}");
        return;
      }
      case StmtKind::For: return forLoop(static_cast<const For&>(s), depth);
      case StmtKind::Break: line(depth, "break;"); return;
      case StmtKind::Continue: line(depth, "continue;"); return;
      default: return;  // Pass; DeviceLoops keeps Return and Task on the host
    }
  }

  void forLoop(const For& f, int depth) {
    std::string v = var(f.var);
    const Type* varType = F.lookup(f.var);
    line(depth, "{");
    if (!f.isRange) {
      auto& it = static_cast<const VarRef&>(*f.iterable);
      const std::string& view = Views.at(it.name);
      std::string k = temp("k");
      line(depth + 1, "for (int64_t " + k + " = 0; " + k + " < " + view + ".shape[0]; ++" + k + ") {");
      line(depth + 2, v + " = " + view + "(" + k + ");");
    } else {
      std::string start = temp("start"), stop = temp("stop"), step = temp("step"), n = temp("n"), k = temp("k");
      line(depth + 1, "const int64_t " + start + " = " + expr(*f.start) + ";");
      line(depth + 1, "const int64_t " + stop + " = " + expr(*f.stop) + ";");
      line(depth + 1, "const int64_t " + step + " = " + raising("pydd::cuda::check_range_step(" + expr(*f.step) + ", pydd_err)") + ";");
      check(depth + 1);
      line(depth + 1, "const uint64_t " + n + " = pydd::cuda::range_length(" + start + ", " + stop + ", " + step + ");");
      line(depth + 1, "for (uint64_t " + k + " = 0; " + k + " < " + n + "; ++" + k + ") {");
      std::string i = "int64_t(uint64_t(" + start + ") + " + k + " * uint64_t(" + step + "))";
      line(depth + 2, v + " = " + (varType && *varType != Type::int64() ? cxxType(*varType) + "(" + i + ")" : i) + ";");
    }
    block(*f.body, depth + 2);
    line(depth + 1, "}");
    line(depth, "}");
  }

 private:
  const Module& M;
  const Function& F;
  bool BoundsCheck;
  std::set<std::string> NonNeg;
  bool Raises = false;
  int Next = 0;
};

/// Whether every iteration of `body` stores `array[v0, v1, ...]`, the
/// variables of `nest` in order, one per axis: a store at the top level of
/// the body, which holds no `continue` and does not rebind the variables.
bool storesWhole(const Block& body, const std::string& array, const std::vector<const For*>& nest) {
  bool continues = false;
  std::function<void(const Stmt&)> scan = [&](const Stmt& s) {
    if (s.kind == StmtKind::Continue) continues = true;
    forEachPart(s, [](const Expr&) {}, [&](const Block& b) {
      for (auto& c : b.stmts) scan(*c);
    });
  };
  scan(body);
  std::set<std::string> assigned = assignedVars(body);
  for (auto* l : nest)
    if (assigned.count(l->var)) return false;
  if (continues) return false;
  for (auto& s : body.stmts) {
    auto* a = dyn_cast<Assign>(s.get());
    if (!a || a->targets.size() != 1) continue;
    auto* x = dyn_cast<Index>(a->targets[0].get());
    auto* base = x ? dyn_cast<VarRef>(x->base.get()) : nullptr;
    if (!base || base->name != array || x->indices.size() != nest.size()) continue;
    bool exact = true;
    for (size_t k = 0; k < nest.size(); ++k) {
      auto* v = dyn_cast<VarRef>(x->indices[k].get());
      exact = exact && v && v->name == nest[k]->var;
    }
    if (exact) return true;
  }
  return false;
}

}  // namespace

const DeviceSupport& cudaDeviceSupport(bool) {
  static const Support support;
  return support;
}

struct CudaEmitter::Launch {
  std::string name;         // the launch function
  std::string declaration;  // its host declaration (without ';')
  std::string definition;   // kernel and launch function
  LoopVars vars;
  const Function* function = nullptr;
};

CudaEmitter::CudaEmitter(const Module& m, const DevicePlan& plan, const ParallelPlan& parallel, bool boundsCheck)
    : M(m), Plan(plan), Parallel(parallel), BoundsCheck(boundsCheck) {}

CudaEmitter::~CudaEmitter() {
  for (auto* l : Order) delete l;
}

std::string CudaEmitter::hostDeclarations() const {
  std::string s;
  for (auto* l : Order) s += l->declaration + ";\n";
  return s;
}

std::string CudaEmitter::deviceSource() const {
  std::string s = "// Generated by pyddc from " + M.path + " (CUDA kernels). Do not edit.\n";
  s += "#include \"pydd/cuda/kernel.h\"\n\nnamespace " + cxxIdentifier(M.name) + " {\n";
  for (auto* l : Order) s += "\n" + l->definition;
  s += "\n}  // namespace " + cxxIdentifier(M.name) + "\n";
  return s;
}

bool CudaEmitter::hostLoop(const Function& F, const For& loop, const HostPrinter& host, std::vector<std::string>& lines) {
  auto at = Plan.index.find(&loop);
  if (at == Plan.index.end()) return false;
  const DeviceLoop& d = Plan.loops[at->second];
  if (d.kind != DeviceLoopKind::Kernel && d.kind != DeviceLoopKind::Reduction) return false;

  Launch* L = nullptr;
  if (auto known = Launches.find(&loop); known != Launches.end()) {
    L = known->second;  // the host emitter prints some loops twice (two layouts)
  } else {
    L = new Launch;
    Launches[&loop] = L;
    Order.push_back(L);
    L->function = &F;
    LoopVars& V = L->vars;
    V.nest.push_back(&loop);
    if (d.collapse > 1)
      for (unsigned k = 1; k < d.collapse; ++k) V.nest.push_back(&pydd::cast<For>(*V.nest.back()->body->stmts[0]));
    const Block& body = *V.nest.back()->body;
    VarScan scan(V);
    scan.stmt(body);
    const ParallelLoopPlan* pp = nullptr;
    if (auto it = Parallel.loops.find(&loop); it != Parallel.loops.end()) pp = &it->second;
    std::set<std::string> nestVars, reductionVars, lastprivate;
    for (auto* l : V.nest) nestVars.insert(l->var);
    for (auto& r : d.reductions) {
      reductionVars.insert(r.var);
      const Type* t = F.lookup(r.var);
      V.reductions.push_back(reductionForm(r.var, *t, r.op, r.op == "fold" ? loop.foldIdentity : INT64_MIN));
      if (r.op == "fold") {
        // The fold's combine is the element-wise call of `acc = combine(acc, x)`.
        std::function<std::string(const Block&)> find = [&](const Block& b) -> std::string {
          for (auto& s : b.stmts) {
            if (auto* a = dyn_cast<Assign>(s.get()); a && a->targets.size() == 1 && a->value)
              if (auto* v = dyn_cast<VarRef>(a->targets[0].get()); v && v->name == r.var)
                if (auto* c = dyn_cast<Call>(a->value.get()); c && c->library) return deviceFunctor(*c->library);
            if (auto* f = dyn_cast<For>(s.get())) {
              std::string in = find(*f->body);
              if (!in.empty()) return in;
            }
          }
          return "";
        };
        V.reductions.back() = reductionForm(r.var, *t, find(*loop.body), loop.foldIdentity);
      }
    }
    if (pp)
      for (auto& v : pp->lastprivates) lastprivate.insert(v);
    for (auto& name : scan.order) {
      if (nestVars.count(name) || reductionVars.count(name)) continue;
      if (scan.assigned.count(name)) {
        V.privates.push_back(name);
      } else {
        V.scalars.push_back(name);
      }
    }
    for (auto& v : lastprivate)
      if (!reductionVars.count(v)) V.lasts.push_back(v);

    // ---- the kernel ----
    static int counter = 0;
    std::string base = cxxIdentifier(F.name) + "__cuda" + std::to_string(counter++);
    L->name = base + "_launch";
    std::string kernel = base + "_kernel";
    DeviceBody printer(M, F, BoundsCheck);
    for (auto& a : V.arrays) printer.Views[a] = "pydd_v_" + printer.var(a);
    const bool reduce = !V.reductions.empty();
    std::vector<std::string> params, launchParams, kernelArgs;
    for (auto& a : V.arrays) {
      const Type& t = *F.lookup(a);
      std::string T = scalarType(t), R = std::to_string(t.rank()), v = printer.var(a);
      params.push_back("pydd::cuda::DView<" + T + ", " + R + "> " + printer.Views[a]);
      launchParams.push_back(T + "* pydd_data_" + v);
      launchParams.push_back("const int64_t* pydd_shape_" + v);
      launchParams.push_back("const int64_t* pydd_strides_" + v);
    }
    for (size_t k = 0; k < V.nest.size(); ++k) {
      std::string K = std::to_string(k);
      params.push_back("int64_t pydd_start" + K);
      params.push_back("int64_t pydd_step" + K);
      params.push_back("uint64_t pydd_n" + K);
      for (const char* p : {"start", "stop", "step"}) launchParams.push_back("int64_t pydd_" + std::string(p) + K);
    }
    for (auto& s : V.scalars) {
      params.push_back(cxxType(*F.lookup(s)) + " " + printer.var(s));
      launchParams.push_back(cxxType(*F.lookup(s)) + " " + printer.var(s));
    }
    for (auto& s : V.lasts) {
      params.push_back(cxxType(*F.lookup(s)) + "* pydd_last_" + printer.var(s));
      launchParams.push_back(cxxType(*F.lookup(s)) + "* " + printer.var(s));
    }
    for (auto& r : V.reductions) {
      params.push_back(r.type + "* pydd_partial_" + printer.var(r.var));
      launchParams.push_back(r.type + "* " + printer.var(r.var));
    }
    params.push_back("pydd::cuda::KernelErrors* pydd_errors");

    // The body first: whether it tests errors decides the kernel's end.
    int depth = 3;
    printer.block(body, depth);
    std::string bodyText = printer.Out;
    printer.Out.clear();
    auto& P = printer;
    P.line(0, "// " + M.path + ":" + std::to_string(loop.loc.line) + ": " + d.reason);
    std::string list;
    for (size_t i = 0; i < params.size(); ++i) list += (i ? ", " : "") + params[i];
    P.line(0, "static PYDD_GLOBAL void " + kernel + "(" + list + ") {");
    std::string total;
    for (size_t k = 0; k < V.nest.size(); ++k) total += (k ? " * " : "") + std::string("pydd_n") + std::to_string(k);
    P.line(1, "const uint64_t pydd_total = " + total + ";");
    P.line(1, "const uint64_t pydd_stride = uint64_t(pydd_gridDim.x) * pydd_blockDim.x;");
    for (auto& r : V.reductions) P.line(1, r.type + " " + P.var(r.var) + " = " + r.identity + ";");
    P.line(1, "for (uint64_t pydd_t = uint64_t(pydd_blockIdx.x) * pydd_blockDim.x + pydd_threadIdx.x; pydd_t < pydd_total; "
              "pydd_t += pydd_stride) {");
    P.line(2, "[[maybe_unused]] int32_t pydd_err = 0;");
    for (auto* l : V.nest) P.line(2, cxxType(*F.lookup(l->var)) + " " + P.var(l->var) + "{};");
    for (auto& s : V.privates) P.line(2, "[[maybe_unused]] " + cxxType(*F.lookup(s)) + " " + P.var(s) + "{};");
    // Iteration t of the nest in its sequential order (the last loop fastest).
    P.line(2, "uint64_t pydd_rest = pydd_t;");
    for (size_t k = V.nest.size(); k-- > 0;) {
      std::string K = std::to_string(k), kk = "pydd_k" + K;
      P.line(2, "const uint64_t " + kk + " = pydd_rest % pydd_n" + K + ";");
      P.line(2, "pydd_rest /= pydd_n" + K + ";");
      const Type* vt = F.lookup(V.nest[k]->var);
      std::string i = "int64_t(uint64_t(pydd_start" + K + ") + " + kk + " * uint64_t(pydd_step" + K + "))";
      P.line(2, P.var(V.nest[k]->var) + " = " + (vt && *vt != Type::int64() ? cxxType(*vt) + "(" + i + ")" : i) + ";");
    }
    P.line(2, "do {");
    P.Out += bodyText;
    P.line(2, "} while (0);");
    if (!V.lasts.empty()) {
      P.line(2, "if (pydd_t == pydd_total - 1) {");
      for (auto& s : V.lasts) P.line(3, "*pydd_last_" + P.var(s) + " = " + P.var(s) + ";");
      P.line(2, "}");
    }
    if (P.Checks) {
      P.line(2, "continue;");
      P.line(1, "pydd_fail:");
      P.line(2, "pydd::cuda::record_error(pydd_errors, int64_t(pydd_t), pydd_err);");
      P.line(2, "break;");
    }
    P.line(1, "}");
    if (!P.Checks) P.line(1, "(void)pydd_errors;");
    for (auto& r : V.reductions)
      P.line(1, "pydd::cuda::block_fold(" + P.var(r.var) + ", pydd_partial_" + P.var(r.var) + ", pydd::cuda::combine::" +
                    r.combine + "{});");
    P.line(0, "}");
    P.line(0, "");

    // ---- the launch function ----
    std::string decl;
    for (size_t i = 0; i < launchParams.size(); ++i) decl += (i ? ", " : "") + launchParams[i];
    L->declaration = "void " + L->name + "(" + decl + ")";
    P.line(0, L->declaration + " {");
    for (size_t k = 0; k < V.nest.size(); ++k) {
      std::string K = std::to_string(k);
      P.line(1, "const uint64_t pydd_n" + K + " = pydd::cuda::range_length(pydd_start" + K + ", pydd_stop" + K +
                    ", pydd_step" + K + ");");
    }
    P.line(1, "const uint64_t pydd_total = " + total + ";");
    P.line(1, "if (pydd_total == 0) return;");
    P.line(1, "pydd::cuda::require_device();");
    P.line(1, "pydd::cuda::Transfers pydd_transfers;");
    for (size_t i = 0; i < V.arrays.size(); ++i) {
      const std::string& a = V.arrays[i];
      const Type& t = *F.lookup(a);
      unsigned dir = V.direction[a];
      // A view the kernel writes is copied in too (it may write only part
      // of it, and copying out its range puts back the rest), unless the
      // kernel stores all of it: written, never read, by a store of
      // y[i, j, ...] (the nest's variables in order) that every iteration
      // reaches, when the nest's ranges are y's axes (tested at run time).
      const std::string both = "pydd::cuda::Transfers::kIn | pydd::cuda::Transfers::kOut";
      std::string flags = dir & 2 ? both : dir & 1 ? "pydd::cuda::Transfers::kIn" : "0";
      if (dir == 2 && !printer.Checks && storesWhole(body, a, V.nest)) {
        std::string test;
        for (size_t k = 0; k < V.nest.size(); ++k) {
          std::string K = std::to_string(k);
          test += (k ? " && " : "") + std::string("pydd_start") + K + " == 0 && pydd_step" + K + " == 1 && pydd_n" + K +
                  " == uint64_t(pydd_shape_" + P.var(a) + "[" + K + "])";
        }
        flags = "(" + test + " ? unsigned(pydd::cuda::Transfers::kOut) : unsigned(" + both + "))";
      }
      std::string v = P.var(a);
      P.line(1, "const size_t pydd_arg" + std::to_string(i) + " = pydd_transfers.add(pydd_data_" + v + ", sizeof(" +
                    scalarType(t) + "), " + std::to_string(t.rank()) + ", pydd_shape_" + v + ", pydd_strides_" + v + ", " +
                    flags + ");");
      kernelArgs.push_back("pydd_transfers.view<" + scalarType(t) + ", " + std::to_string(t.rank()) + ">(pydd_arg" +
                           std::to_string(i) + ", pydd_shape_" + v + ", pydd_strides_" + v + ")");
    }
    P.line(1, "pydd_transfers.copy_in();");
    for (size_t k = 0; k < V.nest.size(); ++k) {
      std::string K = std::to_string(k);
      for (std::string a : {"pydd_start" + K, "pydd_step" + K, "pydd_n" + K}) kernelArgs.push_back(a);
    }
    for (auto& s : V.scalars) kernelArgs.push_back(P.var(s));
    for (auto& s : V.lasts) {
      P.line(1, "pydd::cuda::DeviceBuffer<" + cxxType(*F.lookup(s)) + "> pydd_last_" + P.var(s) + "(1, *" + P.var(s) + ");");
      kernelArgs.push_back("pydd_last_" + P.var(s) + ".get()");
    }
    P.line(1, "const unsigned pydd_blocks = " +
                  std::string(reduce ? "pydd::cuda::reduce_blocks(int64_t(pydd_total))" : "pydd::cuda::blocks_for(pydd_total)") +
                  ";");
    for (auto& r : V.reductions) {
      P.line(1, "pydd::cuda::DeviceBuffer<" + r.type + "> pydd_partial_" + P.var(r.var) + "(pydd_blocks + 1, " + r.identity + ");");
      kernelArgs.push_back("pydd_partial_" + P.var(r.var) + ".get()");
    }
    P.line(1, "pydd::cuda::DeviceBuffer<pydd::cuda::KernelErrors> pydd_errors(1, pydd::cuda::KernelErrors{pydd::cuda::kNoError});");
    kernelArgs.push_back("pydd_errors.get()");
    std::string args;
    for (auto& a : kernelArgs) args += ", " + a;
    P.line(1, std::string(reduce ? "pydd::cuda::launch" : "pydd::cuda::launch_flat") + "(&" + kernel +
                  ", pydd::cuda::dim(pydd_blocks), pydd::cuda::dim(" +
                  (reduce ? "pydd::cuda::kReduceThreads" : "pydd::cuda::kBlockThreads") + ")" + args + ");");
    for (auto& r : V.reductions) {
      std::string p = "pydd_partial_" + P.var(r.var), op = "pydd::cuda::combine::" + r.combine;
      P.line(1, "pydd::cuda::launch(&pydd::cuda::fold_partials<" + r.type + ", " + op + ">, pydd::cuda::dim(1), "
                "pydd::cuda::dim(pydd::cuda::kReduceThreads), (const " + r.type + "*)" + p + ".get(), int64_t(pydd_blocks), " +
                p + ".get() + pydd_blocks, " + r.identity + ");");
    }
    P.line(1, "pydd_transfers.copy_out();");
    P.line(1, "const pydd::cuda::KernelErrors pydd_failed = pydd_errors.at(0);");
    P.line(1, "if (pydd_failed.key != pydd::cuda::kNoError) pydd::cuda::raise_kernel_error(pydd_failed.key);");
    for (auto& s : V.lasts) P.line(1, "*" + P.var(s) + " = pydd_last_" + P.var(s) + ".at(0);");
    for (auto& r : V.reductions) {
      std::string p = "pydd_partial_" + P.var(r.var);
      P.line(1, "*" + P.var(r.var) + " = pydd::cuda::combine::" + r.combine + "{}(*" + P.var(r.var) + ", " + p +
                    ".at(pydd_blocks));");
    }
    P.line(0, "}");
    L->definition = P.Out;
  }

  // ---- the host statements: bounds, views, the call ----
  const LoopVars& V = L->vars;
  lines.push_back("{  // " + Plan.loops[at->second].reason);
  std::vector<std::string> args;
  for (size_t k = 0; k < V.nest.size(); ++k) {
    const For& l = *V.nest[k];
    std::string start = host.temp("start"), stop = host.temp("stop"), step = host.temp("step");
    lines.push_back("  const int64_t " + start + " = " + host.expr(*l.start) + ";");
    lines.push_back("  const int64_t " + stop + " = " + host.expr(*l.stop) + ";");
    lines.push_back("  const int64_t " + step + " = " + host.expr(*l.step) + ";");
    if (!dyn_cast<IntLit>(l.step.get())) lines.push_back("  pydd::check_range_step(" + step + ");");
    for (auto& a : {start, stop, step}) args.push_back(a);
  }
  std::vector<std::string> call;
  for (auto& a : V.arrays) {
    std::string v = host.temp("view");
    lines.push_back("  const auto " + v + " = " + host.var(a) + ".view();");
    for (std::string part : {".data", ".shape", ".strides"}) call.push_back(v + part);
  }
  call.insert(call.end(), args.begin(), args.end());
  for (auto& s : V.scalars) call.push_back(host.var(s));
  for (auto& s : V.lasts) call.push_back("&" + host.var(s));
  for (auto& r : V.reductions) call.push_back("&" + host.var(r.var));
  std::string text;
  for (size_t i = 0; i < call.size(); ++i) text += (i ? ", " : "") + call[i];
  lines.push_back("  " + L->name + "(" + text + ");");
  lines.push_back("}");
  return true;
}

}  // namespace pydd
