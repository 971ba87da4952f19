// Reverse-mode differentiation as pydd source (see Gradient.h for the
// algorithm and what is not differentiated).
#include "frontend/Gradient.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "frontend/Parser.h"
#include "frontend/Sema.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "stdlib/Catalog.h"

namespace pydd {

std::string gradientName(const GradRequest& r) {
  std::string s = r.function + (r.withValue ? "__value_and_grad" : "__grad");
  for (size_t i = 0; i < r.argnums.size(); ++i) s += (i ? "_" : "") + std::to_string(r.argnums[i]);
  return s;
}

std::string gradientMarker(const GradRequest& r) { return "__pydd_grad__:" + gradientName(r); }

bool parseGradRequest(const std::string& text, bool withValue, GradRequest& out) {
  out = GradRequest();
  out.withValue = withValue;
  size_t colon = text.find(':');
  out.function = text.substr(0, colon);
  if (out.function.empty()) return false;
  if (colon == std::string::npos) {
    out.argnums = {0};
    return true;
  }
  std::stringstream ss(text.substr(colon + 1));
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return false;
    out.argnums.push_back(std::stoi(part));
  }
  return !out.argnums.empty();
}

namespace {

bool isFloatValue(const Type& t) { return (t.isScalar() || t.isArray()) && isFloatKind(t.elem()); }

/// The text of a typed zero of `t` (a local's value before the forward
/// sweep assigns it), or "" for types that are not initialized.
std::string zeroOf(const Type& t) {
  if (t.isScalar()) {
    if (t.isBool()) return "False";
    return std::string(scalarName(t.elem())) + "(0)";
  }
  if (t.isArray()) {
    std::string shape = "(";
    for (int i = 0; i < t.rank(); ++i) shape += i ? ", 0" : "0";
    shape += t.rank() == 1 ? ",)" : ")";
    return "zeros(" + shape + ", " + scalarName(t.elem()) + ")";
  }
  return "";
}

/// The identifiers in a line of pydd text.
std::vector<std::string> identifiers(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    unsigned char ch = text[i];
    if (std::isalpha(ch) || ch == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      bool attr = i > 0 && text[i - 1] == '.';
      if (!attr) out.push_back(text.substr(i, j - i));
      i = j;
    } else if (std::isdigit(ch)) {
      while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    } else {
      ++i;
    }
  }
  return out;
}

/// Replaces the identifiers a, b, c, g and r of a derivative formula.
std::string substitute(const std::string& formula, const std::map<std::string, std::string>& names) {
  std::string out;
  for (size_t i = 0; i < formula.size();) {
    char ch = formula[i];
    if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
      size_t j = i;
      while (j < formula.size() && (std::isalnum(static_cast<unsigned char>(formula[j])) || formula[j] == '_')) ++j;
      std::string id = formula.substr(i, j - i);
      bool attr = !out.empty() && out.back() == '.';
      auto it = names.find(id);
      out += (it != names.end() && !attr) ? "(" + it->second + ")" : id;
      i = j;
    } else {
      out += ch;
      ++i;
    }
  }
  return out;
}

/// The statements of a block as the generator sees them: an `if` whose
/// branch returns has the statements after it as its other branch.
struct Node {
  const Stmt* stmt = nullptr;
  std::vector<Node> then, otherwise;  // If only
  std::vector<Node> body;             // For, While
};
bool terminates(const std::vector<Node>& seq) {
  if (seq.empty()) return false;
  const Node& last = seq.back();
  if (isa<Return>(*last.stmt)) return true;
  if (isa<If>(*last.stmt)) return terminates(last.then) && terminates(last.otherwise);
  return false;
}

class Differentiator {
 public:
  Differentiator(const Function& f, const GradRequest& r, Diagnostics& diag) : F(f), R(r), Diag(diag) {}

  bool run(std::string& out);

 private:
  void error(SourceLoc loc, const std::string& message) {
    if (Failed) return;
    Failed = true;
    Diag.error(loc.line ? loc : F.loc, "cannot differentiate '" + F.sourceName() + "': " + message);
  }
  std::string fresh(const char* base) { return "_" + std::string(base) + std::to_string(Next++); }
  const Type* typeOf(const std::string& var) const { return F.lookup(var); }

  std::vector<Node> normalize(const Block& b, size_t from = 0);

  // Activity: float variables whose value depends on a differentiated argument.
  void findActive();
  bool mentionsActive(const Expr& e) const;
  bool isActive(const Expr& e) const { return isFloatValue(e.type) && mentionsActive(e); }

  std::string tape(const Type& t);
  /// Pushes (forward) or pops (reverse) the values statement `s`'s reverse
  /// reads of variables that change, so that it sees them as `s` did.
  void saveUses(const Stmt& s, int depth);
  void restoreUses(const Stmt& s, int depth);
  /// After generating `s`'s reverse from `mark` on (first round): what it reads.
  void recordUses(const Stmt& s, size_t mark);
  void countAssignments(const std::vector<Node>& seq, bool inLoop, std::map<std::string, int>& count);

  void forward(const std::vector<Node>& seq, int depth);
  void reverse(const std::vector<Node>& seq, int depth);
  void adjoint(const Expr& e, const std::string& g, int gRank, int depth);
  void accumulate(const std::string& target, const Type& targetType, std::string g, int gRank, int depth);
  void line(int depth, const std::string& text) { Body += std::string(4 * depth, ' ') + text + "\n"; }
  std::string& sweep() { return Body; }

  const Function& F;
  const GradRequest& R;
  Diagnostics& Diag;
  bool Failed = false;
  unsigned Next = 0;
  std::set<std::string> Active;
  std::set<std::string> Candidates;  // variables that change after their first value
  std::map<const Stmt*, std::vector<std::string>> Uses;
  bool Collecting = false;
  std::vector<std::string> ReverseLoopVars;  // set by the reverse loops around
  std::map<std::string, std::string> Tapes;  // type text -> tape name
  std::vector<std::string> LoopVars;         // per loop site, in order
  std::string Body;
  // Per loop and branch site, the names the forward sweep chose, which the
  // reverse sweep reuses (sites are visited in the same order).
  std::map<const Stmt*, std::string> SiteName;
};

std::vector<Node> Differentiator::normalize(const Block& b, size_t from) {
  std::vector<Node> seq;
  for (size_t i = from; i < b.stmts.size(); ++i) {
    const Stmt& s = *b.stmts[i];
    Node n;
    n.stmt = &s;
    if (auto* ifs = dyn_cast<If>(&s)) {
      n.then = normalize(*ifs->thenBody);
      if (ifs->elseBody) n.otherwise = normalize(*ifs->elseBody);
      bool rest = i + 1 < b.stmts.size();
      if (rest && terminates(n.then) && !terminates(n.otherwise)) {
        auto more = normalize(b, i + 1);
        n.otherwise.insert(n.otherwise.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
        seq.push_back(std::move(n));
        return seq;
      }
      if (rest && terminates(n.otherwise) && !terminates(n.then)) {
        auto more = normalize(b, i + 1);
        n.then.insert(n.then.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
        seq.push_back(std::move(n));
        return seq;
      }
    } else if (auto* fs = dyn_cast<For>(&s)) {
      n.body = normalize(*fs->body);
    } else if (auto* ws = dyn_cast<While>(&s)) {
      n.body = normalize(*ws->body);
    }
    seq.push_back(std::move(n));
    if (isa<Return>(s)) break;  // what follows a return never runs
  }
  return seq;
}

bool Differentiator::mentionsActive(const Expr& e) const {
  if (auto* v = dyn_cast<VarRef>(&e)) return Active.count(v->name) != 0;
  bool found = false;
  forEachChild(e, [&](const Expr& c) { found = found || mentionsActive(c); });
  return found;
}

void Differentiator::findActive() {
  for (int k : R.argnums) Active.insert(F.params[k].name);
  bool changed = true;
  std::function<void(const Block&)> walk = [&](const Block& b) {
    for (auto& s : b.stmts) {
      if (auto* a = dyn_cast<Assign>(s.get())) {
        if (!a->value || !mentionsActive(*a->value)) continue;
        for (auto& t : a->targets) {
          const Expr* base = t.get();
          while (auto* ix = dyn_cast<Index>(base)) base = ix->base.get();
          auto* v = dyn_cast<VarRef>(base);
          if (v && isFloatValue(*typeOf(v->name)) && Active.insert(v->name).second) changed = true;
        }
      }
      forEachPart(*s, [](const Expr&) {}, walk);
    }
  };
  while (changed) {
    changed = false;
    walk(*F.body);
  }
}

std::string Differentiator::tape(const Type& t) {
  std::string key = t.str();
  auto it = Tapes.find(key);
  if (it != Tapes.end()) return it->second;
  std::string name = "_tape" + std::to_string(Tapes.size());
  Tapes[key] = name;
  return name;
}

void Differentiator::countAssignments(const std::vector<Node>& seq, bool inLoop, std::map<std::string, int>& count) {
  for (const Node& n : seq) {
    if (auto* a = dyn_cast<Assign>(n.stmt)) {
      for (auto& t : a->targets)
        if (auto* v = dyn_cast<VarRef>(t.get())) count[v->name] += inLoop ? 2 : 1;
    } else if (auto* fs = dyn_cast<For>(n.stmt)) {
      count[fs->var] += 2;
      countAssignments(n.body, true, count);
    } else if (isa<While>(*n.stmt)) {
      countAssignments(n.body, true, count);
    } else if (isa<If>(*n.stmt)) {
      countAssignments(n.then, inLoop, count);
      countAssignments(n.otherwise, inLoop, count);
    }
  }
}

/// The forward sweep: f's statements, with the old value of what each
/// overwrites pushed first, the branch taken and each loop's bounds and
/// trip count recorded.
void Differentiator::forward(const std::vector<Node>& seq, int depth) {
  for (const Node& n : seq) {
    const Stmt& s = *n.stmt;
    if (Failed) return;
    if (auto* a = dyn_cast<Assign>(&s)) {
      if (!a->value) continue;  // a declaration: every local starts typed
      saveUses(s, depth);
      for (auto& t : a->targets) {
        if (isa<VarRef>(*t)) {
        } else if (auto* ix = dyn_cast<Index>(t.get())) {
          if (!isa<VarRef>(*ix->base)) return error(t->loc, "a store through a nested subscript");
          std::string old = printExpr(*t);
          line(depth, tape(t->type) + ".append(" + (t->type.isArray() ? "copy(" + old + ")" : old) + ")");
        } else {
          return error(t->loc, "an assignment to this target");
        }
      }
      if (a->targets.size() > 1 && isActive(*a->value))
        return error(a->value->loc, "a tuple assignment of a differentiated value");
      std::string targets;
      for (size_t i = 0; i < a->targets.size(); ++i) targets += (i ? ", " : "") + printExpr(*a->targets[i]);
      line(depth, targets + " = " + printExpr(*a->value));
    } else if (auto* r = dyn_cast<Return>(&s)) {
      if (depth > 1 && !LoopVars.empty()) return error(s.loc, "a return inside a loop");
      if (!r->value) return error(s.loc, "a return without a value");
      saveUses(s, depth);
      line(depth, "_res = " + printExpr(*r->value));
    } else if (auto* ifs = dyn_cast<If>(&s)) {
      line(depth, "if " + printExpr(*ifs->cond) + ":");
      line(depth + 1, tape(Type::int64()) + ".append(1)");
      forward(n.then, depth + 1);
      line(depth, "else:");
      line(depth + 1, tape(Type::int64()) + ".append(0)");
      forward(n.otherwise, depth + 1);
    } else if (auto* fs = dyn_cast<For>(&s)) {
      if (!fs->isRange) return error(s.loc, "a loop over an array's elements (write it over range(len(a)))");
      std::string site = std::to_string(Next++);
      SiteName[&s] = site;
      std::string lo = "_lo" + site, st = "_st" + site, cnt = "_n" + site;
      LoopVars.push_back(fs->var);
      line(depth, tape(*typeOf(fs->var)) + ".append(" + fs->var + ")");
      line(depth, lo + " = int64(" + printExpr(*fs->start) + ")");
      line(depth, st + " = int64(" + printExpr(*fs->step) + ")");
      line(depth, cnt + " = 0");
      // pfor runs serially: the tape orders the iterations.
      line(depth, "for " + fs->var + " in range(" + lo + ", " + printExpr(*fs->stop) + ", " + st + "):");
      line(depth + 1, cnt + " = " + cnt + " + 1");
      forward(n.body, depth + 1);
      line(depth, tape(Type::int64()) + ".append(" + lo + ")");
      line(depth, tape(Type::int64()) + ".append(" + st + ")");
      line(depth, tape(Type::int64()) + ".append(" + cnt + ")");
      LoopVars.pop_back();
    } else if (auto* ws = dyn_cast<While>(&s)) {
      std::string site = std::to_string(Next++);
      SiteName[&s] = site;
      std::string cnt = "_n" + site;
      LoopVars.push_back("");
      line(depth, cnt + " = 0");
      line(depth, "while " + printExpr(*ws->cond) + ":");
      line(depth + 1, cnt + " = " + cnt + " + 1");
      forward(n.body, depth + 1);
      line(depth, tape(Type::int64()) + ".append(" + cnt + ")");
      LoopVars.pop_back();
    } else if (isa<Pass>(s)) {
    } else if (auto* es = dyn_cast<ExprStmt>(&s)) {
      auto* c = dyn_cast<Call>(es->expr.get());
      if (c && c->library && c->library->io) return error(s.loc, "a call that prints or reads the clock (" + c->callee + ")");
      return error(s.loc, "a statement with effects");
    } else if (isa<Break>(s) || isa<Continue>(s)) {
      return error(s.loc, std::string(isa<Break>(s) ? "break" : "continue") + " in a loop");
    } else {
      return error(s.loc, "this statement");
    }
  }
}

void Differentiator::saveUses(const Stmt& s, int depth) {
  auto it = Uses.find(&s);
  if (it == Uses.end()) return;
  for (const std::string& u : it->second) line(depth, tape(*typeOf(u)) + ".append(" + u + ")");
}

void Differentiator::restoreUses(const Stmt& s, int depth) {
  auto it = Uses.find(&s);
  if (it == Uses.end()) return;
  for (auto u = it->second.rbegin(); u != it->second.rend(); ++u) line(depth, *u + " = " + tape(*typeOf(*u)) + ".pop()");
}

void Differentiator::recordUses(const Stmt& s, size_t mark) {
  if (!Collecting) return;
  std::set<std::string> read;
  for (const std::string& id : identifiers(Body.substr(mark))) read.insert(id);
  std::vector<std::string> uses;
  for (const std::string& v : read)
    if (Candidates.count(v) &&
        std::find(ReverseLoopVars.begin(), ReverseLoopVars.end(), v) == ReverseLoopVars.end())
      uses.push_back(v);
  if (!uses.empty()) Uses[&s] = uses;
}

void Differentiator::accumulate(const std::string& target, const Type& t, std::string g, int gRank, int depth) {
  if (t.isScalar()) {
    if (gRank > 0) g = "sum(" + g + ")";
    line(depth, target + " = " + scalarName(t.elem()) + "(" + target + " + " + g + ")");
    return;
  }
  if (gRank > t.rank()) {
    std::string axes = "(";
    for (int i = 0; i < gRank - t.rank(); ++i) axes += std::to_string(i) + ", ";
    g = "sum(" + g + ", " + axes + "))";
  }
  // Broadcasting along an axis where the target has extent 1 (shape (1, n)
  // against (m, n)): the adjoint is summed along it, known only at run time.
  if (gRank < t.rank()) {  // a lower-rank adjoint broadcasts onto the target
    line(depth, target + " += " + g);
    return;
  }
  std::string u = fresh("u");
  line(depth, u + " = " + g);
  for (int k = 0; k < t.rank(); ++k) {
    std::string axis = std::to_string(k);
    line(depth, "if shape(" + target + ", " + axis + ") == 1 and shape(" + u + ", " + axis + ") != 1:");
    line(depth + 1, u + " = sum(" + u + ", axis=" + axis + ", keepdims=True)");
  }
  line(depth, target + " += " + u);
}

/// Adds the contribution of `e` to the adjoints of the variables it reads,
/// `g` holding the adjoint of e's value (of rank gRank).
void Differentiator::adjoint(const Expr& e, const std::string& g, int gRank, int depth) {
  if (Failed || !isActive(e)) return;
  if (auto* v = dyn_cast<VarRef>(&e)) return accumulate("_b_" + v->name, *typeOf(v->name), g, gRank, depth);
  if (auto* ix = dyn_cast<Index>(&e)) {
    auto* base = dyn_cast<VarRef>(ix->base.get());
    if (!base) return error(e.loc, "a subscript of a computed value (assign it to a variable first)");
    for (auto& i : ix->indices)
      if (i->type.isArray()) return error(i->loc, "a subscript by an index array or mask");
    std::string idx;
    for (size_t i = 0; i < ix->indices.size(); ++i) idx += (i ? ", " : "") + printExpr(*ix->indices[i]);
    return accumulate("_b_" + base->name + "[" + idx + "]", e.type, g, gRank, depth);
  }
  if (auto* c = dyn_cast<Cast>(&e)) return adjoint(*c->operand, g, gRank, depth);
  if (auto* u = dyn_cast<Unary>(&e)) {
    if (u->op == UnaryOp::Pos) return adjoint(*u->operand, g, gRank, depth);
    std::string t = fresh("t");
    line(depth, t + " = -" + g);
    return adjoint(*u->operand, t, gRank, depth);
  }
  if (auto* sel = dyn_cast<Select>(&e)) {
    line(depth, "if " + printExpr(*sel->cond) + ":");
    line(depth + 1, "pass");
    adjoint(*sel->trueValue, g, gRank, depth + 1);
    line(depth, "else:");
    line(depth + 1, "pass");
    adjoint(*sel->falseValue, g, gRank, depth + 1);
    return;
  }
  const LibraryFunction* fn = nullptr;
  std::vector<const Expr*> operands;
  if (auto* b = dyn_cast<Binary>(&e)) {
    const char* name = elementwiseOperatorName(b->op);
    fn = name ? lookupLibraryFunction(name) : nullptr;
    if (!fn) return error(e.loc, std::string("the operator ") + spelling(b->op));
    operands = {b->lhs.get(), b->rhs.get()};
  } else if (auto* c = dyn_cast<Call>(&e)) {
    if (c->target == CallTarget::User) return error(e.loc, "a call of the kernel '" + c->callee + "' (inline it)");
    fn = c->library;
    if (!fn) return error(e.loc, "this call");
    for (auto& a : c->args) operands.push_back(a.get());
  } else {
    return error(e.loc, std::string("this expression (") + kindName(e.kind) + ")");
  }
  const DerivativeRule* rule = fn->derivative;
  if (!rule) return error(e.loc, std::string(fn->name) + "() has no derivative");
  if (rule->zero) return;
  std::map<std::string, std::string> names{{"g", g}};
  const char* letters[] = {"a", "b", "c"};
  for (size_t i = 0; i < operands.size() && i < 3; ++i) names[letters[i]] = printExpr(*operands[i]);
  bool elementwise = fn->category == LibraryCategory::Elementwise || fn->element;
  std::string r;  // the call's value, computed once when a formula needs it
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!isActive(*operands[i])) continue;
    std::string formula;
    if (rule->custom && isa<Call>(e)) formula = rule->custom(cast<Call>(e), static_cast<unsigned>(i));
    else if (i < 2 && (i == 0 ? rule->da : rule->db)) formula = i == 0 ? rule->da : rule->db;
    if (formula.empty())
      return error(operands[i]->loc, std::string(fn->name) + "() has no derivative with respect to this operand");
    auto ids = identifiers(formula);
    if (r.empty() && std::find(ids.begin(), ids.end(), "r") != ids.end()) {
      r = fresh("r");
      line(depth, r + " = " + printExpr(e));
      names["r"] = r;
    }
    std::string t = fresh("t");
    line(depth, t + " = " + substitute(formula, names));
    int rank = elementwise ? (e.type.isArray() ? e.type.rank() : 0) : (operands[i]->type.isArray() ? operands[i]->type.rank() : 0);
    adjoint(*operands[i], t, rank, depth);
  }
}

/// The reverse sweep: the statements backwards, each popping what it
/// overwrote and passing its adjoint to its operands.
void Differentiator::reverse(const std::vector<Node>& seq, int depth) {
  line(depth, "pass");
  for (auto it = seq.rbegin(); it != seq.rend() && !Failed; ++it) {
    const Node& n = *it;
    const Stmt& s = *n.stmt;
    if (auto* a = dyn_cast<Assign>(&s)) {
      if (!a->value) continue;
      size_t mark = Body.size();
      restoreUses(s, depth);
      for (auto t = a->targets.rbegin(); t != a->targets.rend(); ++t)
        if (!isa<VarRef>(**t)) line(depth, printExpr(**t) + " = " + tape((*t)->type) + ".pop()");
      const Expr& target = *a->targets[0];
      const Expr* base = &target;
      while (auto* ix = dyn_cast<Index>(base)) base = ix->base.get();
      auto* bv = dyn_cast<VarRef>(base);
      if (a->targets.size() != 1 || !bv || !Active.count(bv->name)) {
        recordUses(s, mark);
        continue;
      }
      std::string shadow = "_b_" + bv->name;
      std::string gtext = shadow;
      if (auto* ix = dyn_cast<Index>(&target)) {
        std::string idx;
        for (size_t i = 0; i < ix->indices.size(); ++i) idx += (i ? ", " : "") + printExpr(*ix->indices[i]);
        gtext = shadow + "[" + idx + "]";
      }
      std::string t = fresh("t");
      if (target.type.isArray()) {
        line(depth, t + " = copy(" + gtext + ")");
        if (isa<Index>(target)) line(depth, gtext + " = " + scalarName(target.type.elem()) + "(0)");
        else line(depth, gtext + " = zeros_like(" + gtext + ")");
      } else {
        line(depth, t + " = " + gtext);
        line(depth, gtext + " = " + scalarName(target.type.elem()) + "(0)");
      }
      adjoint(*a->value, t, target.type.isArray() ? target.type.rank() : 0, depth);
      recordUses(s, mark);
    } else if (auto* r = dyn_cast<Return>(&s)) {
      size_t mark = Body.size();
      restoreUses(s, depth);
      adjoint(*r->value, "_b__res", 0, depth);
      recordUses(s, mark);
    } else if (isa<If>(s)) {
      line(depth, "if " + tape(Type::int64()) + ".pop() == 1:");
      reverse(n.then, depth + 1);
      line(depth, "else:");
      reverse(n.otherwise, depth + 1);
    } else if (auto* fs = dyn_cast<For>(&s)) {
      std::string site = SiteName[&s];
      std::string lo = "_lo" + site, st = "_st" + site, cnt = "_n" + site, k = "_k" + site;
      line(depth, cnt + " = " + tape(Type::int64()) + ".pop()");
      line(depth, st + " = " + tape(Type::int64()) + ".pop()");
      line(depth, lo + " = " + tape(Type::int64()) + ".pop()");
      line(depth, "for " + k + " in range(" + cnt + " - 1, -1, -1):");
      const Type& vt = *typeOf(fs->var);
      line(depth + 1, fs->var + " = " + scalarName(vt.elem()) + "(" + lo + " + " + k + " * " + st + ")");
      ReverseLoopVars.push_back(fs->var);
      reverse(n.body, depth + 1);
      ReverseLoopVars.pop_back();
      line(depth, fs->var + " = " + tape(vt) + ".pop()");
    } else if (isa<While>(s)) {
      std::string site = SiteName[&s];
      std::string cnt = "_n" + site, k = "_k" + site;
      line(depth, cnt + " = " + tape(Type::int64()) + ".pop()");
      line(depth, "for " + k + " in range(" + cnt + "):");
      reverse(n.body, depth + 1);
    }
  }
}

bool Differentiator::run(std::string& out) {
  for (auto& p : F.params)
    if (p.anyRank) {
      error(p.loc, "a parameter of any rank (give Array(T) its rank)");
      return false;
    }
  if (!F.returnType.isScalar() || !isFloatKind(F.returnType.elem())) {
    error(F.loc, "it returns " + F.returnType.str() + ", not a float scalar");
    return false;
  }
  for (int k : R.argnums) {
    if (k < 0 || k >= static_cast<int>(F.params.size())) {
      error(R.loc, "argnum " + std::to_string(k) + " is out of range for its " + std::to_string(F.params.size()) +
                       " parameters");
      return false;
    }
    if (!isFloatValue(F.params[k].type)) {
      error(F.params[k].loc, "parameter '" + F.params[k].name + "' is " + F.params[k].type.str() +
                                 ": only float scalars and arrays are differentiated");
      return false;
    }
  }
  findActive();
  std::vector<Node> seq = normalize(*F.body);
  std::map<std::string, int> count;
  for (auto& p : F.params) count[p.name] = 1;
  countAssignments(seq, false, count);
  for (auto& [name, c] : count) {
    const Type* t = typeOf(name);
    if (c > 1 && t && (t->isScalar() || t->isArray())) Candidates.insert(name);
  }

  // Generated twice (Enzyme's caching of the values an adjoint needs): the
  // first round finds which changing variables each statement's reverse
  // reads; the second pushes just those before the statement and pops them
  // before its reverse. A variable that only enters sums (`s = s + x[i]`),
  // or whose value a loop's reverse never reads, is never stored.
  std::string fwd, rev;
  for (int round = 0; round < 2; ++round) {
    Collecting = round == 0;
    Next = 0;
    Tapes.clear();
    SiteName.clear();
    Body.clear();
    forward(seq, 1);
    fwd = Body;
    Body.clear();
    // The adjoints start at zero; the result's at one.
    for (const std::string& v : Active) {
      const Type& t = *typeOf(v);
      line(1, "_b_" + v + " = " + (t.isArray() ? "zeros_like(" + v + ")" : std::string(scalarName(t.elem())) + "(0)"));
    }
    line(1, "_b__res = " + std::string(scalarName(F.returnType.elem())) + "(1)");
    reverse(seq, 1);
    rev = Body;
    if (Failed || Uses.empty()) break;
  }
  if (Failed) return false;

  std::string text = "def " + gradientName(R) + "(";
  for (size_t i = 0; i < F.params.size(); ++i) {
    const Param& p = F.params[i];
    text += (i ? ", " : "") + p.name + ": " + p.type.str();
    if (!p.defaultValue.empty()) text += " = " + p.defaultValue;
  }
  text += "):\n";
  for (auto& [type, name] : Tapes) text += "    " + name + ": List(" + type + ") = []\n";
  text += "    _res = " + zeroOf(F.returnType) + "\n";
  for (const Local& l : F.locals) {
    std::string z = zeroOf(l.type);
    if (!z.empty()) text += "    " + l.name + " = " + z + "\n";
  }
  text += fwd + rev;
  std::string grads;
  for (size_t i = 0; i < R.argnums.size(); ++i) grads += (i ? ", " : "") + ("_b_" + F.params[R.argnums[i]].name);
  if (R.argnums.size() > 1) grads = "(" + grads + ")";
  text += "    return " + (R.withValue ? "(_res, " + grads + ")" : grads) + "\n";
  out = text;
  return true;
}

/// Gradient calls the parser marked, renamed to their generated functions.
void collectMarkers(Module& m, std::vector<GradRequest>& requests) {
  std::function<void(Expr&)> onExpr = [&](Expr& e) {
    if (auto* c = dyn_cast<Call>(&e)) {
      static const std::string prefix = "__pydd_grad__:";
      if (c->callee.rfind(prefix, 0) == 0) {
        // f__grad0_1 / f__value_and_grad0
        std::string name = c->callee.substr(prefix.size());
        GradRequest r;
        r.loc = c->loc;
        size_t at = name.rfind("__value_and_grad");
        r.withValue = at != std::string::npos;
        if (!r.withValue) at = name.rfind("__grad");
        r.function = name.substr(0, at);
        std::stringstream ss(name.substr(at + (r.withValue ? 16 : 6)));
        std::string part;
        while (std::getline(ss, part, '_')) r.argnums.push_back(std::stoi(part));
        requests.push_back(r);
        c->callee = name;
      }
    }
    forEachChild(e, [&](ExprPtr& child) { onExpr(*child); });
  };
  std::function<void(Block&)> onBlock = [&](Block& b) {
    for (auto& s : b.stmts) forEachPart(*s, [&](ExprPtr& e) { onExpr(*e); }, onBlock);
  };
  for (auto& f : m.functions) onBlock(*f->body);
}

bool callsGradient(const Function& f) {
  bool found = false;
  std::function<void(const Expr&)> onExpr = [&](const Expr& e) {
    if (auto* c = dyn_cast<Call>(&e); c && c->callee.rfind("__pydd_grad__:", 0) == 0) found = true;
    forEachChild(e, onExpr);
  };
  std::function<void(const Block&)> onBlock = [&](const Block& b) {
    for (auto& s : b.stmts) forEachPart(*s, onExpr, onBlock);
  };
  onBlock(*f.body);
  return found;
}

}  // namespace

bool addGradients(Module& m, Diagnostics& diag, std::vector<GradRequest> requests) {
  collectMarkers(m, requests);
  if (requests.empty()) return true;
  // The functions to differentiate, typed: a copy of the module without the
  // functions that call gradients (those are not generated yet).
  Diagnostics quiet(diag.path(), llvm::MemoryBuffer::getMemBufferCopy(diag.source()));
  std::string sink;
  llvm::raw_string_ostream sinkStream(sink);
  quiet.setOutput(sinkStream);
  auto typed = parseModule(quiet, m.name);
  if (!typed) return true;  // sema of the module reports its errors
  std::vector<std::unique_ptr<Function>> kept;
  for (auto& f : typed->functions)
    if (!callsGradient(*f)) kept.push_back(std::move(f));
  typed->functions = std::move(kept);
  std::set<std::string> done;
  std::string generated;
  bool analyzed = false;
  bool ok = true;  // every request is tried, so that each reports its error
  for (const GradRequest& r : requests) {
    if (!done.insert(gradientName(r)).second) continue;
    if (!m.find(r.function)) {
      diag.error(r.loc, "grad() of '" + r.function + "', which is not a kernel of this file");
      ok = false;
      continue;
    }
    if (!typed->find(r.function)) {
      diag.error(r.loc, "'" + r.function + "' calls grad() itself, which is not differentiated");
      ok = false;
      continue;
    }
    // Sema reports errors in the functions themselves, located.
    if (!analyzed && !analyzeModule(*typed, diag)) return false;
    analyzed = true;
    Function* f = typed->find(r.function);
    std::string text;
    Differentiator d(*f, r, diag);
    if (!d.run(text)) {
      ok = false;
      continue;
    }
    generated += text + "\n";
  }
  if (!ok) return false;
  // The generated source, parsed as a module of its own.
  Diagnostics gen("<generated derivative>", llvm::MemoryBuffer::getMemBufferCopy(generated));
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  gen.setOutput(errorStream);
  auto extra = parseModule(gen, m.name);
  if (!extra) {
    diag.error(requests[0].loc, "internal error: the generated derivative does not parse:\n" + errorStream.str() + generated);
    return false;
  }
  for (auto& f : extra->functions) m.functions.push_back(std::move(f));
  return true;
}

}  // namespace pydd
