#include "codegen/CppEmitter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "codegen/ColdLocals.h"
#include "ir/Builder.h"
#include "ir/Visitor.h"
#include "opt/Contiguity.h"
#include "opt/Effects.h"
#include "opt/Loops.h"
#include "opt/Privatization.h"
#include "opt/ValueRanges.h"
#include "stdlib/Catalog.h"

namespace pydd {

std::string cxxVariable(const Module& m, const Function& f, const std::string& name);

namespace {

/// Names a user's identifier is renamed away from (by appending '_'): C++'s
/// keywords, every macro and global-scope name of the headers the generated
/// code includes (the list is made at build time by reserved_names.py: a
/// module named abs or time would clash with ::abs or ::time as a namespace,
/// a variable named EOF with the macro), and the names the generated code
/// itself uses unqualified.
const std::set<std::string>& cxxReserved() {
  static const std::set<std::string> words = {
#include "pydd_config/CxxReserved.inc"
      "pydd", "std", "main", "assert", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
      "uint32_t", "uint64_t", "size_t", "_object"};
  return words;
}

/// Scalar type of a literal C++ expression in the generated code.
std::string cxxScalar(const Type& t) { return cxxScalarType(t.elem()); }

std::string floatLiteral(double v) {
  if (std::isnan(v)) return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(v)) return v > 0 ? "std::numeric_limits<double>::infinity()" : "(-std::numeric_limits<double>::infinity())";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return v < 0 ? "(" + s + ")" : s;
}

/// An int64 literal of exactly that C++ type, so that templates such as
/// pydd::floordiv(T, T) deduce one type for both operands.
std::string intLiteral(int64_t v) {
  if (v == INT64_MIN) return "int64_t(-9223372036854775807LL - 1)";
  return "int64_t(" + std::to_string(v) + (v > INT32_MAX || v < INT32_MIN ? "LL" : "") + ")";
}

std::string stringLiteral(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

/// Array variables used in element accesses: they get a View local.
class IndexedArrays : public Visitor {
 public:
  using Visitor::visit;
  std::set<std::string> names;
  void visit(const Expr& e) override {
    if (auto* idx = dyn_cast<Index>(&e))
      if (auto* v = dyn_cast<VarRef>(idx->base.get())) names.insert(v->name);
    visitChildren(e);
  }
};

/// A rare branch emitted as a function of its own (see outline()).
struct OutlinedBranch {
  std::string declaration;  // without the ';'
  std::string definition;
};

class FunctionEmitter {
 public:
  FunctionEmitter(const Module& m, const Function& f, const CppOptions& o) : M(m), F(f), Opts(o) {
    NonNeg = nonNegativeVars(f);
    IndexedArrays indexed;
    indexed.visit(*f.body);
    Indexed = indexed.names;
    for (auto& p : f.params) Used.insert(p.name);
    for (auto& l : f.locals) Used.insert(l.name);
  }

  std::string emit() {
    std::string decl = cxxDeclaration(M, F, false);
    std::string wrapper;
    if (Opts.parallel && Opts.parallel->spawnsTasks.count(&F)) {
      // The body creates tasks: it runs as an implicit finish (see
      // pydd::run_finish), in a function of its own that takes the finish's
      // error slot, called by the declared function.
      std::string name = cxxIdentifier(F.sourceName()), inner = name + "__pydd_tasks", errs = temp("finish");
      size_t at = decl.find(" " + name + "(");
      std::string args;
      for (auto& p : F.params) args += ", " + cxxVariable(M, F, p.name);
      wrapper = decl + " {\n  pydd::FirstError " + errs + ";\n  " + (F.returnType.isVoid() ? "" : "return ") +
                "pydd::run_finish([&]() { return " + inner + "(&" + errs + args + "); }, " + errs + ");\n}\n";
      decl = "static " + decl.substr(0, at) + " " + inner + "([[maybe_unused]] pydd::FirstError* " + errs +
             (F.params.empty() ? "" : ", ") + decl.substr(at + name.size() + 2);
      Finish.push_back(errs);
    }
    Out += decl + " {\n";
    ColdLocals = coldBranchLocals(F);
    ColdReferences = coldBranchReferences(F);
    UnitStrideArrays = unitStrideArrays(F);
    for (auto& [branch, names] : ColdLocals) Undeclared.insert(names.begin(), names.end());
    std::vector<std::string> locals;
    for (auto& l : F.locals)
      if (!Undeclared.count(l.name)) locals.push_back(l.name);
    declareLocals(locals, 1, F.params);
    block(*F.body, 1);
    if (!F.returnType.isVoid() && !alwaysReturns(*F.body))
      line(1, "pydd::missing_return(\"" + F.sourceName() + "\");");
    Out += "}\n";
    return Out + wrapper;
  }

  /// The rare branches emitted as functions of their own (outline()).
  const std::vector<OutlinedBranch>& outlined() const { return Outlined; }

 private:
  void line(int depth, const std::string& text) {
    Out.append(static_cast<size_t>(depth) * 2, ' ');
    Out += text;
    Out += '\n';
  }

  /// A fresh C++ name for a compiler temporary.
  std::string temp(const std::string& hint) {
    for (;;) {
      std::string name = hint + "_" + std::to_string(NextTemp++);
      if (!Used.count(name) && !cxxReserved().count(name)) {
        Used.insert(name);
        return name;
      }
    }
  }

  void declareView(const std::string& var, int depth) {
    std::string v = temp(var + "_v");
    Views[var] = v;
    ArrayOfView[v] = var;
    line(depth, "[[maybe_unused]] auto " + v + " = " + this->var(var) + ".view();");
  }

  /// Declares these locals of F at `depth`, then the views of the indexed
  /// arrays among `params` and them.
  void declareLocals(const std::vector<std::string>& names, int depth, const std::vector<Param>& params = {}) {
    for (auto& name : names) line(depth, "[[maybe_unused]] " + cxxType(*F.lookup(name)) + " " + var(name) + "{};");
    for (auto& p : params)
      if (p.type.isArray() && Indexed.count(p.name)) declareView(p.name, depth);
    for (auto& name : names)
      if (F.lookup(name)->isArray() && Indexed.count(name)) declareView(name, depth);
  }

  // ---- expressions ----

  std::string expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::IntLit: return intLiteral(static_cast<const IntLit&>(e).value);
      case ExprKind::FloatLit: {
        auto& f = static_cast<const FloatLit&>(e);
        return f.imaginary ? "std::complex<double>(0.0, " + floatLiteral(f.value) + ")" : floatLiteral(f.value);
      }
      case ExprKind::BoolLit: return static_cast<const BoolLit&>(e).value ? "true" : "false";
      case ExprKind::StrLit: return stringLiteral(static_cast<const StrLit&>(e).value);
      case ExprKind::Var: return var(static_cast<const VarRef&>(e).name);
      case ExprKind::Unary: {
        auto& u = static_cast<const Unary&>(e);
        const char* op = u.op == UnaryOp::Neg ? "-" : u.op == UnaryOp::Pos ? "+" : "~";
        // C++ widens 8-, 16- and 32-bit operands to int; narrow back to the IR type.
        return cxxScalar(e.type) + "(" + op + expr(*u.operand) + ")";
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
      case ExprKind::Cast: return cast(static_cast<const Cast&>(e));
      case ExprKind::TupleLit: {
        // List-initialization: braces evaluate left to right, as Python.
        auto& t = static_cast<const TupleLit&>(e);
        std::string s = cxxType(e.type) + "{";
        for (size_t i = 0; i < t.elems.size(); ++i) s += (i ? ", " : "") + expr(*t.elems[i]);
        return s + "}";
      }
      case ExprKind::DictLit: {
        auto& d = static_cast<const DictLit&>(e);
        std::string s = cxxType(e.type) + "{";
        for (size_t i = 0; i < d.keys.size(); ++i) s += std::string(i ? ", " : "") + "{" + expr(*d.keys[i]) + ", " + expr(*d.values[i]) + "}";
        return s + "}";
      }
      case ExprKind::Slice:       // only inside a subscript
      case ExprKind::Attribute:   // rewritten by sema
        break;
    }
    return "/* unsupported */";
  }

  std::string binary(const Binary& b) {
    std::string t = cxxScalar(b.type);
    return sequenced({b.lhs.get(), b.rhs.get()}, [&](const std::vector<std::string>& v) {
      const std::string &l = v[0], &r = v[1];
      switch (b.op) {
        case BinaryOp::Add: return t + "(" + l + " + " + r + ")";
        case BinaryOp::Sub:
          // g++ 12 folds 0.0 - (double)i into -(double)i, which is -0.0 for
          // i == 0 where IEEE and Python give +0.0 (and it drops the + 0.0
          // of -(double)i + 0.0 the same way). Testing the integer first
          // gives the same values and survives its folding.
          if (b.type.isFloat() && isPositiveZero(*b.lhs)) {
            if (auto* c = dyn_cast<Cast>(b.rhs.get()); c && !c->operand->type.isFloat() && !hasSideEffects(*c->operand))
              return "(" + expr(*c->operand) + " == 0 ? " + t + "(0) : " + t + "(-" + r + "))";
          }
          return t + "(" + l + " - " + r + ")";
        case BinaryOp::Mul:
          // std::complex's * follows C99 Annex G; Python and NumPy multiply plainly.
          if (b.type.isComplex()) return "pydd::complex_mul(" + l + ", " + r + ")";
          return t + "(" + l + " * " + r + ")";
        case BinaryOp::Div:
          if (!ZeroDivisorFlag.empty() && b.type.isFloat())
            return "pydd::truediv_deferred(" + l + ", " + r + ", " + ZeroDivisorFlag + ")";
          return "pydd::truediv(" + l + ", " + r + ")";
        case BinaryOp::FloorDiv: return "pydd::floordiv(" + l + ", " + r + ")";
        case BinaryOp::Mod: return "pydd::mod(" + l + ", " + r + ")";
        case BinaryOp::Pow: return "pydd::power(" + l + ", " + r + ")";
        case BinaryOp::MatMul: break;  // on arrays only: sema made it a call
        case BinaryOp::BitAnd: return t + "(" + l + " & " + r + ")";
        case BinaryOp::BitOr: return t + "(" + l + " | " + r + ")";
        case BinaryOp::BitXor: return t + "(" + l + " ^ " + r + ")";
        case BinaryOp::Shl: return "pydd::shift_left(" + l + ", " + r + ")";
        case BinaryOp::Shr: return "pydd::shift_right(" + l + ", " + r + ")";
      }
      return std::string();
    });
  }

  static bool isPositiveZero(const Expr& e) {
    if (auto* c = dyn_cast<Cast>(&e)) return isPositiveZero(*c->operand);
    if (auto* f = dyn_cast<FloatLit>(&e)) return f->value == 0 && !std::signbit(f->value);
    if (auto* i = dyn_cast<IntLit>(&e)) return i->value == 0;
    return false;
  }

  /// Renders operands so that they are evaluated left to right, as in
  /// Python. C++ leaves the order of function arguments and of most
  /// operands unspecified; where it could be observed (an operand with
  /// effects beside one that has effects, reads elements or may raise), the
  /// operands are first evaluated into temporaries, in order, in a lambda.
  std::string sequenced(const std::vector<const Expr*>& operands,
                        const std::function<std::string(const std::vector<std::string>&)>& combine) {
    std::vector<std::string> texts;
    for (const Expr* e : operands) texts.push_back(expr(*e));
    bool effects = false, observed = false;
    for (size_t i = 0; i < operands.size(); ++i) {
      if (operands[i]->kind == ExprKind::TupleLit) return combine(texts);  // a shape: braced list
      if (!sideEffects(*operands[i])) continue;
      for (size_t j = 0; j < operands.size(); ++j)
        if (j != i && (sideEffects(*operands[j]) || readsElements(*operands[j]) || mayRaise(*operands[j], Opts.boundsCheck)))
          observed = true;
      effects = true;
    }
    if (!effects || !observed) return combine(texts);
    std::string s = "[&]() { ";
    std::vector<std::string> names;
    for (size_t i = 0; i < texts.size(); ++i) {
      names.push_back(temp("arg"));
      s += "const auto " + names[i] + " = " + texts[i] + "; ";
    }
    return s + "return " + combine(names) + "; }()";
  }

  /// hasSideEffects, remembered per node: sequenced() asks it at every
  /// level of an expression, which walked a deep one quadratically.
  bool sideEffects(const Expr& e) {
    if (auto it = SideEffects.find(&e); it != SideEffects.end()) return it->second;
    bool found = nodeHasSideEffects(e);
    forEachChild(e, [&](const Expr& c) { found = sideEffects(c) || found; });
    return SideEffects[&e] = found;
  }

  static std::string cmp(CmpOp op) { return std::string(" ") + spelling(op) + " "; }

  std::string compare(const Compare& c) {
    if (c.operands.size() == 2)
      return sequenced({c.operands[0].get(), c.operands[1].get()},
                       [&](const std::vector<std::string>& v) { return "(" + v[0] + cmp(c.ops[0]) + v[1] + ")"; });
    // A chain: each operand evaluated once, stopping at the first false
    // link, with each link compared in its own common type.
    std::string s = "[&]() -> bool { ";
    std::vector<std::string> names;
    for (size_t i = 0; i < c.operands.size(); ++i) {
      names.push_back(temp("cmp"));
      s += "const " + cxxScalar(c.operands[i]->type) + " " + names[i] + " = " + expr(*c.operands[i]) + "; ";
      if (i == 0) continue;
      std::string t = cxxScalar(c.linkTypes[i - 1]);
      std::string test = t + "(" + names[i - 1] + ")" + cmp(c.ops[i - 1]) + t + "(" + names[i] + ")";
      if (i + 1 < c.operands.size())
        s += "if (!(" + test + ")) return false; ";
      else
        s += "return " + test + "; ";
    }
    return s + "}()";
  }

  std::string call(const Call& c) {
    std::vector<const Expr*> operands;
    for (auto& a : c.args) operands.push_back(a.get());
    return sequenced(operands, [&](const std::vector<std::string>& args) {
      if (c.target == CallTarget::Library) return c.library->emitCpp(c, args);
      std::string s = cxxIdentifier(M.find(c.callee)->sourceName()) + "(";
      for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
      return s + ")";
    });
  }

  bool provablyNonNegative(const Expr& e) const { return nonNegative(e, NonNeg); }

  /// A subscript that is not an array element: a view, a list element, a
  /// dict entry, a tuple part.
  std::string subscript(const Index& x) {
    const Type& base = x.base->type;
    if (base.isTuple()) {
      int64_t k = 0;
      constantInt(*x.indices[0], k);  // sema checked it is one
      if (k < 0) k += static_cast<int64_t>(base.elems().size());
      return "std::get<" + std::to_string(k) + ">(" + expr(*x.base) + ")";
    }
    std::vector<const Expr*> operands = {x.base.get()};
    for (auto& i : x.indices) operands.push_back(i.get());
    return sequenced(operands, [&](const std::vector<std::string>& v) {
      if (base.isList()) return "(" + v[0] + ")[" + v[1] + "]";
      if (base.isSparse()) return "(" + v[0] + ").get(" + v[1] + ", " + v[2] + ")";
      if (base.isDict()) return "(" + v[0] + ").at(" + v[1] + ")";
      // A view: integers pick, slices keep an axis.
      std::string s = "pydd::subarray<" + std::to_string(x.type.rank()) + ">(" + v[0];
      for (size_t k = 0; k < x.indices.size(); ++k) {
        auto* sl = dyn_cast<Slice>(x.indices[k].get());
        if (!sl) {
          s += ", int64_t(" + v[k + 1] + ")";
          continue;
        }
        auto part = [&](const ExprPtr& p, const char* dflt) { return p ? expr(*p) : std::string(dflt); };
        s += ", pydd::Slice{" + part(sl->start, "0") + ", " + part(sl->stop, "0") + ", " + part(sl->step, "1") + ", " +
             (sl->start ? "true" : "false") + ", " + (sl->stop ? "true" : "false") + "}";
      }
      return s + ")";
    });
  }

  std::string index(const Index& x) {
    if (!x.type.isScalar() || !x.base->type.isArray()) return subscript(x);
    std::vector<const Expr*> indices;
    for (auto& i : x.indices) indices.push_back(i.get());
    auto* var = dyn_cast<VarRef>(x.base.get());
    if (var && Views.count(var->name)) return elementAccess(Views[var->name], x, indices);
    // Not a named array (the result of a call): evaluate it once, keep it
    // alive while its element is read, and yield the element by value.
    std::string arr = temp("arr"), view = temp("arr_v");
    return "[&]() { const auto " + arr + " = " + expr(*x.base) + "; const auto " + view + " = " + arr +
           ".view(); return " + elementAccess(view, x, indices) + "; }()";
  }

  std::string elementAccess(const std::string& view, const Index& x, const std::vector<const Expr*>& indices) {
    return sequenced(indices, [&](const std::vector<std::string>& idx) {
      std::string s = view + (UnitStride.count(view) ? ".unit(" : "(");
      for (size_t k = 0; k < idx.size(); ++k) {
        std::string i = idx[k];
        std::string extent = view + ".shape[" + std::to_string(k) + "]";
        if (Opts.boundsCheck)
          i = "pydd::checked_index(" + i + ", " + extent + ", " + std::to_string(k) + ")";
        else if (!x.inRange && !provablyNonNegative(*x.indices[k]))
          i = "pydd::wrap_index(" + i + ", " + extent + ")";
        s += (k ? ", " : "") + i;
      }
      return s + ")";
    });
  }

  std::string cast(const Cast& c) {
    const Type& from = c.operand->type;
    std::string v = expr(*c.operand);
    if (c.type.isBool() && from.isComplex()) return "pydd::truthy(" + v + ")";
    if (c.type.isBool()) return "(" + v + " != 0)";
    if (c.type.isComplex() && from.isComplex()) return cxxScalar(c.type) + "(" + v + ")";
    if (c.type.isComplex()) return cxxScalar(c.type) + "(" + cxxScalarType(complexPartKind(c.type.elem())) + "(" + v + "), 0)";
    if (from.isFloat() && c.type.isInteger()) return "pydd::convert<" + cxxScalar(c.type) + ">(" + v + ")";
    return "static_cast<" + cxxScalar(c.type) + ">(" + v + ")";
  }

  // ---- statements ----

  void block(const Block& b, int depth) {
    for (auto& s : b.stmts) stmt(*s, depth);
  }

  /// Stores `value` (C++ text) into an assignment target.
  void store(const Expr& target, const std::string& value, int depth) {
    if (auto* v = dyn_cast<VarRef>(&target)) {
      line(depth, var(v->name) + " = " + value + ";");
      if (Views.count(v->name)) line(depth, Views[v->name] + " = " + var(v->name) + ".view();");
      return;
    }
    auto& x = static_cast<const Index&>(target);
    if (target.type.isArray() || x.base->type.isDict()) {
      // Python evaluates the value before the target's parts.
      std::string t = temp("value");
      line(depth, "{");
      line(depth + 1, "const auto " + t + " = " + value + ";");
      if (target.type.isArray()) {
        line(depth + 1, "pydd::assign(" + expr(target) + ", " + t + ");");
      } else {
        std::vector<const Expr*> operands = {x.base.get(), x.indices[0].get()};
        line(depth + 1, sequenced(operands, [&](const std::vector<std::string>& v) {
               return "(" + v[0] + ").set(" + v[1] + ", " + t + ")";
             }) + ";");
      }
      line(depth, "}");
      return;
    }
    // C++17 sequences the right operand of = before the left.
    line(depth, expr(target) + " = " + value + ";");
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
        if (a.targets.size() == 1) return store(*a.targets[0], expr(*a.value), depth);
        if (a.value->kind != ExprKind::TupleLit) {
          // Unpacking a tuple value: each part converted to its target.
          std::string t = temp("tup");
          line(depth, "{");
          line(depth + 1, "const auto " + t + " = " + expr(*a.value) + ";");
          for (size_t i = 0; i < a.targets.size(); ++i) {
            std::string part = "std::get<" + std::to_string(i) + ">(" + t + ")";
            const Type& to = a.targets[i]->type;
            if (to.isScalar() && a.value->type.elems()[i] != to) part = "static_cast<" + cxxType(to) + ">(" + part + ")";
            store(*a.targets[i], part, depth + 1);
          }
          line(depth, "}");
          return;
        }
        // Tuple assignment: evaluate every value before storing any.
        auto& tup = static_cast<const TupleLit&>(*a.value);
        line(depth, "{");
        std::vector<std::string> temps;
        for (auto& el : tup.elems) {
          temps.push_back(temp("tup"));
          line(depth + 1, "const " + cxxType(el->type) + " " + temps.back() + " = " + expr(*el) + ";");
        }
        for (size_t i = 0; i < a.targets.size(); ++i) store(*a.targets[i], temps[i], depth + 1);
        line(depth, "}");
        return;
      }
      case StmtKind::ExprStmt: {
        auto& e = *static_cast<const ExprStmt&>(s).expr;
        line(depth, (e.kind == ExprKind::Call ? "" : "(void)") + expr(e) + ";");
        return;
      }
      case StmtKind::If: {
        auto& i = static_cast<const If&>(s);
        line(depth, "if (" + expr(*i.cond) + ") {");
        block(*i.thenBody, depth + 1);
        if (i.elseBody && i.rareElse && outlinable(*i.elseBody)) {
          line(depth, "} else {");
          outline(*i.elseBody, depth + 1);
        } else if (i.elseBody && i.rareElse) {
          // A cold lambda: g++ optimizes it for size and out of line, which
          // keeps the build quick (no vectorized copies of a general loop).
          line(depth, "} else {");
          line(depth + 1, "[&]() __attribute__((cold, noinline)) {");
          auto own = ColdLocals.find(i.elseBody.get());
          if (own != ColdLocals.end()) {
            declareLocals(own->second, depth + 2);
            for (auto& name : own->second) Undeclared.erase(name);
          }
          ++RareDepth;
          block(*i.elseBody, depth + 2);
          --RareDepth;
          if (own != ColdLocals.end()) Undeclared.insert(own->second.begin(), own->second.end());
          line(depth + 1, "}();");
        } else if (i.elseBody) {
          line(depth, "} else {");
          block(*i.elseBody, depth + 1);
        }
        line(depth, "}");
        return;
      }
      case StmtKind::While: return whileLoop(static_cast<const While&>(s), depth);
      case StmtKind::For: return forLoop(static_cast<const For&>(s), depth);
      case StmtKind::Return: {
        auto& r = static_cast<const Return&>(s);
        line(depth, r.value ? "return " + expr(*r.value) + ";" : "return;");
        return;
      }
      case StmtKind::Break: line(depth, "break;"); return;
      case StmtKind::Continue: line(depth, "continue;"); return;
      case StmtKind::Pass: return;
      case StmtKind::Task: {
        auto& t = static_cast<const Task&>(s);
        if (Opts.parallel) return task(t, depth);
        // Running a task at its spawn point is a valid schedule for
        // async/finish and trivially isolated.
        const char* kind = t.taskKind == TaskKind::Async ? "async" : t.taskKind == TaskKind::Finish ? "finish" : "isolated";
        line(depth, std::string("{  // ") + kind + " (run in place)");
        block(*t.body, depth + 1);
        line(depth, "}");
        return;
      }
    }
  }

  void whileLoop(const While& w, int depth) {
    const bool scan = !w.scanIndex.empty();
    auto emit = [&](int d) {
      line(d, "while (" + expr(*w.cond) + ") {");
      // A scan (While::scanIndex) ends like a counted loop and is not
      // checked either. Elsewhere only where its exceptions are caught in
      // a parallel nest.
      if (!scan && Opts.interruptChecks && (!InIndependentLoop || InGuardedNest))
        line(d + 1, "pydd::check_interrupt();");
      block(*w.body, d + 1);
      line(d, "}");
    };
    // An ascending scan's index that is non-negative at entry stays so:
    // that copy reads elements at it (its condition does) without wrapping.
    if (scan && w.scanStep > 0 && !Opts.boundsCheck && !NonNeg.count(w.scanIndex)) {
      line(depth, "if (" + var(w.scanIndex) + " >= 0) {");
      NonNeg.insert(w.scanIndex);
      emit(depth + 1);
      NonNeg.erase(w.scanIndex);
      line(depth, "} else {");
      emit(depth + 1);
      line(depth, "}");
      return;
    }
    emit(depth);
  }

  /// OpenMP tasks: `async` is a task that copies what it captures, `finish`
  /// a taskgroup, `isolated` a process-wide recursive lock. Exceptions are
  /// caught inside each region (none may leave one) and rethrown at the end
  /// of the finish that waits for the task.
  void task(const Task& t, int depth) {
    switch (t.taskKind) {
      case TaskKind::Async: {
        std::string errs = Finish.back();
        std::string clause = "firstprivate(" + errs;
        auto it = Opts.parallel->captures.find(&t);
        if (it != Opts.parallel->captures.end())
          for (auto& v : it->second) {
            clause += ", " + var(v);
            if (Views.count(v)) clause += ", " + Views[v];
          }
        line(depth, "#pragma omp task default(shared) " + clause + ")");
        line(depth, "{");
        line(depth + 1, "try {");
        block(*t.body, depth + 2);
        line(depth + 1, "} catch (...) {");
        line(depth + 2, errs + "->capture();");
        line(depth + 1, "}");
        line(depth, "}");
        return;
      }
      case TaskKind::Finish: {
        std::string errs = temp("finish"), ptr = temp("finish_p");
        line(depth, "{  // finish");
        line(depth + 1, "pydd::FirstError " + errs + ";");
        line(depth + 1, "[[maybe_unused]] pydd::FirstError* " + ptr + " = &" + errs + ";");
        line(depth + 1, "#pragma omp taskgroup");
        line(depth + 1, "{");
        line(depth + 2, "try {");
        Finish.push_back(ptr);
        block(*t.body, depth + 3);
        Finish.pop_back();
        line(depth + 2, "} catch (...) {");
        line(depth + 3, errs + ".capture();");
        line(depth + 2, "}");
        line(depth + 1, "}");
        line(depth + 1, errs + ".rethrow();");
        line(depth, "}");
        return;
      }
      case TaskKind::Isolated:
        // Not `omp critical`: a critical section cannot hold another of the
        // same name (an isolated block in a function called from one would
        // deadlock) and no exception may leave it; the lock is recursive and
        // released as the exception unwinds.
        line(depth, "{  // isolated");
        line(depth + 1, "const std::lock_guard<std::recursive_mutex> " + temp("isolated") + "(pydd::isolated_lock());");
        block(*t.body, depth + 1);
        line(depth, "}");
        return;
    }
  }

  /// Whether running `b` may throw: a raising expression, an interrupt
  /// check, an isolated block that rethrows.
  bool mayThrow(const Block& b) {
    bool found = false;
    std::function<void(const Stmt&)> scan = [&](const Stmt& s) {
      if (auto* bl = dyn_cast<Block>(&s)) {
        for (auto& c : bl->stmts) scan(*c);
        return;
      }
      if (s.kind == StmtKind::While || s.kind == StmtKind::For || s.kind == StmtKind::Task) found = true;
      forEachPart(s, [&](const Expr& e) { found = found || mayRaise(e, Opts.boundsCheck); },
                  [&](const Block& inner) { scan(inner); });
    };
    scan(b);
    return found;
  }

  /// A pfor the plan makes parallel: an OpenMP loop over an iteration
  /// counter (two, collapsed, for a perfect nest), with the clauses the plan
  /// gives, each iteration's exception caught and the first one rethrown
  /// after the loop.
  void parallelLoop(const For& f, const ParallelLoopPlan& p, int depth) {
    std::vector<const For*> nest = {&f};
    if (p.collapse == 2) nest.push_back(&pydd::cast<For>(*f.body->stmts[0]));
    line(depth, "{");
    std::vector<std::string> counters, starts, steps, counts;
    for (auto* l : nest) {
      std::string start = temp("start"), stop = temp("stop"), n = temp("n");
      line(depth + 1, "const int64_t " + start + " = " + expr(*l->start) + ";");
      line(depth + 1, "const int64_t " + stop + " = " + expr(*l->stop) + ";");
      auto* lit = dyn_cast<IntLit>(l->step.get());
      std::string step = lit ? intLiteral(lit->value) : temp("step");
      if (!lit) {
        line(depth + 1, "const int64_t " + step + " = " + expr(*l->step) + ";");
        line(depth + 1, "pydd::check_range_step(" + step + ");");
      }
      line(depth + 1, "const uint64_t " + n + " = pydd::range_length(" + start + ", " + stop + ", " + step + ");");
      counters.push_back(temp("k"));
      starts.push_back(start);
      steps.push_back(step);
      counts.push_back(n);
    }
    std::string par = temp("par");
    line(depth + 1, "pydd::ParallelLoop " + par + ";");
    // In a function that creates tasks the body already runs in a parallel
    // region (pydd::run_finish), where a `parallel for` would get a team of
    // one: the iterations become tasks of the region's team instead.
    std::string pragma = !Finish.empty() ? std::string("#pragma omp taskloop default(shared)")
                                         : "#pragma omp parallel for num_threads(pydd::get_num_threads()) schedule(" +
                                               std::string(p.coarse ? "dynamic, 1" : "static") + ")";
    if (p.collapse > 1) pragma += " collapse(" + std::to_string(p.collapse) + ")";
    // A cold branch's own locals (not declared yet) are private already.
    std::vector<std::string> privates;
    for (auto& v : p.privates)
      if (!Undeclared.count(v)) privates.push_back(v);
    auto names = [&](const std::vector<std::string>& vars) {
      std::string list;
      for (auto& v : vars) list += (list.empty() ? "" : ", ") + var(v);
      return list;
    };
    // Views of private arrays start as copies (a view has no default
    // value) and are set where their array is assigned.
    std::vector<std::string> views, lastViews;
    for (auto& v : privates)
      if (Views.count(v)) views.push_back(Views[v]);
    for (auto& v : p.lastprivates)
      if (Views.count(v)) views.push_back(Views[v]), lastViews.push_back(Views[v]);
    if (!privates.empty()) pragma += " private(" + names(privates) + ")";
    if (!p.lastprivates.empty()) pragma += " lastprivate(" + names(p.lastprivates) + ")";
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
      return s;
    };
    if (!views.empty()) pragma += " firstprivate(" + list(views) + ")";
    if (!lastViews.empty()) pragma += " lastprivate(" + list(lastViews) + ")";
    for (auto& r : p.reductions) pragma += " reduction(" + r.op + ": " + var(r.var) + ")";
    // No region for an empty range: lastprivate would copy out a value no
    // iteration assigned (Python leaves the variables as they were).
    std::string nonEmpty;
    for (auto& n : counts) nonEmpty += (nonEmpty.empty() ? "" : " && ") + n + " > 0";
    line(depth + 1, "if (" + nonEmpty + ") {");
    line(depth + 1, pragma);
    int d = depth + 1;
    for (size_t k = 0; k < nest.size(); ++k)
      line(d++, "for (uint64_t " + counters[k] + " = 0; " + counters[k] + " < " + counts[k] + "; ++" + counters[k] + ") {");
    const Block& body = *nest.back()->body;
    bool guard = mayThrow(body);
    // The iteration's place in the sequential order, for the lowest
    // failing iteration's error (what a sequential run raises).
    std::string iteration = nest.size() == 1 ? counters[0] : counters[0] + " * " + counts[1] + " + " + counters[1];
    if (guard) {
      // Iterations after a failed one are skipped.
      line(d, "if (" + par + ".error.skip(" + iteration + ")) continue;");
      line(d++, "try {");
    }
    for (size_t k = 0; k < nest.size(); ++k) {
      const Type* varType = F.lookup(nest[k]->var);
      std::string i = "int64_t(uint64_t(" + starts[k] + ") + " + counters[k] + " * uint64_t(" + steps[k] + "))";
      line(d, var(nest[k]->var) + " = " + (varType && *varType != Type::int64() ? cxxType(*varType) + "(" + i + ")" : i) + ";");
    }
    if (Opts.interruptChecks && containsLoop(body)) line(d, "pydd::check_interrupt();");
    const bool wasInRegion = InParallelRegion;
    InParallelRegion = true;
    block(body, d);
    InParallelRegion = wasInRegion;
    if (guard) {
      line(d - 1, "} catch (...) {");
      line(d, par + ".error.capture(" + iteration + ");");
      line(--d, "}");
    }
    for (size_t k = 0; k < nest.size(); ++k) line(--d, "}");
    line(depth + 1, "}");
    line(depth + 1, par + ".error.rethrow();");
    line(depth, "}");
  }

  /// Whether the rare branch `b` can be emitted as a function of its own:
  /// at the top level of the function body's code (not inside a lambda
  /// or a region whose C++ locals it could refer to), and referring only
  /// to the function's parameters and locals, which it takes by reference.
  bool outlinable(const Block& b) {
    if (RareDepth > 0 || InParallelRegion || InIndependentLoop || !Finish.empty() || SerialFold ||
        !RangeOverride.first.empty() || !HoistedRows.matrix.empty())
      return false;
    auto refs = ColdReferences.find(&b);
    if (refs == ColdReferences.end()) return false;
    for (auto& name : refs->second)
      if (!F.lookup(name)) return false;
    return true;
  }

  /// Emits the rare branch `b` as a call of a new function, which
  /// outlined() returns: what the branch refers to but does not declare
  /// (the function's variables and the views of its arrays) it takes by
  /// reference. Code generation can then build it in another translation
  /// unit than the function, beside it: the general paths of sinkhorn-WMD's
  /// fused loops were a fifth of its one function's build.
  void outline(const Block& b, int depth) {
    auto own = ColdLocals.find(&b);
    std::set<std::string> declared;
    if (own != ColdLocals.end()) declared.insert(own->second.begin(), own->second.end());
    if (!Rebound) Rebound = assignedVars(*F.body);
    std::set<std::string> params;
    for (auto& p : F.params) params.insert(p.name);
    std::vector<std::string> formals, args;
    for (auto& name : ColdReferences[&b]) {
      if (declared.count(name)) continue;
      const Type& t = *F.lookup(name);
      // An array parameter the function never rebinds is a const&.
      const bool constant = t.isArray() && params.count(name) && !Rebound->count(name);
      formals.push_back("[[maybe_unused]] " + std::string(constant ? "const " : "") + cxxType(t) + "& " + var(name));
      args.push_back(var(name));
      if (t.isArray() && Views.count(name)) {
        formals.push_back("[[maybe_unused]] pydd::View<" + cxxScalar(t) + ", " + std::to_string(t.rank()) + ">& " +
                          Views[name]);
        args.push_back(Views[name]);
      }
    }
    std::string name = cxxIdentifier(F.name) + "__pydd_cold" + std::to_string(Outlined.size()), list;
    for (size_t k = 0; k < formals.size(); ++k) list += (k ? ", " : "") + formals[k];
    std::string call;
    for (size_t k = 0; k < args.size(); ++k) call += (k ? ", " : "") + args[k];
    line(depth, name + "(" + call + ");");

    // The body, at the top level of a function of its own.
    std::string saved = std::exchange(Out, std::string());
    OutlinedBranch o;
    o.declaration = "__attribute__((cold, noinline)) void " + name + "(" + list + ")";
    line(0, o.declaration + " {");
    if (own != ColdLocals.end()) {
      declareLocals(own->second, 1);
      for (auto& n : own->second) Undeclared.erase(n);
    }
    ++RareDepth;
    block(b, 1);
    --RareDepth;
    if (own != ColdLocals.end()) Undeclared.insert(own->second.begin(), own->second.end());
    line(0, "}");
    o.definition = std::exchange(Out, std::move(saved));
    Outlined.push_back(std::move(o));
  }

  /// A fused element-wise loop nest (For::independent) split among threads
  /// (pydd::parallel_range) when it has enough elements to gain from them;
  /// the same code runs whole otherwise (an OpenMP region costs microseconds
  /// even for one thread: bigclam's small fused loops ran 13x slower with an
  /// `if` clause). It writes disjoint elements, so the result is the
  /// sequential loop's, bit for bit. Not in a parallel region already (a
  /// pfor body, a function with tasks), and without Ctrl-C checks inside
  /// (they would throw out of the region). Arrays the body assigns are each
  /// thread's own; their allocation's MemoryError is caught in the region
  /// and raised after it.
  bool independentLoop(const For& f, int depth) {
    auto* step = dyn_cast<IntLit>(f.step.get());
    // Fusion makes the nest raise nothing (element-wise functors follow
    // NumPy: no ZeroDivisionError); only checked indices could.
    if (!Opts.parallelFused || !f.isRange || !step || step->value != 1 || InParallelRegion || !Finish.empty() ||
        Opts.boundsCheck || RareDepth > 0)
      return false;
    // Nests of two or more loops only: the nest is called out of line (see
    // below), which costs a 1-D loop over a few elements (bigclam's rows)
    // 11%, and a 1-D loop is memory-bound where threads gain least.
    if (!containsLoop(*f.body)) return false;
    // The nest's loop variables are its only assignments (private); its
    // element count is the product of the perfectly nested trip counts.
    std::vector<std::string> loopVars = {f.var}, arrays;
    std::set<std::string> assigned = assignedVars(*f.body);
    std::string work;
    for (const For* l = &f;;) {
      work += (work.empty() ? "" : " * ") + tripCount(*l);
      auto* inner = l->body->stmts.size() == 1 ? dyn_cast<For>(l->body->stmts[0].get()) : nullptr;
      if (!inner || !inner->isRange) break;
      l = inner;
    }
    if (f.elementsPerIteration) work += " * uint64_t(" + std::to_string(f.elementsPerIteration) + ")";
    for (auto& v : assigned) {
      const Type* t = F.lookup(v);
      if (!t || !(t->isScalar() || t->isArray())) return false;
      (t->isScalar() ? loopVars : arrays).push_back(v);
    }
    // The nest is a lambda over a part [lo, hi) of the outer range, with its
    // own loop variables (each thread's), run whole or split among threads.
    std::string start = temp("start"), stop = temp("stop"), nest = temp("nest"), lo = temp("lo"), hi = temp("hi"),
                error = temp("error");
    // Arrays the body allocates: its exceptions are caught in the region.
    const bool guarded = !arrays.empty();
    line(depth, "{");
    line(depth + 1, "const int64_t " + start + " = " + expr(*f.start) + ";");
    line(depth + 1, "const int64_t " + stop + " = " + expr(*f.stop) + ";");
    if (guarded) line(depth + 1, "pydd::FirstError " + error + ";");
    // Out of line: called in two places, it would otherwise be inlined (and
    // optimized) twice, which made array-heavy kernels build 1.2x slower
    // (bench/compile_time.py).
    line(depth + 1, "const auto " + nest + " = [&](int64_t " + lo + ", int64_t " + hi + ") __attribute__((noinline)) {");
    for (auto& v : loopVars) line(depth + 2, cxxType(*F.lookup(v)) + " " + var(v) + "{};");
    // Each array (and its view, shadowing the function's) is the thread's own.
    for (auto& v : arrays) {
      line(depth + 2, cxxType(*F.lookup(v)) + " " + var(v) + "{};");
      if (Views.count(v)) line(depth + 2, "[[maybe_unused]] auto " + Views[v] + " = " + var(v) + ".view();");
    }
    int d = depth + 2;
    if (guarded) {
      line(d, "if (" + error + ".failed()) return;");
      line(d++, "try {");
    }
    d = localCopies(f, d);
    InParallelRegion = InIndependentLoop = true;
    InGuardedNest = guarded;
    RangeOverride = {lo, hi};
    forLoop(f, d);
    InParallelRegion = InIndependentLoop = InGuardedNest = false;
    while (d > depth + 2 + (guarded ? 1 : 0)) line(--d, "}");
    if (guarded) line(d - 1, "} catch (...) { " + error + ".capture(); }");
    line(depth + 1, "};");
    line(depth + 1, "if (" + start + " < " + stop + " && " + work + " >= pydd::kParallelElements) pydd::parallel_range(" +
                        start + ", " + stop + ", " + nest + ");");
    line(depth + 1, "else " + nest + "(" + start + ", " + stop + ");");
    if (guarded) line(depth + 1, error + ".rethrow();");
    line(depth, "}");
    return true;
  }

  /// Opens a block in which each scalar the nest reads but does not
  /// assign, and the view of each array it reads or stores, is a local copy
  /// under the same name; returns the depth inside it. The lambda captures
  /// them by reference, and a store through a double* (or int64_t*) may
  /// change a captured double (or int64_t) as far as the C++ compiler can
  /// tell: it would reload each one per element and give up vectorizing a
  /// body with several stores (merged loops). Locals whose address is never
  /// taken cannot alias.
  int localCopies(const For& nest, int depth) {
    const std::set<std::string> assigned = assignedVars(nest);
    std::set<std::string> read;
    std::function<void(const Expr&)> reads = [&](const Expr& e) {
      if (auto* v = dyn_cast<VarRef>(&e)) read.insert(v->name);
      forEachChild(e, reads);
    };
    std::function<void(const Stmt&)> walk = [&](const Stmt& st) {
      forEachPart(st, reads, [&](const Block& b) {
        for (auto& inner : b.stmts) walk(*inner);
      });
    };
    walk(nest);
    std::vector<std::pair<std::string, std::string>> copies;  // (declaration type, name)
    for (auto& v : read) {
      const Type* t = F.lookup(v);
      if (!t || assigned.count(v)) continue;
      if (t->isScalar() && !t->isComplex()) copies.push_back({"const " + cxxType(*t), var(v)});
      else if (t->isArray() && Views.count(v)) copies.push_back({"const auto", Views[v]});
    }
    if (copies.empty()) return depth;
    std::vector<std::string> outer;
    for (auto& [type, name] : copies) {
      outer.push_back(temp("cap"));
      line(depth, "const auto& " + outer.back() + " = " + name + ";");
    }
    line(depth, "{");
    for (size_t k = 0; k < copies.size(); ++k)
      line(depth + 1, "[[maybe_unused]] " + copies[k].first + " " + copies[k].second + " = " + outer[k] + ";");
    return depth + 1;
  }

  /// A fold's nest (For::foldsInto, set by fusion: any, all, an integer sum
  /// of an element-wise tree), when large, on all threads: a lambda folds a
  /// part of the outer range into its own accumulator (pydd::parallel_fold)
  /// and the parts are combined, exact in any order; else the loop itself.
  /// Emitted only when the nest still has the fold's shape (a pass after
  /// fusion could have changed it): perfectly nested range loops around
  /// `acc = combine(acc, x)`, x not reading acc.
  bool foldLoop(const For& f, int depth) {
    if (f.foldsInto.empty() || &f == SerialFold || !Opts.parallelFused || InParallelRegion || !Finish.empty() ||
        Opts.boundsCheck || RareDepth > 0)
      return false;
    const Type* accType = F.lookup(f.foldsInto);
    if (!accType || !accType->isInteger()) return false;
    std::vector<std::string> loopVars;
    std::string work;
    const For* l = &f;
    for (;;) {
      auto* step = dyn_cast<IntLit>(l->step.get());
      if (!l->isRange || !step || step->value != 1 || l->body->stmts.size() != 1) return false;
      loopVars.push_back(l->var);
      work += (work.empty() ? "" : " * ") + tripCount(*l);
      auto* inner = dyn_cast<For>(l->body->stmts[0].get());
      if (!inner) break;
      l = inner;
    }
    auto* update = dyn_cast<Assign>(l->body->stmts[0].get());
    auto* target = update && update->targets.size() == 1 ? dyn_cast<VarRef>(update->targets[0].get()) : nullptr;
    auto* combine = update ? dyn_cast<Call>(update->value.get()) : nullptr;
    if (!target || target->name != f.foldsInto || !combine || !combine->library || !combine->library->element ||
        combine->args.size() != 2 || combine->type != *accType)
      return false;
    const std::string functor = combine->library->element->functor;
    auto* first = dyn_cast<VarRef>(combine->args[0].get());
    std::set<std::string> reads;
    collectReads(*combine->args[1], reads);
    if ((functor != "pydd::op::bitwise_or" && functor != "pydd::op::bitwise_and" && functor != "pydd::op::add") || !first ||
        first->name != f.foldsInto || reads.count(f.foldsInto) || hasSideEffects(*combine->args[1]))
      return false;

    const std::string acc = var(f.foldsInto), type = cxxType(*accType);
    const std::string start = temp("start"), stop = temp("stop"), nest = temp("nest"), lo = temp("lo"), hi = temp("hi");
    const std::string identity = type + "(" + intLiteral(f.foldIdentity) + ")";
    const std::string op = functor + "{}";
    line(depth, "{");
    line(depth + 1, "const int64_t " + start + " = " + expr(*f.start) + ";");
    line(depth + 1, "const int64_t " + stop + " = " + expr(*f.stop) + ";");
    line(depth + 1, "if (__builtin_expect(" + start + " < " + stop + " && " + work + " >= pydd::kParallelElements, 0)) {");
    // Made only here, and capturing by value (the body only reads what it
    // captures): captured by reference, the loop's variables would escape,
    // which made a fold over each row of four elements 15% slower.
    line(depth + 2, "const auto " + nest + " = [=](int64_t " + lo + ", int64_t " + hi + ") __attribute__((noinline)) {");
    for (auto& v : loopVars) line(depth + 3, cxxType(*F.lookup(v)) + " " + var(v) + "{};");
    line(depth + 3, type + " " + acc + " = " + identity + ";");
    InParallelRegion = InIndependentLoop = true;
    RangeOverride = {lo, hi};
    forLoop(f, depth + 3);
    InParallelRegion = InIndependentLoop = false;
    line(depth + 3, "return " + acc + ";");
    line(depth + 2, "};");
    line(depth + 2, acc + " = " + op + "(" + acc + ", pydd::parallel_fold(" + start + ", " + stop + ", " + identity + ", " +
                        nest + ", [](" + type + " a, " + type + " b) { return " + op + "(a, b); }));");
    line(depth + 1, "} else {");
    SerialFold = &f;
    forLoop(f, depth + 2);
    SerialFold = nullptr;
    line(depth + 1, "}");
    line(depth, "}");
    return true;
  }

  /// A step-1 range loop's trip count as C++ (for weighing a nest's work).
  std::string tripCount(const For& l) { return "uint64_t(" + expr(*l.stop) + " - " + expr(*l.start) + ")"; }

  /// Emits a loop twice, by `copy(depth)`: once with the views in
  /// `contiguous` read through their contiguous last axis (`.unit`, which
  /// g++ vectorizes) under a run-time test of those not known to be
  /// contiguous, once strided for when the test fails; only the first when
  /// every view is known contiguous (UnitStrideArrays).
  void unitStrideCopies(const std::set<std::string>& contiguous, int depth, const std::function<void(int)>& copy) {
    std::set<std::string> known, tested;
    for (auto& view : contiguous) (UnitStrideArrays.count(ArrayOfView.at(view)) ? known : tested).insert(view);
    std::set<std::string> outer = std::exchange(UnitStride, contiguous);
    if (tested.empty()) {
      copy(depth);
    } else {
      line(depth, "if (" + unitStrideTest(tested) + ") {");
      copy(depth + 1);
      line(depth, "} else {");
      UnitStride = known;
      copy(depth + 1);
      line(depth, "}");
    }
    UnitStride = std::move(outer);
  }

  /// The run-time test that every view in `views` has a contiguous last axis.
  static std::string unitStrideTest(const std::set<std::string>& views) {
    std::string test;
    for (auto& v : views) test += (test.empty() ? "" : " && ") + v + ".strides[std::size(" + v + ".strides) - 1] == 1";
    return test;
  }

  /// A loop Opts.device runs elsewhere: the statements it gives instead.
  bool deviceLoop(const For& f, int depth) {
    std::vector<std::string> lines;
    HostPrinter host{[&](const Expr& e) { return expr(e); }, [&](const std::string& n) { return var(n); },
                     [&](const std::string& hint) { return temp(hint); }};
    if (!Opts.device->hostLoop(F, f, host, lines)) return false;
    for (auto& l : lines) line(depth, l);
    return true;
  }

  void forLoop(const For& f, int depth) {
    if (Opts.device && deviceLoop(f, depth)) return;
    // The loop itself, inside its flag's scope (a marked loop runs no loop).
    if (f.defersDivisionChecks && ZeroDivisorFlag.empty()) return deferredDivisionLoop(f, depth);
    if (f.independent && independentLoop(f, depth)) return;
    if (!f.foldsInto.empty() && foldLoop(f, depth)) return;
    const ParallelLoopPlan* plan = nullptr;
    if (f.parallel && Opts.parallel)
      if (auto it = Opts.parallel->loops.find(&f); it != Opts.parallel->loops.end()) plan = &it->second;
    if (plan && plan->parallel) return parallelLoop(f, *plan, depth);
    if (std::string m = hoistableRowMatrix(f); !m.empty()) {
      line(depth, "if (" + var(m) + ".narrow()) {");
      for (const char* width : {"int32_t", "int64_t"}) {
        HoistedRows = {m, temp("rows"), rowIndexInRange(f, m) ? f.var : "", &f};
        line(depth + 1, "const auto " + HoistedRows.view + " = " + var(m) + ".csr<" + width + ">(false);");
        forLoop(f, depth + 1);
        line(depth, width == std::string("int32_t") ? "} else {" : "}");
      }
      HoistedRows = {};
      return;
    }
    if (f.rowsInPairs && HoistedRows.loop == &f && HoistedRows.rowInRange == f.var && PairedFallback != &f)
      return pairedRowLoop(f, depth);
    if (HoistedRows.loop == &f && HoistedRows.gathersAhead == GathersAhead::Undecided) {
      // Row loops that gather (For::gathersFrom) prefetch or not for the
      // whole loop over rows: a test before each row's entries, though it
      // never changed its way, made a loop of rows of 10 over a vector in
      // cache 1.04-1.24x slower. Expected not taken, as in sparseLoop.
      if (std::string test = gathersAheadTest(f); !test.empty()) {
        line(depth, "if (__builtin_expect(" + test + ", 0)) {");
        HoistedRows.gathersAhead = GathersAhead::Yes;
        forLoop(f, depth + 1);
        line(depth, "} else {");
        HoistedRows.gathersAhead = GathersAhead::No;
        forLoop(f, depth + 1);
        line(depth, "}");
        HoistedRows.gathersAhead = GathersAhead::Undecided;
        return;
      }
    }
    const Type* varType = F.lookup(f.var);
    std::string loopVar = var(f.var);
    line(depth, "{");
    auto* sparse = dyn_cast<Call>(f.iterable.get());
    if (sparse && sparse->library && sparse->library->yieldsEntries)
      return sparseLoop(f, *sparse, loopVar, depth);
    // Ctrl-C is seen at the back edges of outer loops (see pydd::Interrupt).
    const bool inPeriodicCheck = InPeriodicCheck;  // this loop's own check is periodic or not
    const InterruptCheck check = interruptCheck(*f.body, depth + 1, &f);
    PeriodicCheck guard(*this, check);
    int strip = 0;  // 1 inside the loop over strips of rows (WorkBudget)
    if (f.isRange) {
      std::string start = temp("start"), stop = temp("stop"), i = temp("i");
      // An independent nest's part (see independentLoop), once.
      auto [first, last] = std::exchange(RangeOverride, {});
      line(depth + 1, "const int64_t " + start + " = " + (first.empty() ? expr(*f.start) : first) + ";");
      line(depth + 1, "const int64_t " + stop + " = " + (last.empty() ? expr(*f.stop) : last) + ";");
      auto* lit = dyn_cast<IntLit>(f.step.get());
      if (f.parallel)
        line(depth + 1, "// pfor, run sequentially: " + (plan ? plan->reason : std::string("no parallel plan")));
      // The loop runs on its own counter: assigning the loop variable in
      // the body does not change the iteration, as in Python.
      std::vector<std::string> header;  // the loop's opening lines
      if (lit && (lit->value == 1 || lit->value == -1)) {
        if (inPeriodicCheck && !containsLoop(*f.body))
          line(depth + 1, longLoopCheck((lit->value > 0 ? stop + " - " + start : start + " - " + stop) +
                                        " >= pydd::kInterruptLongLoop"));
        // A unit step stops at `stop` itself, so the counter cannot overflow.
        header.push_back("for (int64_t " + i + " = " + start + "; " + i + (lit->value > 0 ? " < " : " > ") + stop +
                         "; " + i + (lit->value > 0 ? "++" : "--") + ") {");
      } else {
        // Any other step counts iterations, as CPython's range does: `i +=
        // step` could step past INT64_MAX and wrap around before `stop`.
        std::string step = lit ? intLiteral(lit->value) : temp("step"), n = temp("n"), k = temp("k");
        if (!lit) {
          line(depth + 1, "const int64_t " + step + " = " + expr(*f.step) + ";");
          line(depth + 1, "pydd::check_range_step(" + step + ");");
        }
        line(depth + 1, "const uint64_t " + n + " = pydd::range_length(" + start + ", " + stop + ", " + step + ");");
        if (inPeriodicCheck && !containsLoop(*f.body))
          line(depth + 1, longLoopCheck(n + " >= uint64_t(pydd::kInterruptLongLoop)"));
        header.push_back("for (uint64_t " + k + " = 0; " + k + " < " + n + "; ++" + k + ") {");
        header.push_back("  const int64_t " + i + " = int64_t(uint64_t(" + start + ") + " + k + " * uint64_t(" + step + "));");
      }
      header.push_back("  " + loopVar + " = " + (varType && *varType != Type::int64() ? cxxType(*varType) + "(" + i + ")" : i) + ";");
      std::set<std::string> contiguous = lit && lit->value == 1 ? unitStrideCandidates(f) : std::set<std::string>();
      if (!contiguous.empty()) {
        // Two copies of a short innermost loop (unitStrideCopies).
        const Assign* store = costlySelectStore(f);
        unitStrideCopies(contiguous, depth + 1, [&](int d) {
          if (store) selectsFirstLoop(*store, start, stop, i, header.back(), d);
          else loopCopy(header, *f.body, d);
        });
        line(depth, "}");
        return;
      }
      if (const If* test = testedFirst(f); test && lit && lit->value == 1) {
        testsFirstLoop(*test, f.var, start, stop, i, header.back(), check.line, depth + 1);
        line(depth, "}");
        return;
      }
      if (const Assign* store = costlySelectStore(f); store && lit && lit->value == 1 && check.line.empty()) {
        selectsFirstLoop(*store, start, stop, i, header.back(), depth + 1);
        line(depth, "}");
        return;
      }
      if (check.budget.strips) {
        // rowIndexInRange: the range is [0, rows) with step 1.
        std::string at = temp("at"), end = temp("strip_end");
        line(depth + 1, "for (int64_t " + at + " = " + start + ", " + end + "; " + at + " < " + stop + "; " + at + " = " +
                            end + ") {");
        line(depth + 2, end + " = pydd::interrupt_strip_end(" + HoistedRows.view + ".p, " + at + ", " + stop + ");");
        line(depth + 2, "pydd::check_interrupt();");
        header[0] = "for (int64_t " + i + " = " + at + "; " + i + " < " + end + "; " + i + "++) {";
        strip = 1;
      }
      for (auto& h : header) line(depth + 1 + strip, h);
    } else if (f.iterable->type.isArray()) {
      std::string arr = temp("seq"), view = temp("seq_v"), i = temp("i");
      const Type& t = f.iterable->type;
      line(depth + 1, "const " + cxxType(t) + " " + arr + " = " + expr(*f.iterable) + ";");
      line(depth + 1, "const auto " + view + " = " + arr + ".view();");
      line(depth + 1, "for (int64_t " + i + " = 0; " + i + " < " + view + ".shape[0]; ++" + i + ") {");
      // A 1-D array yields elements, a higher-rank one row views.
      if (t.rank() == 1)
        line(depth + 2, loopVar + " = " + view + "(" + i + ");");
      else
        line(depth + 2, loopVar + " = pydd::subarray<" + std::to_string(t.rank() - 1) + ">(" + arr + ", " + i + ");");
      if (Views.count(f.var)) line(depth + 2, Views[f.var] + " = " + loopVar + ".view();");
    } else {
      // Lists are iterated by position while the position is in range, as
      // Python's list iterator does (appending in the body extends the
      // loop); a dict is iterated over a snapshot of its keys.
      std::string seq = temp("seq"), i = temp("i");
      const Type& t = f.iterable->type;
      std::string value = t.isDict() ? "pydd::dict_keys(" + expr(*f.iterable) + ")" : expr(*f.iterable);
      line(depth + 1, "const auto " + seq + " = " + value + ";");
      line(depth + 1, "for (int64_t " + i + " = 0; " + i + " < " + seq + ".size(); ++" + i + ") {");
      line(depth + 2, loopVar + " = " + seq + "[" + i + "];");
      if (Views.count(f.var)) line(depth + 2, Views[f.var] + " = " + loopVar + ".view();");
    }
    if (!check.line.empty()) line(depth + 2 + strip, check.line);
    block(*f.body, depth + 2 + strip);
    line(depth + 1 + strip, "}");
    if (strip) line(depth + 1, "}");
    line(depth, "}");
  }

  /// A loop marked For::rowsInPairs (opt/PairedRows.h), inside its
  /// matrix's width test: its three parts as lambdas that bind the loop's
  /// variables by their own names, for pydd::detail::sp_rows_in_pairs, and
  /// the loop as written when that declines.
  void pairedRowLoop(const For& f, int depth) {
    const auto& init = pydd::cast<Assign>(*f.body->stmts[0]);
    const auto& rows = pydd::cast<For>(*f.body->stmts[1]);
    const auto& unpack = pydd::cast<Assign>(*rows.body->stmts[0]);
    const auto& step = pydd::cast<Assign>(*rows.body->stmts[1]);
    const std::string acc = var(pydd::cast<VarRef>(*init.targets[0]).name), accType = cxxType(init.targets[0]->type);
    const std::string row = temp("row"), rowVar = "[[maybe_unused]] const " + cxxType(*F.lookup(f.var)) + " " +
                                                  var(f.var) + " = " + row + ";";
    auto param = [&](const Expr& target) { return "[[maybe_unused]] const " + cxxType(target.type) + " " + var(pydd::cast<VarRef>(target).name); };
    const auto& store = pydd::cast<Assign>(*f.body->stmts[2]);
    // Run again as written after an error unless that would find some rows
    // stored (start or finish reads out).
    const auto& out = pydd::cast<VarRef>(*pydd::cast<Index>(*store.targets[0]).base).name;
    const bool rerun = !mentions(*init.value, {out}) && !mentions(*store.value, {out});
    line(depth, "if (!pydd::detail::sp_rows_in_pairs<" + accType + ">(" + HoistedRows.view + ", 0, " + expr(*f.stop) + ", " +
                    (rerun ? "true" : "false") + ",");
    line(depth + 2, "[&](const int64_t " + row + ") -> " + accType + " { " + rowVar + " return " + expr(*init.value) + "; },");
    line(depth + 2, "[&](const int64_t " + row + ", " + param(*init.targets[0]) + ", " + param(*unpack.targets[0]) + ", " +
                        param(*unpack.targets[1]) + ") -> " + accType + " { " + rowVar + " return " + expr(*step.value) + "; },");
    line(depth + 2, "[&](const int64_t " + row + ", [[maybe_unused]] const " + accType + " " + acc + ") {");
    line(depth + 3, rowVar);
    stmt(store, depth + 3);
    line(depth + 2, "})) {");
    PairedFallback = &f;
    forLoop(f, depth + 1);
    PairedFallback = nullptr;
    line(depth, "}");
  }

  /// A loop marked For::defersDivisionChecks: its float divisions record a
  /// zero divisor in a flag, which is tested once the loop ends.
  void deferredDivisionLoop(const For& f, int depth) {
    const std::string flag = temp("zero_divisor");
    line(depth, "{");
    line(depth + 1, "int64_t " + flag + " = 0;");
    ZeroDivisorFlag = flag;
    forLoop(f, depth + 1);
    ZeroDivisorFlag.clear();
    line(depth + 1, "if (__builtin_expect(" + flag + " != 0, 0)) pydd::throw_zero_division();");
    line(depth, "}");
  }

  /// The `if` that is the whole body of a loop marked For::testsFirst, when
  /// the body still has that form and no break ends the loop from it.
  static const If* testedFirst(const For& f) {
    if (!f.testsFirst || f.parallel || f.body->stmts.size() != 1) return nullptr;
    auto* test = dyn_cast<If>(f.body->stmts[0].get());
    return test && !test->elseBody && !containsBreak(*test->thenBody) ? test : nullptr;
  }

  /// A select whose false side calls a function and whose test calls none
  /// (a guard of `zeromul`).
  static bool isCostlySelect(const Expr& e) {
    auto* s = dyn_cast<Select>(&e);
    return s && callsFunction(*s->falseValue) && !callsFunction(*s->cond);
  }
  static bool hasCostlySelect(const Expr& e) {
    bool found = isCostlySelect(e);
    forEachChild(e, [&](const Expr& c) { found = found || hasCostlySelect(c); });
    return found;
  }
  /// The slot of the outermost costly select in the tree `e` holds, or null.
  static ExprPtr* costlySelectSlot(ExprPtr& e) {
    if (isCostlySelect(*e)) return &e;
    ExprPtr* found = nullptr;
    forEachChild(*e, [&](ExprPtr& c) {
      if (!found) found = costlySelectSlot(c);
    });
    return found;
  }
  static bool callsFunction(const Expr& e) {
    bool found = e.kind == ExprKind::Call;
    forEachChild(e, [&](const Expr& c) { found = found || callsFunction(c); });
    return found;
  }

  /// The store that is the whole body of a loop marked For::storesFresh,
  /// when its value holds a select with a costly side, or null.
  static const Assign* costlySelectStore(const For& f) {
    if (!f.storesFresh || f.body->stmts.size() != 1) return nullptr;
    auto* a = dyn_cast<Assign>(f.body->stmts[0].get());
    if (!a || a->targets.size() != 1 || a->targets[0]->kind != ExprKind::Index) return nullptr;
    return hasCostlySelect(*a->value) ? a : nullptr;
  }

  /// Makes the `and`s of a test that cannot raise and has no effects bitwise
  /// (`bool(a & b)`), so that the test has no branch: a guard's three
  /// comparisons short-circuited took a branch that went either way.
  static void evaluateBothSides(ExprPtr& e) {
    forEachChild(*e, [](ExprPtr& c) { evaluateBothSides(c); });
    auto* l = dyn_cast<Logical>(e.get());
    if (!l || !l->isAnd || !l->lhs->type.isBool() || !l->rhs->type.isBool()) return;
    for (const ExprPtr* side : {&l->lhs, &l->rhs})
      if (hasSideEffects(**side) || mayRaise(**side, false)) return;
    e = build::binary(l->loc, BinaryOp::BitAnd, std::move(l->lhs), std::move(l->rhs), Type::boolTy());
  }

  /// A loop `for i in [start, stop): buf[..] = E` whose E holds a select
  /// `s = c if test else y` with a costly y (For::storesFresh), in chunks
  /// (see chunkStart). A chunk taken as mixed stores every element with c
  /// in place of s and records whether its test failed, in a loop with no
  /// branch (vectorized), keeps the failed indices (pydd::keep_indices),
  /// then stores the kept ones again with y; any other chunk stores c or y
  /// as the test goes, and counts the failed tests. The test goes either way at
  /// random in bigCLAM's log-likelihood (its 0/1 matrix's edges), where a
  /// branch per element mispredicted.
  void selectsFirstLoop(const Assign& fill, const std::string& start, const std::string& stop, const std::string& i,
                        const std::string& setVar, int depth) {
    auto side = [&](bool costly) {
      ExprPtr value = cloneExpr(*fill.value);
      ExprPtr* at = costlySelectSlot(value);
      auto& s = static_cast<Select&>(**at);
      ExprPtr test = std::move(s.cond);
      *at = std::move(costly ? s.falseValue : s.trueValue);
      return std::make_pair(std::move(value), std::move(test));
    };
    auto cheapSide = side(false);
    ExprPtr cheap = std::move(cheapSide.first), test = std::move(cheapSide.second);
    ExprPtr costly = side(true).first;
    evaluateBothSides(test);
    ChunkedLoop chunk = chunkStart(start, stop, "", /*branchyCopy=*/true, depth);
    chunkLoop(chunk, i, setVar, depth + 2);
    store(*fill.targets[0], expr(*cheap), depth + 3);
    line(depth + 3, chunk.tests + "[" + i + " - " + chunk.at + "] = !(" + expr(*test) + ");");
    line(depth + 2, "}");
    keepIndices(chunk, depth + 2);
    std::string k = temp("k");
    line(depth + 2, "for (int64_t " + k + " = 0; " + k + " < " + chunk.count + "; " + k + "++) {");
    line(depth + 3, "const int64_t " + i + " = " + chunk.kept + "[" + k + "];");
    line(depth + 3, setVar.substr(2));
    store(*fill.targets[0], expr(*costly), depth + 3);
    line(depth + 2, "}");
    line(depth + 1, "} else {");
    chunkLoop(chunk, i, setVar, depth + 2);
    line(depth + 3, "if (" + expr(*test) + ") {");
    store(*fill.targets[0], expr(*cheap), depth + 4);
    line(depth + 3, "} else {");
    line(depth + 4, "++" + chunk.count + ";");
    store(*fill.targets[0], expr(*costly), depth + 4);
    line(depth + 3, "}");
    line(depth + 2, "}");
    chunkEnd(chunk, depth);
  }

  /// A loop `for i in [start, stop): if test: body` whose test may run
  /// first (For::testsFirst), in chunks (see chunkStart). A chunk taken as
  /// mixed records every i's test in a loop with no branch (vectorized,
  /// with a copy for contiguous operands), keeps the taken i
  /// (pydd::keep_indices), then runs the body for them, in order; any other
  /// chunk tests each i as it goes and counts the taken ones. bigCLAM's
  /// gradient loops over a 0/1 row with 9% ones, whose branch mispredicted
  /// at every change of value. `loopVar` is the variable the test reads,
  /// `setVar` assigns it from i; `check` is the per-iteration Ctrl-C check,
  /// also made once per chunk. A body that runs a loop gets no branchy
  /// copy: its iterations cost far more than a test and a keep, and the
  /// copy doubled the C++ g++ optimizes (bigCLAM's module built in 1.27x the
  /// CPU time with it, and ran no faster).
  void testsFirstLoop(const If& test, const std::string& loopVar, const std::string& start, const std::string& stop,
                      const std::string& i, const std::string& setVar, const std::string& check, int depth) {
    ExprPtr tested = cloneExpr(*test.cond);
    evaluateBothSides(tested);
    ChunkedLoop chunk = chunkStart(start, stop, check, !containsLoop(*test.thenBody), depth);
    // The tests' loop, with a copy for operands whose last axis is
    // contiguous (then it vectorizes).
    std::set<std::string> contiguous;
    if (!Opts.boundsCheck && RareDepth == 0) addSteppedViews(*tested, loopVar, contiguous);
    unitStrideCopies(contiguous, depth + 2, [&](int d) {
      chunkLoop(chunk, i, setVar, d);
      line(d + 1, chunk.tests + "[" + i + " - " + chunk.at + "] = " + expr(*tested) + ";");
      line(d, "}");
    });
    keepIndices(chunk, depth + 2);
    std::string k = temp("k");
    line(depth + 2, "for (int64_t " + k + " = 0; " + k + " < " + chunk.count + "; " + k + "++) {");
    line(depth + 3, "const int64_t " + i + " = " + chunk.kept + "[" + k + "];");
    line(depth + 3, setVar.substr(2));
    if (!check.empty()) line(depth + 3, check);
    block(*test.thenBody, depth + 3);
    line(depth + 2, "}");
    if (!chunk.branchyCopy) return chunkEnd(chunk, depth);
    line(depth + 1, "} else {");
    chunkLoop(chunk, i, setVar, depth + 2);
    if (!check.empty()) line(depth + 3, check);
    line(depth + 3, "if (" + expr(*test.cond) + ") {");
    line(depth + 4, "++" + chunk.count + ";");
    block(*test.thenBody, depth + 4);
    line(depth + 3, "}");
    line(depth + 2, "}");
    chunkEnd(chunk, depth);
  }

  /// The names of a chunked loop (testsFirstLoop, selectsFirstLoop).
  struct ChunkedLoop {
    std::string at, end, count, mixed, tests, kept;
    bool branchyCopy;
  };

  /// Opens a loop over [start, stop) in chunks of pydd::kIndexChunk, whose
  /// iterations test something that may go either way (a branch). A chunk
  /// taken as mixed tests every index with no branch, then runs the kept
  /// ones (the body's, or the costly side's); any other chunk branches on
  /// each test. Each chunk counts its kept indices, and the next chunk is
  /// mixed unless nearly all of this one's (more than 15/16) were kept:
  /// then the branch is predictable and running every index through the
  /// kept list costs more (1.36x on a masked sum with all taken), while
  /// with few kept the mixed chunk skips the others at no branch (0.5x at
  /// 0 and 1% taken) and with a mix it avoids the mispredictions (0.2-0.7x
  /// at 9% and 50%). The first chunk is taken as mixed. Without a
  /// `branchyCopy` every chunk is mixed. Emits `perChunk` in each chunk and
  /// opens `if (mixed) {` (or a block).
  ChunkedLoop chunkStart(const std::string& start, const std::string& stop, const std::string& perChunk,
                         bool branchyCopy, int depth) {
    const std::string size = "pydd::kIndexChunk";
    ChunkedLoop c{temp("at"), temp("end"), temp("count"), temp("mixed"), temp("tests"), temp("kept"), branchyCopy};
    line(depth, "for (int64_t " + c.at + " = " + start + ", " + c.end + (branchyCopy ? ", " + c.mixed + " = 1" : "") +
                    "; " + c.at + " < " + stop + "; " + c.at + " = " + c.end + ") {");
    line(depth + 1, c.end + " = " + stop + " - " + c.at + " > " + size + " ? " + c.at + " + " + size + " : " + stop + ";");
    if (!perChunk.empty()) line(depth + 1, perChunk);
    line(depth + 1, "int64_t " + c.count + " = 0;");
    line(depth + 1, branchyCopy ? "if (" + c.mixed + ") {" : "{");
    line(depth + 2, "bool " + c.tests + "[pydd::kIndexChunk];");
    line(depth + 2, "int64_t " + c.kept + "[pydd::kKeptIndices];");
    return c;
  }

  /// In a mixed chunk, after the loop that filled its tests: keeps the
  /// indices whose test held (pydd::keep_indices, no branch per index).
  void keepIndices(const ChunkedLoop& c, int depth) {
    line(depth, c.count + " = pydd::keep_indices(" + c.tests + ", " + c.end + " - " + c.at + ", " + c.at + ", " +
                    c.kept + ");");
  }

  /// Opens the loop over a chunk's i.
  void chunkLoop(const ChunkedLoop& c, const std::string& i, const std::string& setVar, int depth) {
    line(depth, "for (int64_t " + i + " = " + c.at + "; " + i + " < " + c.end + "; " + i + "++) {");
    line(depth + 1, setVar.substr(2));
  }

  /// Closes chunkStart's `if` and decides whether the next chunk is mixed.
  void chunkEnd(const ChunkedLoop& c, int depth) {
    line(depth + 1, "}");
    if (c.branchyCopy)
      line(depth + 1, c.mixed + " = (" + c.end + " - " + c.at + " - " + c.count + ") * 16 > " + c.end + " - " + c.at + ";");
    line(depth, "}");
  }

  /// A loop over S.row(i) that every iteration of the enclosing loop runs
  /// counts the enclosing loop's work, its row's entries plus
  /// kInterruptRowWork, and checks Ctrl-C when the count reaches
  /// kInterruptLongLoop: the periodic check and the long row's check in one
  /// test per row (a loop over rows of 10 entries ran 4% faster).
  /// When the enclosing loop ranges over the matrix's rows and walks row i
  /// in iteration i (stripsRows), it runs in strips of rows of at most
  /// kInterruptStripWork instead (pydd::interrupt_strip_end), checking once
  /// per strip, and its rows test nothing.
  enum class GathersAhead { Undecided, Yes, No };
  struct WorkBudget {
    std::string counter;
    const Call* rows = nullptr;  // the row loop that keeps the count
    bool strips = false;         // the enclosing loop checks per strip of rows
  };

  /// The Ctrl-C check at the top of each iteration of a loop with this body
  /// (emitted at `depth`, before the loop, is what it needs), or nothing:
  /// only loops that hold another loop check (see pydd::Interrupt). When
  /// every iteration is short (shortIterations), every kInterruptPeriod-th
  /// one checks: a volatile load per row made a loop over S.row(i) 8%
  /// slower, and the rows' own loops check before they run long. When
  /// every iteration runs a loop over S.row(i), that loop's header counts
  /// the work instead (see WorkBudget): one test per row for both checks.
  struct InterruptCheck {
    std::string line;  // empty: no check, or the work budget's
    bool periodic = false;
    WorkBudget budget = {};
  };
  InterruptCheck interruptCheck(const Block& body, int depth, const For* loop = nullptr) {
    if (!Opts.interruptChecks || InIndependentLoop || !containsLoop(body)) return {};
    if (!shortIterations(body)) return {"pydd::check_interrupt();"};
    const Call* rows = rowLoopEveryIteration(body);
    if (rows && loop && stripsRows(*loop, *rows)) return {"", true, {"", rows, true}};
    std::string tick = temp(rows ? "work" : "tick");
    line(depth, "int64_t " + tick + " = 0;");
    if (rows) return {"", true, {tick, rows}};
    return {"if (__builtin_expect((" + tick + "++ & (pydd::kInterruptPeriod - 1)) == 0, 0)) pydd::check_interrupt();", true};
  }

  /// Whether `f`, whose every iteration runs the row loop `rows`, can run in
  /// strips of rows (see WorkBudget): a serial loop over exactly the rows of
  /// the matrix whose CSR arrays it fetched (hoistableRowMatrix) that walks
  /// row i in iteration i, and that no `break` leaves part way through a
  /// strip.
  bool stripsRows(const For& f, const Call& rows) const {
    auto* matrix = dyn_cast<VarRef>(rows.args[0].get());
    auto* row = dyn_cast<VarRef>(rows.args[1].get());
    auto* step = dyn_cast<IntLit>(f.step.get());
    return HoistedRows.loop == &f && !HoistedRows.rowInRange.empty() && !f.parallel && step && step->value == 1 && matrix &&
           matrix->name == HoistedRows.matrix && row && row->name == f.var && !containsBreak(*f.body);
  }

  /// The `S.row(i)` call a loop iterates over, or null.
  static const Call* rowLoopCall(const For& f) {
    auto* c = dyn_cast<Call>(f.iterable.get());
    return c && c->library && c->library->yieldsEntries && c->library->sparseAccess == SparseAccess::Rows ? c : nullptr;
  }

  /// The `S.row(i)` call of a loop that every iteration of a loop with this
  /// body reaches (a statement of the body itself, and no `continue` that
  /// could skip it), or null.
  static const Call* rowLoopEveryIteration(const Block& body) {
    const Call* rows = nullptr;
    for (auto& st : body.stmts)
      if (auto* f = dyn_cast<For>(st.get()); f && !rows) rows = rowLoopCall(*f);
    return rows && !continuesLoop(body) ? rows : nullptr;
  }

  /// Whether a `continue` in this block (outside inner loops) goes to the
  /// next iteration of the loop whose body it is.
  static bool continuesLoop(const Block& b) {
    for (auto& st : b.stmts) {
      if (st->kind == StmtKind::Continue) return true;
      if (auto* i = dyn_cast<If>(st.get()); i && (continuesLoop(*i->thenBody) || (i->elseBody && continuesLoop(*i->elseBody))))
        return true;
    }
    return false;
  }

  /// Whether an iteration of a loop with this body takes as long as its
  /// inner loops' iterations add up to: every loop in it is an innermost
  /// range or sparse-row loop (which checks Ctrl-C itself before a long
  /// run: longLoopCheck), and nothing in it calls a kernel function or a
  /// library function with a non-scalar result (which could run long).
  static bool shortIterations(const Block& b) {
    bool ok = true;
    std::function<void(const Expr&)> onExpr = [&](const Expr& e) {
      if (auto* c = dyn_cast<Call>(&e); c && (c->target != CallTarget::Library || !c->type.isScalar())) ok = false;
      forEachChild(e, onExpr);
    };
    std::function<void(const Block&, bool)> onBlock = [&](const Block& blk, bool inLoop) {
      for (auto& st : blk.stmts) {
        if (!ok) return;
        if (st->kind == StmtKind::While || st->kind == StmtKind::Task) {
          ok = false;
          return;
        }
        bool loop = false;
        if (auto* f = dyn_cast<For>(st.get())) {
          const Call* c = rowLoopCall(*f);
          bool rowLoop = c != nullptr;
          if (inLoop || f->parallel || containsLoop(*f->body) || !(f->isRange || rowLoop)) {
            ok = false;
            return;
          }
          loop = true;
          if (rowLoop) {  // the matrix and the row index are evaluated once
            onExpr(*c->args[0]);
            onExpr(*c->args[1]);
            onBlock(*f->body, true);
            continue;
          }
        }
        forEachPart(*st, onExpr, [&](const Block& inner) { onBlock(inner, inLoop || loop); });
      }
    };
    onBlock(b, false);
    return ok;
  }

  /// Before an innermost loop inside a loop that checks Ctrl-C periodically:
  /// a check when the loop is long, so that the period does not multiply
  /// the time to see Ctrl-C by a long loop's run.
  static std::string longLoopCheck(const std::string& isLong) {
    return "if (__builtin_expect(" + isLong + ", 0)) pydd::check_interrupt();";
  }

  /// One copy of a range loop: its opening lines, its body, its end.
  void loopCopy(const std::vector<std::string>& header, const Block& body, int depth) {
    for (auto& h : header) line(depth, h);
    block(body, depth + 1);
    line(depth, "}");
  }

  /// The views of a short straight-line innermost range loop (element
  /// stores and scalar assignments only, up to 16: merged fused loops) whose
  /// last index is the loop variable: the loop gets a copy for when they are
  /// all contiguous along that axis. None with bounds checks (the checked
  /// path stays the one).
  std::set<std::string> unitStrideCandidates(const For& f) {
    std::set<std::string> views;
    if (Opts.boundsCheck || RareDepth > 0 || f.body->stmts.empty() || f.body->stmts.size() > 16) return {};
    for (auto& s : f.body->stmts) {
      auto* a = dyn_cast<Assign>(s.get());
      if (!a || a->targets.size() != 1 || !a->value) return {};
      if (a->targets[0]->kind == ExprKind::Var && !a->targets[0]->type.isScalar()) return {};
      if (hasSideEffects(*a->value)) return {};
      addSteppedViews(*a->value, f.var, views);
      addSteppedViews(*a->targets[0], f.var, views);
    }
    return views;
  }

  /// Adds to `views` the views whose element `e` reads or writes at the
  /// loop variable along the last axis (steppedByLoop).
  void addSteppedViews(const Expr& e, const std::string& loopVar, std::set<std::string>& views) const {
    if (auto* x = dyn_cast<Index>(&e); x && x->type.isScalar() && x->base->type.isArray()) {
      auto* base = dyn_cast<VarRef>(x->base.get());
      if (base && Views.count(base->name) && steppedByLoop(*x->indices.back(), loopVar))
        views.insert(Views.at(base->name));
    }
    forEachChild(e, [&](const Expr& c) { addSteppedViews(c, loopVar, views); });
  }

  /// The loop variable, or an offset plus it (`off + j`, a fused window's
  /// buffer position): consecutive iterations read consecutive elements of
  /// a contiguous last axis.
  static bool steppedByLoop(const Expr& index, const std::string& loopVar) {
    auto isLoopVar = [&](const Expr& e) {
      auto* v = dyn_cast<VarRef>(&e);
      return v && v->name == loopVar;
    };
    if (isLoopVar(index)) return true;
    auto* b = dyn_cast<Binary>(&index);
    return b && b->op == BinaryOp::Add && (isLoopVar(*b->lhs) || isLoopVar(*b->rhs));
  }

  static bool containsLoop(const Block& b) {
    for (auto& s : b.stmts) {
      if (s->kind == StmtKind::For || s->kind == StmtKind::While) return true;
      if (auto* i = dyn_cast<If>(s.get()); i && (containsLoop(*i->thenBody) || (i->elseBody && containsLoop(*i->elseBody))))
        return true;
      if (auto* t = dyn_cast<Task>(s.get()); t && containsLoop(*t->body)) return true;
    }
    return false;
  }

  /// Whether a block only computes: no loop, and no call but a library
  /// function's with a scalar result (sqrt, abs, min: inlined arithmetic).
  static bool computesOnly(const Block& b) {
    if (containsLoop(b)) return false;
    bool calls = false;
    std::function<void(const Expr&)> onExpr = [&](const Expr& e) {
      if (auto* c = dyn_cast<Call>(&e); c && (c->target != CallTarget::Library || !c->type.isScalar())) calls = true;
      forEachChild(e, onExpr);
    };
    std::function<void(const Block&)> onBlock = [&](const Block& blk) {
      for (auto& st : blk.stmts) forEachPart(*st, onExpr, onBlock);
    };
    onBlock(b);
    return !calls;
  }

  /// `for t in S.row(i)` / `for t in S.nonzeros()`: a loop over the CSR
  /// arrays that sets t to (column, value) or (row, column, value) tuples,
  /// without building a list. The matrix is held for the loop, as Python's
  /// iterator holds it. The loop is emitted once per index width (a
  /// borrowed SciPy structure stays int32), so no read tests the width.
  /// A column index is range-checked as it is read (SciPy's ValueError):
  /// one predictable comparison, where checking a caller's matrix in a pass
  /// of its own before the loop measured 1.33x slower (bench/sparse.py's
  /// row loop, 10^6 entries).
  ///
  /// A loop marked For::gathersFrom is emitted twice, the copy that runs
  /// when one of those vectors is too large for the cache prefetching each
  /// at the column of an entry further on (opt/PrefetchGathers.h).
  void sparseLoop(const For& f, const Call& c, const std::string& loopVar, int depth) {
    const Block& body = *f.body;
    std::string s = temp("spm"), a = temp("csr"), k = temp("k"), r = temp("r"), end = temp("end");
    const bool byRow = c.library->sparseAccess == SparseAccess::Rows;  // one row's entries, else all of them
    // A variable the body does not assign is borrowed: a copy would cost an
    // atomic reference count up and down per loop (per row, in a row loop).
    bool borrow = false;
    if (auto* v = dyn_cast<VarRef>(c.args[0].get())) {
      borrow = !assignedVars(body).count(v->name);
    }
    line(depth + 1, std::string(borrow ? "[[maybe_unused]] const auto& " : "[[maybe_unused]] const auto ") + s + " = " + expr(*c.args[0]) + ";");
    auto* matrix = dyn_cast<VarRef>(c.args[0].get());
    const bool hoisted = byRow && matrix && matrix->name == HoistedRows.matrix;
    if (byRow) {
      auto* row = dyn_cast<VarRef>(c.args[1].get());
      if (hoisted && row && row->name == HoistedRows.rowInRange)
        line(depth + 1, "const int64_t " + r + " = " + expr(*c.args[1]) + ";  // in [0, rows): the loop's range");
      else
        line(depth + 1, "const int64_t " + r + " = pydd::checked_index(" + expr(*c.args[1]) + ", " + s + ".rows(), 0);");
    }
    std::string tuple = cxxType(c.type.elems()[0]);
    std::vector<std::string> gathers;  // the views of f.gathersFrom, when prefetched
    if (!hoisted || HoistedRows.gathersAhead != GathersAhead::No)
      for (const std::string& x : f.gathersFrom)
        if (Views.count(x)) gathers.push_back(Views[x]);
    auto copy = [&](const std::string& csr, bool hoisted) {
      std::vector<std::string> header;
      std::string position = k;  // the entry's, in the CSR arrays
      const int d = hoisted ? depth + 1 : depth + 2;  // (not inside a width test)
      header.push_back(std::string(hoisted ? "const auto& " : "const auto ") + a + " = " + csr + ";");
      const std::string length = "int64_t(" + a + ".p[" + r + " + 1] - " + a + ".p[" + r + "])";
      if (byRow && &c == Budget.rows) {
        if (!Budget.strips)
          header.push_back("if (__builtin_expect((" + Budget.counter + " += " + length +
                           " + pydd::kInterruptRowWork) >= pydd::kInterruptLongLoop, 0)) { " + Budget.counter +
                           " = 0; pydd::check_interrupt(); }");
      } else if (byRow && InPeriodicCheck && !containsLoop(body))
        header.push_back(longLoopCheck(length + " >= pydd::kInterruptLongLoop"));
      if (byRow && computesOnly(body)) {
        // The entries are read at negative offsets from the row's end, so the
        // counter runs up to zero and its increment sets the flags the loop's
        // branch tests: one compare per entry fewer, which with the column check
        // made a row of ~10 entries 1.03-1.08x SciPy's S @ x (bench/sparse.py's
        // row loop; 1.00-1.04x counting to zero, and pr_nibble 0.96-0.995x its
        // time before). A body that calls out (changepoint's heap pushes) ran
        // 3-5% slower so. Unrolling by two did better on long rows but cost 7%
        // on pr_nibble's short ones, whose odd lengths took a branch that
        // mispredicts.
        std::string cols = temp("cols"), vals = temp("vals");
        header.push_back("const int64_t " + end + " = " + a + ".p[" + r + " + 1];");
        header.push_back("const auto* " + cols + " = " + a + ".c + " + end + ";");
        header.push_back("const auto* " + vals + " = " + a + ".v + " + end + ";");
        header.push_back("for (int64_t " + k + " = " + a + ".p[" + r + "] - " + end + "; " + k + " < 0; ++" + k + ") {");
        header.push_back("  " + loopVar + " = " + tuple + "{pydd::detail::sp_column(" + cols + "[" + k + "], " + a + ".n), " + vals + "[" + k + "]};");
        position = end + " + " + k;
      } else if (byRow) {
        header.push_back("for (int64_t " + k + " = " + a + ".p[" + r + "], " + end + " = " + a + ".p[" + r + " + 1]; " +
                         k + " < " + end + "; ++" + k + ") {");
        header.push_back("  " + loopVar + " = " + tuple + "{pydd::detail::sp_column(" + a + ".c[" + k + "], " + a + ".n), " + a + ".v[" + k + "]};");
      } else {
        // One loop over the non-zeros (so that break and continue mean what
        // they say), with the row advanced past empty rows.
        header.push_back("for (int64_t " + k + " = 0, " + r + " = 0; " + k + " < " + a + ".nnz; ++" + k + ") {");
        header.push_back("  while (" + a + ".p[" + r + " + 1] <= " + k + ") ++" + r + ";");
        header.push_back("  " + loopVar + " = " + tuple + "{" + r + ", pydd::detail::sp_column(" + a + ".c[" + k + "], " + a + ".n), " + a + ".v[" + k + "]};");
      }
      // Ctrl-C is seen at the back edges of outer loops (see pydd::Interrupt).
      const InterruptCheck check = interruptCheck(body, d);
      PeriodicCheck guard(*this, check);
      if (!check.line.empty()) header.push_back("  " + check.line);
      if (gathers.empty()) return loopCopy(header, body, d);
      std::vector<std::string> ahead = header;
      auto at = ahead.end() - (check.line.empty() ? 0 : 1);  // after the entry's assignment
      for (const std::string& x : gathers)
        at = ahead.insert(at, "  pydd::detail::prefetch_gather(" + x + ", " + a + ".c, " + position +
                                  " + pydd::detail::kGatherPrefetchDistance, " + a + ".nnz);") + 1;
      if (hoisted && HoistedRows.gathersAhead == GathersAhead::Yes) return loopCopy(ahead, body, d);
      // Expected not taken: g++ then lays the plain copy out inline, which on
      // a vector in cache ran at the loop's time without the copy, where
      // either copy inline ran the plain one 1.08-1.12x slower (rows of 10,
      // 10^4 columns). The prefetching copy waits on memory anyway.
      line(d, "if (__builtin_expect(" + gathersAheadTest(f) + ", 0)) {");
      loopCopy(ahead, body, d + 1);
      line(d, "} else {");
      loopCopy(header, body, d + 1);
      line(d, "}");
    };
    if (hoisted) {
      copy(HoistedRows.view, true);  // the enclosing loop fetched the arrays at their width
    } else {
      line(depth + 1, "if (" + s + ".narrow()) {");
      copy(s + ".csr<int32_t>(false)", false);
      line(depth + 1, "} else {");
      copy(s + ".csr<int64_t>(false)", false);
      line(depth + 1, "}");
    }
    line(depth, "}");
  }

  /// The SparseMat variable whose rows the inner loops of `f` walk, when its
  /// CSR arrays can be fetched once, at their index width, for the whole of
  /// `f` (emitted twice, for int32 and int64 indices): a loop over rows with
  /// little work per row paid a width test and a fetch per row (3% of a
  /// loop over S.row(i) of 10 entries each). The body must use no SparseMat
  /// but that variable, and it only as the matrix of `S.row(i)` loops: then
  /// nothing in it can widen the matrix's indices or change its entries.
  /// Only bodies of short iterations (shortIterations) are worth the copy.
  std::string hoistableRowMatrix(const For& f) {
    if (!f.isRange || f.parallel || !HoistedRows.matrix.empty() || !shortIterations(*f.body)) return "";
    std::string name;
    int rowUses = 0, uses = 0;
    bool another = false;  // a second SparseMat variable
    std::function<void(const Expr&)> onExpr = [&](const Expr& e) {
      if (auto* v = dyn_cast<VarRef>(&e); v && v->type.isSparse()) {
        ++uses;
        another = another || (!name.empty() && name != v->name);
        name = v->name;
      }
      forEachChild(e, onExpr);
    };
    std::function<void(const Block&)> onBlock = [&](const Block& b) {
      for (auto& st : b.stmts) {
        if (auto* inner = dyn_cast<For>(st.get()))
          if (const Call* c = rowLoopCall(*inner); c && isa<VarRef>(*c->args[0])) ++rowUses;
        forEachPart(*st, onExpr, onBlock);
      }
    };
    onBlock(*f.body);
    if (name.empty() || another || uses != rowUses || assignedVars(*f.body).count(name)) return "";
    return name;
  }

  /// The run-time test that the vectors `loop` and the sparse loops in it
  /// gather from (For::gathersFrom) are large enough to prefetch: "" when
  /// they gather from none.
  std::string gathersAheadTest(const Stmt& loop) {
    std::vector<std::string> views;
    std::function<void(const Stmt&)> onStmt = [&](const Stmt& s) {
      if (auto* f = dyn_cast<For>(&s))
        for (const std::string& x : f->gathersFrom)
          if (Views.count(x) && std::find(views.begin(), views.end(), Views[x]) == views.end())
            views.push_back(Views[x]);
      forEachPart(s, [](const Expr&) {}, [&](const Block& b) {
        for (auto& st : b.stmts) onStmt(*st);
      });
    };
    onStmt(loop);
    std::string test;
    for (const std::string& v : views)
      test += (test.empty() ? "" : " || ") + std::string("pydd::detail::gathers_miss_cache(") + v + ")";
    return test;
  }

  /// Whether `f` is `for i in range(shape(m, 0))` (start 0, step 1) with i
  /// unassigned in its body: every i is a row of m, which the body cannot
  /// replace (hoistableRowMatrix), so `m.row(i)` needs no index check.
  static bool rowIndexInRange(const For& f, const std::string& m) {
    const VarRef* of = rowsLoopMatrix(f);
    return of && of->name == m && !assignedVars(*f.body).count(f.var);
  }

  /// The C++ name of a pydd variable, computed once per variable.
  const std::string& var(const std::string& name) {
    auto [it, added] = VarNames.try_emplace(name);
    if (added) it->second = cxxVariable(M, F, name);
    return it->second;
  }

  const Module& M;
  const Function& F;
  const CppOptions& Opts;
  std::set<std::string> NonNeg;
  std::set<std::string> Indexed;
  std::set<std::string> Used;
  std::map<std::string, std::string> Views;        // array -> its view variable
  std::map<std::string, std::string> ArrayOfView;  // the other way
  std::unordered_map<const Expr*, bool> SideEffects;  // see sideEffects()
  std::map<const Block*, std::vector<std::string>> ColdLocals;  // declared in their cold lambda (coldBranchLocals)
  std::map<const Block*, std::set<std::string>> ColdReferences;  // what each refers to (coldBranchReferences)
  std::vector<OutlinedBranch> Outlined;                           // see outline()
  std::optional<std::set<std::string>> Rebound;                   // assignedVars(F.body), once needed
  std::set<std::string> Undeclared;  // those of the cold lambdas not being emitted
  std::set<std::string> UnitStride;  // views read with .unit() in this loop copy
  std::set<std::string> UnitStrideArrays;  // arrays always contiguous along their last axis (unitStrideArrays)
  int RareDepth = 0;                 // inside a cold (rare) branch: no contiguous loop copies
  bool InParallelRegion = false;     // inside a pfor's or a fused loop's OpenMP region
  bool InPeriodicCheck = false;      // in the body of a loop that checks Ctrl-C every kInterruptPeriod iterations
  WorkBudget Budget;                 // of the enclosing loop, when a row loop in it keeps it
  struct {
    std::string matrix, view;  // the SparseMat whose rows the loop being emitted walks, and its CSR arrays
    std::string rowInRange;    // its loop variable, when it ranges over the matrix's rows exactly
    const For* loop = nullptr;  // that loop
    // Whether this copy of the loop prefetches its row loops' gathers.
    GathersAhead gathersAhead = GathersAhead::Undecided;
  } HoistedRows;
  /// Sets InPeriodicCheck for the body of a loop whose check is periodic.
  struct PeriodicCheck {
    PeriodicCheck(FunctionEmitter& e, const InterruptCheck& check)
        : E(e), Saved(std::exchange(e.InPeriodicCheck, check.periodic)), SavedBudget(std::exchange(e.Budget, check.budget)) {}
    ~PeriodicCheck() {
      E.InPeriodicCheck = Saved;
      E.Budget = SavedBudget;
    }
    FunctionEmitter& E;
    bool Saved;
    WorkBudget SavedBudget;
  };
  bool InIndependentLoop = false;    // inside a fused loop run on all threads: no Ctrl-C checks
  bool InGuardedNest = false;        // ... whose exceptions are caught (a window of a fused sum): checks
  std::pair<std::string, std::string> RangeOverride;  // the next range loop's bounds, when set
  const For* SerialFold = nullptr;                     // the fold loop being emitted inline (foldLoop)
  const For* PairedFallback = nullptr;  // the rowsInPairs loop being emitted as written (pairedRowLoop)
  std::string ZeroDivisorFlag;  // of the defersDivisionChecks loop being emitted: its float divisions set it
  std::map<std::string, std::string> VarNames;
  /// The error slots (FirstError*) of the enclosing finish blocks, the
  /// function's implicit one first: an async's task reports to the last.
  std::vector<std::string> Finish;
  std::string Out;
  unsigned NextTemp = 0;
};

}  // namespace

std::string cxxIdentifier(const std::string& name) {
  std::string id = name;
  while (cxxReserved().count(id)) id += "_";
  return id;
}

std::string cxxVariable(const Module& m, const Function& f, const std::string& name) {
  std::string id = name;
  // A local may share its name with a function it calls, or with the
  // module's namespace; in C++ it would hide them.
  auto isFunction = [&] {
    return std::any_of(m.functions.begin(), m.functions.end(), [&](auto& g) { return g->sourceName() == id; });
  };
  while (cxxReserved().count(id) || isFunction() || id == m.name || (id != name && f.lookup(id))) id += "_";
  return id;
}

/// A parameter's default (Python literal text) as a C++ constant of its type.
std::string cxxDefaultValue(const Param& p) {
  std::string v = p.defaultValue == "True" ? "true" : p.defaultValue == "False" ? "false" : p.defaultValue;
  return std::string(cxxScalarType(p.type.elem())) + "(" + v + ")";
}

std::string cxxDeclaration(const Module& m, const Function& f, bool withDefaults) {
  std::set<std::string> rebound = assignedVars(*f.body);  // passed by value, not const&
  // The instances of a rank-generic function are C++ overloads of its name.
  std::string s = cxxType(f.returnType) + " " + cxxIdentifier(f.sourceName()) + "(";
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Param& p = f.params[i];
    std::string t = cxxType(p.type);
    // Arrays are passed by const reference unless the body rebinds them.
    if (p.type.isArray() && !rebound.count(p.name)) t = "const " + t + "&";
    s += (i ? ", " : "") + std::string("[[maybe_unused]] ") + t + " " + cxxVariable(m, f, p.name);
    if (withDefaults && !p.defaultValue.empty()) s += " = " + cxxDefaultValue(p);
  }
  return s + ")";
}

std::string emitKernelCpp(const Module& m, const CppOptions& options) { return emitKernelCppParts(m, options, 1)[0]; }

namespace {

/// The module functions `f` calls.
std::set<const Function*> callees(const Module& m, const Function& f) {
  std::set<const Function*> out;
  std::function<void(const Expr&)> expr = [&](const Expr& e) {
    if (auto* c = dyn_cast<Call>(&e); c && c->target == CallTarget::User)
      for (auto& g : m.functions)
        if (g->name == c->callee) out.insert(g.get());
    forEachChild(e, expr);
  };
  std::function<void(const Stmt&)> stmt = [&](const Stmt& s) {
    forEachPart(s, expr, [&](const Block& b) {
      for (auto& inner : b.stmts) stmt(*inner);
    });
  };
  stmt(*f.body);
  return out;
}

}  // namespace

std::vector<std::string> emitKernelCppParts(const Module& m, const CppOptions& options, unsigned parts) {
  // The units of text to spread: each function's definition, then the
  // rare branches emitted as functions of their own, which can go to any
  // part (they only run when a function calls them, rarely).
  std::vector<std::string> bodies, outlinedBodies, outlinedDeclarations;
  for (auto& f : m.functions) {
    FunctionEmitter e(m, *f, options);
    bodies.push_back(e.emit());
    for (auto& o : e.outlined()) {
      outlinedDeclarations.push_back(o.declaration);
      outlinedBodies.push_back(o.definition);
    }
  }
  const size_t n = m.functions.size();
  bodies.insert(bodies.end(), outlinedBodies.begin(), outlinedBodies.end());
  const size_t units = bodies.size();
  // The C++ text of a function is the measure of its build time (about
  // 25 us a character at -O3). A part costs a fixed ~0.1 s (the
  // precompiled header, the runtime's inline code it instantiates), so
  // each must get at least kMinPart characters.
  constexpr size_t kMinPart = 12000, kSmallCallee = 4000;
  size_t total = 0;
  for (auto& b : bodies) total += b.size();
  parts = static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>({parts, units, total / kMinPart})));
  // Which function's part each one joins: a short callee (bigCLAM's
  // sigm()) joins its largest caller's, where g++ can inline it.
  std::vector<size_t> home(units);
  for (size_t i = 0; i < units; ++i) home[i] = i;
  for (size_t i = 0; i < n; ++i)
    for (auto* g : callees(m, *m.functions[i]))
      for (size_t j = 0; j < n; ++j)
        if (m.functions[j].get() == g && j != i && bodies[j].size() < kSmallCallee &&
            (home[j] == j || bodies[home[j]].size() < bodies[i].size()))
          home[j] = i;
  auto root = [&](size_t i) {
    for (size_t hops = 0; home[i] != i && hops < units; ++hops) i = home[i];
    return i;
  };
  std::vector<size_t> weight(units, 0);
  for (size_t i = 0; i < units; ++i) weight[root(i)] += bodies[i].size();
  // Largest first, each into the lightest part.
  std::vector<size_t> order;
  for (size_t i = 0; i < units; ++i)
    if (weight[i]) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weight[a] > weight[b]; });
  std::vector<size_t> load(parts, 0), partOf(units, 0);
  for (size_t u : order) {
    size_t p = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    partOf[u] = p;
    load[p] += weight[u];
  }
  std::string prelude = "// Generated by pyddc from " + m.path + ". Do not edit.\n";
  // runtime.h first, so that its precompiled form can be used.
  prelude += "#include \"pydd/runtime.h\"\n\n#include <cstdint>\n#include <limits>\n#include <tuple>\n\n";
  prelude += "namespace " + cxxIdentifier(m.name) + " {\n\n";
  for (auto& f : m.functions) prelude += cxxDeclaration(m, *f, true) + ";\n";
  for (auto& d : outlinedDeclarations) prelude += d + ";\n";
  if (options.device) prelude += options.device->hostDeclarations();
  std::vector<std::string> out(parts, prelude);
  for (size_t i = 0; i < units; ++i) out[partOf[root(i)]] += "\n" + bodies[i];
  for (auto& part : out) part += "\n}  // namespace " + cxxIdentifier(m.name) + "\n";
  // The lightest first: the host's glue is appended to it.
  std::vector<size_t> byLoad(parts);
  for (size_t p = 0; p < parts; ++p) byLoad[p] = p;
  std::stable_sort(byLoad.begin(), byLoad.end(), [&](size_t a, size_t b) { return load[a] < load[b]; });
  std::vector<std::string> sorted;
  for (size_t p : byLoad) sorted.push_back(std::move(out[p]));
  return sorted;
}

}  // namespace pydd
