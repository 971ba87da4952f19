#include "ir/Printer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pydd {
namespace {

// Python's precedence levels, loosest first.
enum Prec { PSelect = 1, POr, PAnd, PNot, PCompare, PBitOr, PBitXor, PBitAnd, PShift, PAdd, PMul, PUnary, PPow, PAtom };

int binaryPrec(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: return PAdd;
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod:
    case BinaryOp::MatMul: return PMul;
    case BinaryOp::Pow: return PPow;
    case BinaryOp::BitAnd: return PBitAnd;
    case BinaryOp::BitOr: return PBitOr;
    case BinaryOp::BitXor: return PBitXor;
    case BinaryOp::Shl:
    case BinaryOp::Shr: return PShift;
  }
  return PAtom;
}

class Printer {
 public:
  std::string out;

  void expr(const Expr& e, int context = 0) {
    int prec = precedence(e);
    bool parens = prec < context;
    if (parens) out += '(';
    body(e);
    if (parens) out += ')';
  }

  void function(const Function& f) {
    if (!f.generic.empty()) out += "# " + describeInstance(f) + "\n";
    out += "def " + printSignature(f, false) + ":\n";
    for (auto& l : f.locals) out += "    " + l.name + ": " + l.type.str() + "\n";
    block(*f.body, 1);
  }

  void block(const Block& b, int depth) {
    if (b.stmts.empty()) {
      indent(depth);
      out += "pass\n";
    }
    for (auto& s : b.stmts) stmt(*s, depth);
  }

 private:
  void indent(int depth) { out.append(static_cast<size_t>(depth) * 4, ' '); }

  static int precedence(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Select: return PSelect;
      case ExprKind::Logical: return static_cast<const Logical&>(e).isAnd ? PAnd : POr;
      case ExprKind::Not: return PNot;
      case ExprKind::Compare: return PCompare;
      case ExprKind::Binary: return binaryPrec(static_cast<const Binary&>(e).op);
      case ExprKind::Unary: return PUnary;
      case ExprKind::IntLit: return static_cast<const IntLit&>(e).value < 0 ? PUnary : PAtom;
      case ExprKind::FloatLit: return std::signbit(static_cast<const FloatLit&>(e).value) ? PUnary : PAtom;
      default: return PAtom;
    }
  }

  void list(const std::vector<ExprPtr>& xs) {
    for (size_t i = 0; i < xs.size(); ++i) {
      if (i) out += ", ";
      expr(*xs[i]);
    }
  }

  void body(const Expr& e) {
    switch (e.kind) {
      case ExprKind::IntLit: out += std::to_string(static_cast<const IntLit&>(e).value); return;
      case ExprKind::FloatLit: {
        auto& f = static_cast<const FloatLit&>(e);
        out += f.imaginary ? formatImaginaryLiteral(f.value) : formatFloatLiteral(f.value);
        return;
      }
      case ExprKind::BoolLit: out += static_cast<const BoolLit&>(e).value ? "True" : "False"; return;
      case ExprKind::StrLit: {
        out += '"';
        for (char c : static_cast<const StrLit&>(e).value) {
          if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
          } else if (c == '\n') {
            out += "\\n";
          } else if (c == '\t') {
            out += "\\t";
          } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\x%02x", static_cast<unsigned char>(c));
            out += esc;
          } else {
            out += c;  // printable ASCII, or a byte of UTF-8 text
          }
        }
        out += '"';
        return;
      }
      case ExprKind::Var: out += static_cast<const VarRef&>(e).name; return;
      case ExprKind::Unary: {
        auto& u = static_cast<const Unary&>(e);
        out += u.op == UnaryOp::Neg ? "-" : u.op == UnaryOp::Pos ? "+" : "~";
        expr(*u.operand, PUnary);
        return;
      }
      case ExprKind::Binary: {
        auto& b = static_cast<const Binary&>(e);
        int p = binaryPrec(b.op);
        // ** is right-associative; everything else left-associative.
        bool right = b.op == BinaryOp::Pow;
        expr(*b.lhs, right ? p + 1 : p);
        out += std::string(" ") + spelling(b.op) + " ";
        expr(*b.rhs, right ? p : p + 1);
        return;
      }
      case ExprKind::Compare: {
        auto& c = static_cast<const Compare&>(e);
        expr(*c.operands[0], PCompare + 1);
        for (size_t i = 0; i < c.ops.size(); ++i) {
          out += std::string(" ") + spelling(c.ops[i]) + " ";
          expr(*c.operands[i + 1], PCompare + 1);
        }
        return;
      }
      case ExprKind::Logical: {
        auto& l = static_cast<const Logical&>(e);
        int p = l.isAnd ? PAnd : POr;
        expr(*l.lhs, p);
        out += l.isAnd ? " and " : " or ";
        expr(*l.rhs, p + 1);
        return;
      }
      case ExprKind::Not:
        out += "not ";
        expr(*static_cast<const Not&>(e).operand, PNot);
        return;
      case ExprKind::Select: {
        auto& s = static_cast<const Select&>(e);
        expr(*s.trueValue, PSelect + 1);
        out += " if ";
        expr(*s.cond, PSelect + 1);
        out += " else ";
        expr(*s.falseValue, PSelect);
        return;
      }
      case ExprKind::Call: {
        auto& c = static_cast<const Call&>(e);
        size_t first = 0;
        if (c.isMethod && !c.args.empty()) {
          expr(*c.args[0], PAtom);
          out += ".";
          first = 1;
        }
        out += c.callee + "(";
        for (size_t i = first; i < c.args.size(); ++i) {
          if (i > first) out += ", ";
          expr(*c.args[i]);
        }
        for (size_t i = 0; i < c.keywords.size(); ++i) {
          if (i || c.args.size() > first) out += ", ";
          out += c.keywords[i].name + "=";
          expr(*c.keywords[i].value);
        }
        out += ")";
        return;
      }
      case ExprKind::Index: {
        auto& x = static_cast<const Index&>(e);
        expr(*x.base, PAtom);
        out += "[";
        list(x.indices);
        out += "]";
        return;
      }
      case ExprKind::Attribute: {
        auto& a = static_cast<const Attribute&>(e);
        expr(*a.base, PAtom);
        out += "." + a.name;
        return;
      }
      case ExprKind::Cast:
        out += static_cast<const Cast&>(e).target.str() + "(";
        expr(*static_cast<const Cast&>(e).operand);
        out += ")";
        return;
      case ExprKind::TupleLit: {
        auto& t = static_cast<const TupleLit&>(e);
        out += t.isList ? "[" : "(";
        list(t.elems);
        if (!t.isList && t.elems.size() == 1) out += ",";
        out += t.isList ? "]" : ")";
        return;
      }
      case ExprKind::Slice: {
        auto& sl = static_cast<const Slice&>(e);
        if (sl.start) expr(*sl.start);
        out += ":";
        if (sl.stop) expr(*sl.stop);
        if (sl.step) {
          out += ":";
          expr(*sl.step);
        }
        return;
      }
      case ExprKind::DictLit: {
        auto& d = static_cast<const DictLit&>(e);
        out += "{";
        for (size_t i = 0; i < d.keys.size(); ++i) {
          if (i) out += ", ";
          expr(*d.keys[i]);
          out += ": ";
          expr(*d.values[i]);
        }
        out += "}";
        return;
      }
    }
  }

  void stmt(const Stmt& s, int depth) {
    switch (s.kind) {
      case StmtKind::Block:
        block(static_cast<const Block&>(s), depth);
        return;
      case StmtKind::Assign: {
        auto& a = static_cast<const Assign&>(s);
        indent(depth);
        list(a.targets);
        if (!a.declared.isUnknown()) out += ": " + a.declared.str();
        if (a.value) {
          out += " = ";
          if (auto* t = dyn_cast<TupleLit>(a.value.get()); t && !t->isList && a.targets.size() > 1)
            list(t->elems);  // `a, b = b, a` rather than `a, b = (b, a)`
          else
            expr(*a.value);
        }
        out += "\n";
        return;
      }
      case StmtKind::ExprStmt:
        indent(depth);
        expr(*static_cast<const ExprStmt&>(s).expr);
        out += "\n";
        return;
      case StmtKind::If: {
        auto& i = static_cast<const If&>(s);
        indent(depth);
        out += "if ";
        ifChain(i, depth);
        return;
      }
      case StmtKind::While: {
        auto& w = static_cast<const While&>(s);
        indent(depth);
        out += "while ";
        expr(*w.cond);
        out += ":\n";
        block(*w.body, depth + 1);
        return;
      }
      case StmtKind::For: {
        auto& f = static_cast<const For&>(s);
        indent(depth);
        out += (f.parallel ? "pfor " : "for ") + f.var + " in ";
        if (f.isRange) {
          out += "range(";
          expr(*f.start);
          out += ", ";
          expr(*f.stop);
          out += ", ";
          expr(*f.step);
          out += ")";
        } else {
          expr(*f.iterable);
        }
        out += ":\n";
        block(*f.body, depth + 1);
        return;
      }
      case StmtKind::Return: {
        indent(depth);
        out += "return";
        if (auto& v = static_cast<const Return&>(s).value) {
          out += " ";
          expr(*v);
        }
        out += "\n";
        return;
      }
      case StmtKind::Break: indent(depth); out += "break\n"; return;
      case StmtKind::Continue: indent(depth); out += "continue\n"; return;
      case StmtKind::Pass: indent(depth); out += "pass\n"; return;
      case StmtKind::Task: {
        auto& t = static_cast<const Task&>(s);
        indent(depth);
        out += t.taskKind == TaskKind::Async ? "async:\n" : t.taskKind == TaskKind::Finish ? "finish:\n" : "isolated:\n";
        block(*t.body, depth + 1);
        return;
      }
    }
  }

  // Prints `cond:` and the rest of an if statement, folding an else block
  // that holds a single If back into `elif`.
  void ifChain(const If& i, int depth) {
    expr(*i.cond);
    out += ":\n";
    block(*i.thenBody, depth + 1);
    if (!i.elseBody) return;
    if (i.elseBody->stmts.size() == 1) {
      if (auto* elif = dyn_cast<If>(i.elseBody->stmts[0].get())) {
        indent(depth);
        out += "elif ";
        ifChain(*elif, depth);
        return;
      }
    }
    indent(depth);
    out += "else:\n";
    block(*i.elseBody, depth + 1);
  }
};

}  // namespace

std::string formatFloatLiteral(double v) {
  if (std::isnan(v)) return "float64(\"nan\")";
  if (std::isinf(v)) return v > 0 ? "1e999" : "-1e999";
  char buf[40];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string formatImaginaryLiteral(double v) {
  // Not written in source (no literal is NaN); inf is 1e999j, as Python reads it.
  if (std::isnan(v)) return "complex(0.0, float64(\"nan\"))";
  std::string s = formatFloatLiteral(v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s + "j";
}

std::string printExpr(const Expr& e) {
  Printer p;
  p.expr(e);
  return p.out;
}

std::string printFunction(const Function& f) {
  Printer p;
  p.function(f);
  return p.out;
}

std::string printSignature(const Function& f, bool asWritten) {
  auto typeOf = [&](const Type& t, bool anyRank) {
    return asWritten && anyRank ? Type::array(t.elem(), 0).str() : t.str();
  };
  std::string s = (asWritten ? f.sourceName() : f.name) + "(";
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Param& p = f.params[i];
    s += (i ? ", " : "") + p.name + ": " + typeOf(p.type, p.anyRank);
    if (!p.defaultValue.empty()) s += " = " + p.defaultValue;
  }
  s += ")";
  // An instance's inferred result may differ between instances: the
  // generic function has no return annotation.
  const bool inferred = asWritten && !f.generic.empty() && f.inferReturn && !f.returnAnyRank;
  if (!f.returnType.isVoid() && !inferred) s += " -> " + typeOf(f.returnType, f.returnAnyRank);
  return s;
}

std::string describeInstance(const Function& f) {
  std::string s = printSignature(f, true) + " for ";
  bool first = true;
  for (auto& p : f.params)
    if (p.anyRank) s += (first ? "" : ", ") + p.name + ": " + p.type.str(), first = false;
  return s;
}

std::string printModule(const Module& m) {
  std::string out = "from pydd import *\n";
  for (auto& f : m.functions) out += "\n\n" + printFunction(*f);
  return out;
}

}  // namespace pydd
