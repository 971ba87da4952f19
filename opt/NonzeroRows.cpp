#include "opt/NonzeroRows.h"

#include <map>
#include <set>

#include "ir/Builder.h"
#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/Loops.h"
#include "opt/PrivateArrays.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// The parts of a loop the rewrite keeps.
struct RowSum {
  const VarRef* matrix;      // S
  std::string row;           // r (S.nonzeros()) or i (S.row(i))
  const Assign* unpack;      // r, c, v = entry or c, v = entry
  const std::string* out;    // the array summed into
  const Expr* term;          // E
  Type elem;                 // out's element type
  /// The unpacking's targets for the column and the value.
  const Expr& col() const { return *unpack->targets[unpack->targets.size() - 2]; }
  const Expr& val() const { return *unpack->targets.back(); }
};

bool isVar(const Expr& e, const std::string& name) {
  auto* v = dyn_cast<VarRef>(&e);
  return v && v->name == name;
}

/// `base[at]` with base and at variables: base's name, else null.
const std::string* elementOf(const Expr& e, const std::string& at) {
  auto* x = dyn_cast<Index>(&e);
  if (!x || x->indices.size() != 1 || !isVar(*x->indices[0], at)) return nullptr;
  auto* base = dyn_cast<VarRef>(x->base.get());
  return base ? &base->name : nullptr;
}

/// Renames the variables of `e` that `names` maps.
void rename(Expr& e, const std::map<std::string, std::string>& names) {
  if (auto* v = dyn_cast<VarRef>(&e))
    if (auto it = names.find(v->name); it != names.end()) v->name = it->second;
  forEachChild(e, [&](ExprPtr& child) { rename(*child, names); });
}

class NonzeroRows {
 public:
  NonzeroRows(Function& f, PassContext& ctx) : F(f), Ctx(ctx), Private(privateArrays(f)) { counts.count(*f.body); }

  void run() {
    visitSequentialLoops(*F.body, [&](StmtPtr& s) {
      RowSum sum;
      if (!match(cast<For>(*s), sum)) return false;
      s = rewrite(std::move(s), sum);  // the loop as written is in its else
      ++Ctx.stats["nzrows: sums into out[r] run row by row with out[r] in a local"];
      return true;
    });
  }

 private:
  Function& F;
  PassContext& Ctx;
  std::map<std::string, PrivateArray> Private;
  VarCounts counts;

  /// The loop's entries: `for r, c, v in S.nonzeros()`, or `for i in
  /// range(0, shape(S, 0), 1)` whose body is only `for c, v in S.row(i)`.
  /// Sets sum's matrix, row and unpacking, `names` to the variables the
  /// loops bind and `body` to the innermost body (unpacking, update).
  bool entries(const For& f, RowSum& sum, std::set<std::string>& names, const Block*& body) {
    const For* inner = &f;
    size_t targets = 3;
    const VarRef* rowsOf = nullptr;  // S, when f counts S's rows
    if (f.isRange) {
      rowsOf = rowsLoopMatrix(f);
      if (f.parallel || !rowsOf || f.body->stmts.size() != 1 || *F.lookup(f.var) != Type::int64()) return false;
      inner = dyn_cast<For>(f.body->stmts[0].get());
      if (!inner || inner->isRange) return false;
      names.insert(f.var);
      sum.row = f.var;
      targets = 2;
    }
    auto* call = dyn_cast<Call>(inner->iterable.get());
    const SparseAccess access = targets == 3 ? SparseAccess::NonZeros : SparseAccess::Rows;
    if (inner->parallel || !call || !call->library || !call->library->yieldsEntries ||
        call->library->sparseAccess != access || inner->body->stmts.size() != 2)
      return false;
    sum.matrix = dyn_cast<VarRef>(call->args[0].get());
    if (!sum.matrix) return false;
    // S.row(i) of the S whose rows the outer loop counts
    if (rowsOf && (rowsOf->name != sum.matrix->name || !isVar(*call->args[1], f.var))) return false;
    // r, c, v = entry (or c, v = entry)
    sum.unpack = dyn_cast<Assign>(inner->body->stmts[0].get());
    if (!sum.unpack || !sum.unpack->value || sum.unpack->targets.size() != targets ||
        !isVar(*sum.unpack->value, inner->var))
      return false;
    for (auto& t : sum.unpack->targets) {
      auto* v = dyn_cast<VarRef>(t.get());
      if (!v || !names.insert(v->name).second) return false;
    }
    if (targets == 3) {
      sum.row = cast<VarRef>(*sum.unpack->targets[0]).name;
      if (sum.unpack->targets[0]->type != Type::int64()) return false;
    }
    names.insert(inner->var);
    body = inner->body.get();
    return true;
  }

  bool match(const For& f, RowSum& sum) {
    std::set<std::string> names;
    const Block* body = nullptr;
    if (!entries(f, sum, names, body)) return false;
    const std::string& r = sum.row;
    const std::string& entry = f.isRange ? cast<For>(*f.body->stmts[0]).var : f.var;
    // out[r] = out[r] + E
    auto* update = dyn_cast<Assign>(body->stmts[1].get());
    if (!update || !update->value || update->targets.size() != 1) return false;
    sum.out = elementOf(*update->targets[0], r);
    auto* add = dyn_cast<Binary>(update->value.get());
    if (!sum.out || !add || add->op != BinaryOp::Add) return false;
    const std::string* read = elementOf(*add->lhs, r);
    if (!read || *read != *sum.out) return false;
    sum.term = add->rhs.get();
    auto priv = Private.find(*sum.out);
    const Type* outType = F.lookup(*sum.out);
    if (priv == Private.end() || !outType || !outType->isArray() || outType->rank() != 1) return false;
    switch (outType->elem()) {
      case ScalarKind::Int32:
      case ScalarKind::Int64:
      case ScalarKind::Float32:
      case ScalarKind::Float64: break;
      default: return false;
    }
    sum.elem = Type::scalar(outType->elem());
    if (add->lhs->type != sum.elem || sum.term->type != sum.elem || add->type != sum.elem) return false;
    std::set<std::string> outMemory = priv->second.views;
    outMemory.insert(*sum.out);
    // E reads the entry only through r, c and v: the row loop binds a
    // tuple of its own.
    if (hasSideEffects(*sum.term) || mentions(*sum.term, outMemory) || mentions(*sum.term, {entry})) return false;
    // Each bound once (by the loops) and read only inside them.
    VarCounts inside;
    inside.count(f);
    for (const std::string& n : names)
      if (counts.binds[n] != 1 || counts.reads[n] != inside.reads[n]) return false;
    return !names.count(sum.matrix->name) && !names.count(*sum.out);
  }

  /// `if shape(out, 0) >= shape(S, 0): <row by row> else: original`.
  StmtPtr rewrite(StmtPtr original, const RowSum& sum) {
    const For& f = cast<For>(*original);
    const SourceLoc loc = f.loc;
    const Type i64 = Type::int64();
    const LibraryFunction* shape = lookupLibraryFunction("shape");
    const LibraryFunction* row = lookupLibraryFunction("row");
    const Type& sparse = sum.matrix->type;
    const Type outType = *F.lookup(*sum.out);  // a copy: newLocal below grows F.locals
    // The row loop binds variables of its own, so that the loop as written
    // keeps its r, c and v: each loop's variables are then bound and read
    // in it alone (which opt/PairedRows.h asks of the row loop).
    std::map<std::string, std::string> renamed;
    renamed[sum.row] = Ctx.newLocal(F, sum.row, i64, loc);
    for (const Expr* t : {&sum.col(), &sum.val()}) {
      const auto& v = cast<VarRef>(*t);
      renamed[v.name] = Ctx.newLocal(F, v.name, v.type, loc);
    }
    const std::string& r = renamed[sum.row];
    const Type entryType = Type::tuple({i64, Type::scalar(sparse.elem())});  // what S.row(r) yields
    const std::string acc = Ctx.newLocal(F, "acc", sum.elem, loc), entry = Ctx.newLocal(F, "entry", entryType, loc);
    auto shapeOf = [&](const std::string& name, const Type& t) {
      std::vector<ExprPtr> args;
      args.push_back(build::var(loc, name, t));
      args.push_back(build::intLit(loc, 0));
      return build::libraryCall(loc, shape, "shape", std::move(args), i64);
    };
    auto element = [&] {
      std::vector<ExprPtr> at;
      at.push_back(build::var(loc, r, i64));
      return build::index(loc, build::var(loc, *sum.out, outType), std::move(at), sum.elem);
    };

    // for c, v in S.row(r): acc = acc + E
    auto inner = std::make_unique<For>(loc);
    inner->var = entry;
    inner->varLoc = loc;
    inner->isRange = false;
    std::vector<ExprPtr> rowArgs;
    rowArgs.push_back(build::var(loc, sum.matrix->name, sparse));
    rowArgs.push_back(build::var(loc, r, i64));
    inner->iterable = build::libraryCall(loc, row, "row", std::move(rowArgs), Type::list(entryType));
    auto unpack = std::make_unique<Assign>(sum.unpack->loc);
    for (const Expr* t : {&sum.col(), &sum.val()}) {
      unpack->targets.push_back(cloneExpr(*t));
      rename(*unpack->targets.back(), renamed);
    }
    ExprPtr term = cloneExpr(*sum.term);
    rename(*term, renamed);
    unpack->value = build::var(loc, entry, entryType);
    std::vector<StmtPtr> entryBody;
    entryBody.push_back(std::move(unpack));
    entryBody.push_back(build::assign(loc, build::var(loc, acc, sum.elem),
                                      build::binary(loc, BinaryOp::Add, build::var(loc, acc, sum.elem),
                                                    std::move(term), sum.elem)));
    inner->body = build::block(loc, std::move(entryBody));

    // for r in range(0, shape(S, 0)): acc = out[r]; <inner>; out[r] = acc
    std::vector<StmtPtr> rowBody;
    rowBody.push_back(build::assign(loc, build::var(loc, acc, sum.elem), element()));
    rowBody.push_back(std::move(inner));
    rowBody.push_back(build::assign(loc, element(), build::var(loc, acc, sum.elem)));
    std::vector<StmtPtr> rows;
    // Over shape(S, 0) itself: code generation then knows r is a row of S
    // (no check per row) and runs the rows in strips.
    rows.push_back(build::rangeLoop(loc, r, build::intLit(loc, 0), shapeOf(sum.matrix->name, sparse), std::move(rowBody)));

    std::vector<StmtPtr> asWritten;
    asWritten.push_back(std::move(original));
    StmtPtr guarded = build::ifThen(
        loc, build::compare(loc, CmpOp::Ge, shapeOf(*sum.out, outType), shapeOf(sum.matrix->name, sparse)),
        std::move(rows), std::move(asWritten));
    cast<If>(*guarded).rareElse = true;
    return guarded;
  }
};

}  // namespace

void sumNonzeroRows(Function& f, PassContext& context) { NonzeroRows(f, context).run(); }

}  // namespace pydd
