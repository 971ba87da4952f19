#include "opt/LICM.h"

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/Builder.h"
#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/ElementTree.h"
#include "opt/Loops.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// What a loop does that decides whether an expression in it is invariant.
struct LoopFacts {
  std::set<std::string> assigned;  // variables (the loop variable included)
  std::set<std::string> written;   // memory keys (opt/Effects.h)
  /// A reference could be copied so that two names or a container hold it.
  bool referencesEscape = false;

  bool writesMemoryOf(const Type& t) const {
    if (written.count("*")) return true;
    if (t.isSparse()) {
      // A sparse matrix may borrow any dense arrays (csr_to_spm).
      for (auto& k : written)
        if (k.rfind("elem:", 0) == 0) return true;
    }
    return written.count(memoryKey(t)) > 0;
  }
};

/// Worth a temporary: it calls something or computes a whole array.
/// `operandWorth`: whether one of e's operands is.
bool worthHoisting(const Expr& e, bool operandWorth) {
  switch (e.kind) {
    case ExprKind::Call: {
      auto& c = cast<Call>(e);
      if (c.type.isVoid()) return false;
      for (auto& a : c.args)
        if (a->kind == ExprKind::StrLit) return false;
      return c.target == CallTarget::Library;
    }
    case ExprKind::Index: return e.type.isArray();  // a view
    case ExprKind::Binary:
    case ExprKind::Unary:
    case ExprKind::Cast:
    case ExprKind::Compare:
    case ExprKind::Not:
    case ExprKind::Select: return operandWorth;
    default: return false;
  }
}

class LoopHoister {
 public:
  LoopHoister(Function& f, PassContext& ctx, Stmt& loop) : F(f), Ctx(ctx), Loop(loop) {
    Facts.assigned = assignedVars(loop);
    Facts.written = writtenElementTypes(loop);
    Facts.referencesEscape = mayCopyReferences(loop);
    Guard = loopEntryTest(loop, Ctx.options.boundsCheck);
  }

  /// Rewrites the loop's body, collecting what goes before the loop in
  /// `unguarded` and `guarded` (what needs the entry test `Guard`).
  void run() {
    Block& body = *(Loop.kind == StmtKind::For ? cast<For>(Loop).body : cast<While>(Loop).body);
    bool prefixOpen = true;
    for (auto& s : body.stmts) {
      bool seenRisk = !prefixOpen;
      scanStmt(*s, prefixOpen, seenRisk);
      if (exitsEarlyStmt(*s) || doesIO(*s) || stmtMayRaiseOrWrite(*s)) prefixOpen = false;
    }
  }

  std::vector<StmtPtr> unguarded, guarded;
  ExprPtr Guard;

 private:
  /// exitsEarly for one statement of the body.
  bool exitsEarlyStmt(const Stmt& s) {
    bool r = false;
    switch (s.kind) {
      case StmtKind::Break:
      case StmtKind::Continue:
      case StmtKind::Return: return true;
      default: break;
    }
    forEachPart(s, [](const Expr&) {}, [&](const Block& inner) { r = r || exitsEarly(inner); });
    return r;
  }

  bool stmtMayRaiseOrWrite(const Stmt& s) {
    bool risky = s.kind == StmtKind::Assign && cast<Assign>(s).targets.size() > 0 &&
                 cast<Assign>(s).targets[0]->kind == ExprKind::Index;
    std::function<void(const Stmt&)> walk = [&](const Stmt& st) {
      forEachPart(st, [&](const Expr& e) {
        risky = risky || mayRaise(e, Ctx.options.boundsCheck) || hasSideEffects(e);
      }, [&](const Block& b) { for (auto& c : b.stmts) walk(*c); });
    };
    walk(s);
    return risky;
  }

  /// What the scan asks of an expression, for it and everything below it.
  /// Computed bottom-up once per node (asking each node's subtree anew was
  /// quadratic in an expression's depth) and dropped for the nodes above a
  /// hoist, whose subtrees it changed.
  struct Summary {
    bool sideEffects = false, raises = false, allocates = false;
    bool worth = false;  // worthHoisting
    /// Reads a variable the loop assigns (or one that is not a local).
    bool variantRead = false;
    /// Reads the memory of a reference the loop may write: a variable read
    /// anywhere but in the arguments of shape and memory queries (an
    /// array's shape never changes in place).
    bool variantMemory = false;
  };

  const Summary& summary(const Expr& e) {
    if (auto it = Summaries.find(&e); it != Summaries.end()) return it->second;
    Summary s;
    bool operandWorth = false;
    const bool shapeQuery = isa<Call>(e) && cast<Call>(e).library && cast<Call>(e).library->raisesOnlyOnAxis;
    forEachChild(e, [&](const Expr& c) {
      const Summary& o = summary(c);
      s.sideEffects |= o.sideEffects;
      s.raises |= o.raises;
      s.allocates |= o.allocates;
      s.variantRead |= o.variantRead;
      if (!shapeQuery) s.variantMemory |= o.variantMemory;
      operandWorth |= o.worth;
    });
    s.sideEffects |= nodeHasSideEffects(e);
    s.raises |= nodeMayRaise(e, Ctx.options.boundsCheck);
    s.allocates |= nodeMayAllocate(e);
    s.worth = worthHoisting(e, operandWorth);
    if (auto* v = dyn_cast<VarRef>(&e)) {
      const Type* t = F.lookup(v->name);
      s.variantRead = !t || Facts.assigned.count(v->name);
      s.variantMemory = t && holdsReference(*t) && Facts.writesMemoryOf(*t);
    }
    return Summaries[&e] = s;
  }

  /// A new array that nothing else refers to: an allocation, an element-wise
  /// result, or a catalog function's new array (LibraryFunction::returnsNew).
  static bool freshArray(const Expr& e) {
    auto* c = dyn_cast<Call>(&e);
    if (!c || c->target != CallTarget::Library || !e.type.isArray()) return false;
    return c->library->returnsNew || c->library->newArray != LibraryFunction::NewArray::No || isElementwiseArrayCall(e);
  }

  /// `elementwiseOperand`: e is an operand of an element-wise call, which
  /// reads it and neither writes it nor hands out a view of it.
  bool invariant(const Expr& e, bool elementwiseOperand) {
    const Summary& s = summary(e);
    if (s.sideEffects || s.variantRead || s.variantMemory) return false;
    // A fresh array read only as an element-wise operand is referred to by
    // the temporary alone, which the loop only reads: no write in the loop
    // can reach it, whatever memory of its type the loop writes.
    if (elementwiseOperand && freshArray(e)) return true;
    if (holdsReference(e.type) && (Facts.referencesEscape || Facts.writesMemoryOf(e.type))) return false;
    return true;
  }

  void scanStmt(Stmt& s, bool mustExec, bool& seenRisk) {
    switch (s.kind) {
      case StmtKind::Assign: {
        auto& a = cast<Assign>(s);
        if (a.value) scan(a.value, mustExec, seenRisk);
        for (auto& t : a.targets)
          if (auto* x = dyn_cast<Index>(t.get()))
            for (auto& i : x->indices) scan(i, mustExec, seenRisk);
        return;
      }
      case StmtKind::ExprStmt: return scan(cast<ExprStmt>(s).expr, mustExec, seenRisk);
      case StmtKind::Return:
        if (cast<Return>(s).value) scan(cast<Return>(s).value, mustExec, seenRisk);
        return;
      case StmtKind::If: {
        auto& i = cast<If>(s);
        scan(i.cond, mustExec, seenRisk);
        scanBlock(*i.thenBody);
        if (i.elseBody) scanBlock(*i.elseBody);
        return;
      }
      case StmtKind::For: {
        auto& f = cast<For>(s);
        if (f.isRange) {
          scan(f.start, mustExec, seenRisk);
          scan(f.stop, mustExec, seenRisk);
          scan(f.step, mustExec, seenRisk);
        } else {
          scan(f.iterable, mustExec, seenRisk);
        }
        scanBlock(*f.body);
        return;
      }
      case StmtKind::While: {
        auto& w = cast<While>(s);
        scan(w.cond, mustExec, seenRisk);
        scanBlock(*w.body);
        return;
      }
      case StmtKind::Task: return scanBlock(*cast<Task>(s).body);
      case StmtKind::Block: return scanBlock(cast<Block>(s));
      default: return;
    }
  }

  /// A nested block runs conditionally (or repeatedly): only expressions
  /// that can neither raise nor allocate move out of it.
  void scanBlock(Block& b) {
    for (auto& s : b.stmts) {
      bool risk = true;
      scanStmt(*s, false, risk);
    }
  }

  void scan(ExprPtr& slot, bool mustExec, bool& seenRisk, bool elementwiseOperand = false) {
    Expr& e = *slot;
    if (summary(e).worth && invariant(e, elementwiseOperand)) {
      bool risky = summary(e).raises || summary(e).allocates;
      if (!risky) return hoist(slot, unguarded);
      if (mustExec && !seenRisk && Guard) return hoist(slot, guarded);
    }
    Ancestors.push_back(&e);
    switch (e.kind) {
      case ExprKind::Logical: {
        auto& l = cast<Logical>(e);
        scan(l.lhs, mustExec, seenRisk);
        bool risk = true;
        scan(l.rhs, false, risk);
        break;
      }
      case ExprKind::Select: {
        auto& s = cast<Select>(e);
        scan(s.cond, mustExec, seenRisk);
        bool risk = true;
        scan(s.trueValue, false, risk);
        scan(s.falseValue, false, risk);
        break;
      }
      case ExprKind::Compare: {
        auto& c = cast<Compare>(e);
        for (size_t i = 0; i < c.operands.size(); ++i) {
          bool risk = true;
          scan(c.operands[i], mustExec && i < 2, i < 2 ? seenRisk : risk);
        }
        break;
      }
      default: {
        const bool operands = isElementwiseArrayCall(e);
        forEachChild(e, [&](ExprPtr& c) { scan(c, mustExec, seenRisk, operands); });
      }
    }
    Ancestors.pop_back();
    // What this node computes itself may raise or write: anything after it
    // in the iteration is no longer evaluated first.
    if (summary(*slot).raises || summary(*slot).sideEffects) seenRisk = true;
  }

  void hoist(ExprPtr& slot, std::vector<StmtPtr>& into) {
    // The expressions around the slot get a variable in its place.
    for (const Expr* a : Ancestors) Summaries.erase(a);
    into.push_back(Ctx.spill(F, slot, "inv"));
    ++Ctx.stats["licm: expressions hoisted"];
  }

  Function& F;
  PassContext& Ctx;
  Stmt& Loop;
  LoopFacts Facts;
  std::unordered_map<const Expr*, Summary> Summaries;
  std::vector<const Expr*> Ancestors;  // of the node scan() is at
};

class LICM : public StmtMutator {
 public:
  LICM(Function& f, PassContext& ctx) : F(f), Ctx(ctx) {}

  std::vector<StmtPtr> mutateStmt(StmtPtr s) override {
    mutateChildren(*s);  // inner loops first
    std::vector<StmtPtr> out;
    if (s->kind != StmtKind::For && s->kind != StmtKind::While) {
      out.push_back(std::move(s));
      return out;
    }
    LoopHoister hoister(F, Ctx, *s);
    hoister.run();
    for (auto& h : hoister.unguarded) out.push_back(std::move(h));
    if (hoister.guarded.empty()) {
      out.push_back(std::move(s));
      return out;
    }
    appendGuardedLoop(out, std::move(hoister.Guard), std::move(hoister.guarded), std::move(s));
    ++Ctx.stats["licm: loops guarded"];
    return out;
  }

 private:
  Function& F;
  PassContext& Ctx;
};

}  // namespace

void loopInvariantCodeMotion(Function& f, PassContext& context) {
  LICM licm(f, context);
  licm.mutateBlock(*f.body);
}

}  // namespace pydd
