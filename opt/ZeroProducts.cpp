#include "opt/ZeroProducts.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "ir/Builder.h"
#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/ElementTree.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Interval {
  double lo, hi;
};

/// A literal's value as a float64 (a weak literal, possibly negated or cast).
bool literalValue(const Expr& e, double& value) {
  if (auto* f = dyn_cast<FloatLit>(&e)) {
    value = f->value;
    return !f->imaginary;
  }
  if (auto* i = dyn_cast<IntLit>(&e)) {
    value = double(i->value);
    return true;
  }
  if (auto* u = dyn_cast<Unary>(&e)) {
    if (u->op == UnaryOp::Invert || !literalValue(*u->operand, value)) return false;
    if (u->op == UnaryOp::Neg) value = -value;
    return true;
  }
  if (auto* c = dyn_cast<Cast>(&e)) return c->type.isFloat() && literalValue(*c->operand, value);
  return false;
}

bool isFloat64(const Type& t) { return t == Type::float64(); }

/// The function a node applies, when it is a catalog RealFunction (an
/// element-wise call, or an operator on scalars: the same arithmetic).
const RealFunction* realFunction(const Expr& e, std::vector<const Expr*>& args) {
  if (auto* c = dyn_cast<Call>(&e)) {
    if (c->target != CallTarget::Library || !c->library->real || !c->keywords.empty()) return nullptr;
    for (auto& a : c->args) args.push_back(a.get());
    return c->library->real;
  }
  if (auto* b = dyn_cast<Binary>(&e)) {
    const char* name = elementwiseOperatorName(b->op);
    const LibraryFunction* f = name ? lookupLibraryFunction(name) : nullptr;
    if (!f || !f->real) return nullptr;
    args = {b->lhs.get(), b->rhs.get()};
    return f->real;
  }
  return nullptr;
}

/// An index made of variables and literals.
bool simpleIndex(const Expr& e) {
  if (isa<VarRef>(e) || isa<IntLit>(e)) return true;
  auto* b = dyn_cast<Binary>(&e);
  return b && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub) && simpleIndex(*b->lhs) && simpleIndex(*b->rhs);
}

/// A small scalar expression that evaluating again costs a few instructions
/// and changes nothing: variables, elements of named arrays at simple
/// indices (unchecked), and comparisons, logic, conversions and element-wise
/// functions of them that cannot raise and are not costly.
bool repeatable(const Expr& e, bool boundsCheck, unsigned& budget) {
  if (budget == 0 || !e.type.isScalar() || e.type.isComplex()) return false;
  --budget;
  bool ok = true;
  auto children = [&] {
    forEachChild(e, [&](const Expr& c) { ok = ok && repeatable(c, boundsCheck, budget); });
    return ok;
  };
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit:
    case ExprKind::Var: return true;
    case ExprKind::Index: {
      auto& x = cast<Index>(e);
      if (boundsCheck || !isa<VarRef>(*x.base) || !x.base->type.isArray()) return false;
      for (auto& i : x.indices)
        if (!simpleIndex(*i)) return false;
      return true;
    }
    case ExprKind::Unary:
    case ExprKind::Cast:
    case ExprKind::Compare:
    case ExprKind::Logical:
    case ExprKind::Not:
    case ExprKind::Select: return children();
    case ExprKind::Binary: {
      BinaryOp op = cast<Binary>(e).op;
      return (op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul) && children();
    }
    case ExprKind::Call: {
      auto& c = cast<Call>(e);
      if (c.target != CallTarget::Library || !c.library->element || (c.library->real && c.library->real->costly) ||
          (c.library->element->raisesOnIntegers && c.type.isInteger()))
        return false;
      return children();
    }
    default: return false;
  }
}
bool repeatable(const Expr& e, bool boundsCheck) {
  unsigned budget = 16;
  return repeatable(e, boundsCheck, budget);
}

/// `y` as a function of its one variable leaf.
class MonotoneTree {
 public:
  MonotoneTree(const Expr& y, bool boundsCheck) : Y(y) {
    Valid = isFloat64(y.type) && findLeaf(y, boundsCheck) && Leaf && Costly;
  }
  bool valid() const { return Valid; }
  const Expr& leaf() const { return *Leaf; }

  /// The values of y for v in `v`, or none when y may be NaN there or the
  /// tree is not monotone at these operands.
  std::optional<Interval> bound(Interval v) const { return bound(Y, v); }

 private:
  bool findLeaf(const Expr& e, bool boundsCheck) {
    double c;
    if (literalValue(e, c)) return true;
    if (auto* u = dyn_cast<Unary>(&e); u && u->op != UnaryOp::Invert && isFloat64(u->type))
      return findLeaf(*u->operand, boundsCheck);
    std::vector<const Expr*> args;
    if (const RealFunction* r = realFunction(e, args); r && isFloat64(e.type) && !args.empty() && args.size() <= 2) {
      Costly |= r->costly;
      for (const Expr* a : args)
        if (!findLeaf(*a, boundsCheck)) return false;
      return true;
    }
    if (Leaf || !isFloat64(e.type) || !repeatable(e, boundsCheck)) return false;
    Leaf = &e;
    return true;
  }

  std::optional<Interval> bound(const Expr& e, Interval v) const {
    if (&e == Leaf) return v;
    double c;
    if (literalValue(e, c)) return Interval{c, c};
    if (auto* u = dyn_cast<Unary>(&e)) {
      auto x = bound(*u->operand, v);
      if (x && u->op == UnaryOp::Neg) return Interval{-x->hi, -x->lo};
      return x;
    }
    std::vector<const Expr*> args;
    const RealFunction* r = realFunction(e, args);
    if (!r || !r->evaluate) return std::nullopt;
    std::vector<Interval> in;
    for (const Expr* a : args) {
      auto x = bound(*a, v);
      if (!x) return std::nullopt;
      in.push_back(*x);
    }
    // The operand that varies; the other one must be a single value.
    size_t k = in.size() == 2 && !reaches(*args[0]) ? 1 : 0;
    double fixed = in.size() == 2 ? in[1 - k].lo : 0.0;
    if (in.size() == 2 && in[1 - k].lo != in[1 - k].hi) return std::nullopt;
    RealFunction::Order order = k == 0 ? r->a : r->b;
    if (!reaches(*args[k])) order = RealFunction::Order::Increasing;  // a constant
    if (order == RealFunction::Order::BySignOfOther) {
      if (!(fixed > 0 || fixed < 0)) return std::nullopt;
      order = fixed > 0 ? RealFunction::Order::Increasing : RealFunction::Order::Decreasing;
    }
    if (order == RealFunction::Order::None) return std::nullopt;
    auto at = [&](double x) { return k == 0 ? r->evaluate(x, fixed) : r->evaluate(fixed, x); };
    Interval out{at(in[k].lo), at(in[k].hi)};
    if (order == RealFunction::Order::Decreasing) std::swap(out.lo, out.hi);
    for (unsigned i = 0; i < 2 * r->ulps; ++i) {
      out.lo = std::nextafter(out.lo, -kInf);
      out.hi = std::nextafter(out.hi, kInf);
    }
    if (std::isnan(out.lo) || std::isnan(out.hi) || out.lo > out.hi) return std::nullopt;
    return out;
  }

  /// Whether `e` contains the leaf.
  bool reaches(const Expr& e) const {
    if (&e == Leaf) return true;
    bool found = false;
    forEachChild(e, [&](const Expr& c) { found = found || reaches(c); });
    return found;
  }

  const Expr& Y;
  const Expr* Leaf = nullptr;
  bool Costly = false;
  bool Valid = false;
};

/// Doubles in order as integers (-0.0 and 0.0 alike), for bisection.
int64_t orderKey(double x) {
  int64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits >= 0 ? bits : std::numeric_limits<int64_t>::min() - bits;
}
double fromKey(int64_t key) {
  int64_t bits = key >= 0 ? key : std::numeric_limits<int64_t>::min() - key;
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

/// Points from -inf to inf, a decade apart, where the search starts.
const std::vector<double>& grid() {
  static const std::vector<double> points = [] {
    std::vector<double> up;
    for (int e = -307; e <= 308; ++e) up.push_back(std::pow(10.0, e));
    up.push_back(DBL_MAX);
    up.push_back(kInf);
    std::vector<double> all;
    for (auto it = up.rbegin(); it != up.rend(); ++it) all.push_back(-*it);
    all.push_back(0.0);
    all.insert(all.end(), up.begin(), up.end());
    return all;
  }();
  return points;
}

/// The widest [L, H] of v over which y is finite and of sign `sign`
/// (-1 or 1, never zero), or none.
std::optional<Interval> signedRange(const MonotoneTree& y, int sign) {
  auto holds = [&](Interval v) {
    auto out = y.bound(v);
    return out && std::isfinite(out->lo) && std::isfinite(out->hi) && (sign < 0 ? out->hi < 0 : out->lo > 0);
  };
  auto at = [&](double x) { return holds({x, x}); };
  const std::vector<double>& g = grid();
  size_t first = g.size(), last = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (at(g[i])) {
      if (first == g.size()) first = i;
      else if (last + 1 != i) return std::nullopt;  // two pieces: not monotone
      last = i;
    }
  if (first == g.size()) return std::nullopt;
  // The last point that holds, from `inside` (holds) toward `outside` (fails).
  auto edge = [&](double inside, double outside) {
    int64_t in = orderKey(inside), out = orderKey(outside);
    while (in - out > 1 || out - in > 1) {
      int64_t mid = in + (out - in) / 2;
      (at(fromKey(mid)) ? in : out) = mid;
    }
    return fromKey(in);
  };
  Interval range{first == 0 ? g[first] : edge(g[first], g[first - 1]),
                 last + 1 == g.size() ? g[last] : edge(g[last], g[last + 1])};
  if (!holds(range)) return std::nullopt;
  return range;
}

class Guard : public Mutator {
 public:
  explicit Guard(PassContext& ctx) : Ctx(ctx) {}
  using Mutator::mutate;

  ExprPtr mutate(ExprPtr e) override {
    mutateChildren(*e);
    if (!isFloat64(e->type)) return e;
    std::vector<ExprPtr*> operands;
    if (auto* c = dyn_cast<Call>(e.get())) {
      if (c->target != CallTarget::Library || !c->library->real || !c->library->real->zeroAnnihilates ||
          c->args.size() != 2)
        return e;
      operands = {&c->args[0], &c->args[1]};
    } else if (auto* b = dyn_cast<Binary>(e.get()); b && b->op == BinaryOp::Mul) {
      operands = {&b->lhs, &b->rhs};
    } else {
      return e;
    }
    for (int k = 0; k < 2; ++k)
      if (guard(*operands[1 - k], **operands[k])) break;
    return e;
  }

 private:
  /// Rewrites `y` (a factor of a product with `m`) to skip it where m is 0.
  bool guard(ExprPtr& y, const Expr& m) {
    bool check = Ctx.options.boundsCheck;
    const Type& mt = m.type;
    if (!(mt.isBool() || mt.isInteger() || mt.isFloat()) || !repeatable(m, check)) return false;
    MonotoneTree tree(*y, check);
    if (!tree.valid()) return false;
    bool guarded = false;
    for (int sign : {1, -1}) {
      auto range = signedRange(tree, sign);
      if (!range) continue;
      SourceLoc loc = y->loc;
      ExprPtr cond = build::compare(loc, CmpOp::Eq, cloneExpr(m), build::intLit(loc, 0));
      const Expr& v = tree.leaf();
      if (range->lo == -kInf && range->hi == kInf)
        cond = build::logicalAnd(loc, std::move(cond), build::compare(loc, CmpOp::Eq, cloneExpr(v), cloneExpr(v)));
      if (range->lo != -kInf)
        cond = build::logicalAnd(loc, std::move(cond),
                                 build::compare(loc, CmpOp::Ge, cloneExpr(v), build::floatLit(loc, range->lo)));
      if (range->hi != kInf)
        cond = build::logicalAnd(loc, std::move(cond),
                                 build::compare(loc, CmpOp::Le, cloneExpr(v), build::floatLit(loc, range->hi)));
      auto select = std::make_unique<Select>(loc, std::move(cond), build::floatLit(loc, double(sign)), std::move(y));
      select->type = Type::float64();
      y = std::move(select);
      guarded = true;
      // The second sign's test wraps the first's; the tree stays the one
      // the ranges were found for, now inside the select.
    }
    if (guarded) ++Ctx.stats["zeromul: products guarded"];
    return guarded;
  }

  PassContext& Ctx;
};

}  // namespace

void guardZeroProducts(Function& f, PassContext& context) {
  Guard guard(context);
  guard.mutate(*f.body);
}

}  // namespace pydd
