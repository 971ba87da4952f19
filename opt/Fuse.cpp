#include "opt/Fuse.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/Builder.h"
#include "ir/Visitor.h"
#include "opt/ArrayExtents.h"
#include "opt/Effects.h"
#include "opt/ElementTree.h"
#include "opt/Loops.h"
#include "opt/PrivateArrays.h"
#include "opt/ValueRanges.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// An array operand of the fused loop, read element by element.
struct ArrayOperand {
  std::string var;                    // an array variable (the source's or a temporary)
  Type type;                          // of the variable
  std::vector<std::string> leading;   // integer indices of a folded view `var[i, ...]`
  std::vector<bool> leadingNonNegative;  // each surely >= 0 (ValueRanges): no lower-bound test
  bool spilledFromDest = false;       // a temporary computed from an expression naming the destination
  std::vector<const Expr*> sources;   // what those indices were in the source
  int rank = 0;                       // of the operand as the tree sees it
  std::optional<ArrayExtents::Names> extents;  // of `var`, when named
};

class Fuser {
  /// Elements per block of a row-wise reduction (fuseRowFold).
  static constexpr int64_t kRowBlock = 8192;

 public:
  Fuser(Function& f, PassContext& ctx, const ArrayExtents& extents, const std::set<std::string>& nonNegative,
        const std::map<std::string, PrivateArray>& privateArrays)
      : F(f), Ctx(ctx), Extents(extents), NonNegative(nonNegative), Private(privateArrays) {}

  /// Rewrites the assignment of a scalar operand that is evaluated before
  /// the loop (fusing what it computes), or null.
  std::function<std::vector<StmtPtr>(StmtPtr)> FuseScalar;

  /// `s = R(E)` for a reduction R that folds elements one at a time
  /// (any, all, an integer sum) over an element-wise tree E: one loop
  /// `acc = combine(acc, E[i...])`, no temporary. Returns the statements
  /// that replace the assignment, or nothing.
  std::vector<StmtPtr> fuseFold(Assign& a) {
    auto& call = cast<Call>(*a.value);
    const FoldRule& fold = *call.library->fold;
    if (!fold.orderFree && !call.type.isInteger()) return fuseWindowFold(a);
    Loc = a.loc;
    ExprPtr tree = std::move(call.args[0]);
    auto giveBack = [&] {
      call.args[0] = std::move(tree);
      return std::vector<StmtPtr>{};
    };
    if (!typesPerElement(*tree)) return giveBack();
    ResultRank = tree->type.rank();
    if (ResultRank > 3) return giveBack();
    // The combining step must type as the accumulator.
    const Type result = fold.accumulator ? Type::scalar(*fold.accumulator) : call.type;
    // With a separate accumulator, each element's truth value (0 or 1).
    auto element = [&](ExprPtr e) -> ExprPtr {
      if (!fold.accumulator) return e;
      return std::make_unique<Cast>(Loc, result, std::make_unique<Cast>(Loc, Type::boolTy(), std::move(e)));
    };
    ExprPtr accStart = std::make_unique<Cast>(Loc, result, build::intLit(Loc, fold.identity));
    ExprPtr probe = build::libraryCall(Loc, lookupLibraryFunction(fold.combine), fold.combine,
                                       args(build::var(Loc, "_", result),
                                            element(build::var(Loc, "_", Type::scalar(tree->type.elem())))),
                                       result);
    TypeRuleError err;
    if (cast<Call>(*probe).library->resultType(cast<Call>(*probe), err) != result || !err.message.empty()) return giveBack();

    std::vector<std::string> dimVars;
    ExprPtr guard;
    if (!reductionLoop(tree, dimVars, guard)) return giveBack();

    std::string acc = temp("acc", result);
    std::vector<std::string> loopVars;
    for (int k = 0; k < ResultRank; ++k) loopVars.push_back(temp("i", Type::int64()));
    StmtPtr step = build::assign(Loc, var(acc, result),
                                 build::libraryCall(Loc, lookupLibraryFunction(fold.combine), fold.combine,
                                                    args(var(acc, result), element(perElement(*tree, loopVars))), result));
    std::vector<StmtPtr> fused;
    fused.push_back(build::assign(Loc, var(acc, result), std::move(accStart)));
    StmtPtr nest = loopNest(loopVars, dimVars, std::move(step));
    // Exact in any order: or, and, wrapping integer addition.
    auto& outer = cast<For>(*nest);
    outer.foldsInto = acc;
    outer.foldIdentity = fold.identity;
    fused.push_back(std::move(nest));
    ExprPtr value = var(acc, result);
    if (fold.accumulator) value = std::make_unique<Cast>(Loc, call.type, std::move(value));
    fused.push_back(build::assign(Loc, cloneExpr(*a.targets[0]), std::move(value)));

    return guardedReduction(a, call, *tree, std::move(guard), std::move(fused));
  }

  /// `s = R(E)` for a float sum R over an element-wise tree E, in the
  /// order NumPy sums: E's elements in C order fill a buffer of
  /// fold.window elements, R reduces each full (and the last) buffer and
  /// the results are added in order; the same bit for bit as computing E
  /// into an array and summing it, without E's array (the buffer stays in
  /// cache). Each buffer is filled a row segment at a time; the windows are
  /// independent, so a large sum computes them on all threads (each with
  /// its own buffer) and adds their results in order afterwards:
  ///
  ///     parts = empty(windows)
  ///     for w in range(windows):                # independent
  ///         f = w * W; end = min(f + W, size); k = 0
  ///         buf = empty(end - f)
  ///         (i..., j) = the position of flat index f
  ///         while f < end:
  ///             take = min(n_last - j, end - f); off = k - j
  ///             for jj in range(j, j + take): buf[off + jj] = E[i..., jj]
  ///             k += take; f += take
  ///             j = 0; (i...) = the next row's
  ///         parts[w] = R(buf[0:k])
  ///     for w in range(windows): acc = acc + parts[w]
  std::vector<StmtPtr> fuseWindowFold(Assign& a) {
    auto& call = cast<Call>(*a.value);
    const int64_t W = call.library->fold->window;
    Loc = a.loc;
    ExprPtr tree = std::move(call.args[0]);
    auto giveBack = [&] {
      call.args[0] = std::move(tree);
      return std::vector<StmtPtr>{};
    };
    const Type elem = Type::scalar(tree->type.elem());
    if (!typesPerElement(*tree) || call.type != elem || !elem.isFloat() || elem.isComplex()) return giveBack();
    ResultRank = tree->type.rank();
    if (ResultRank > 3) return giveBack();
    std::vector<std::string> dimVars;
    ExprPtr guard;
    if (!reductionLoop(tree, dimVars, guard)) return giveBack();

    const Type i64 = Type::int64(), bufType = Type::array(elem.elem(), 1);
    auto iv = [&](const std::string& n) { return var(n, i64); };
    auto lit = [&](int64_t v) { return build::intLit(Loc, v); };
    auto arith = [&](BinaryOp op, ExprPtr x, ExprPtr y) { return build::binary(Loc, op, std::move(x), std::move(y), i64); };
    auto smaller = [&](ExprPtr x, ExprPtr y) {  // min(x, y) of two cheap expressions
      ExprPtr test = build::compare(Loc, CmpOp::Lt, cloneExpr(*x), cloneExpr(*y));
      auto s = std::make_unique<Select>(Loc, std::move(test), std::move(x), std::move(y));
      s->type = i64;
      return ExprPtr(std::move(s));
    };
    const std::string acc = temp("acc", call.type), buf = temp("buf", bufType), size = temp("size", i64),
                      w = temp("w", i64), f = temp("f", i64), end = temp("end", i64), k = temp("k", i64),
                      take = temp("take", i64), off = temp("off", i64), windows = temp("windows", i64),
                      parts = temp("parts", bufType), w2 = temp("w", i64);
    std::vector<std::string> loopVars;
    for (int d = 0; d < ResultRank; ++d) loopVars.push_back(temp("i", i64));
    const std::string& jj = loopVars.back();
    const std::string& last = dimVars.back();

    std::vector<StmtPtr> fused;
    ExprPtr sizeValue = iv(dimVars[0]);
    for (int d = 1; d < ResultRank; ++d) sizeValue = arith(BinaryOp::Mul, std::move(sizeValue), iv(dimVars[d]));
    fused.push_back(build::assign(Loc, iv(size), std::move(sizeValue)));
    std::vector<StmtPtr> windowed;
    auto newBuffer = [&](ExprPtr length) {
      return build::libraryCall(Loc, lookupLibraryFunction("empty"), "empty",
                                args(std::move(length), std::make_unique<Cast>(Loc, elem, lit(0))), bufType);
    };
    windowed.push_back(build::assign(Loc, iv(windows), arith(BinaryOp::FloorDiv, arith(BinaryOp::Add, iv(size), lit(W - 1)), lit(W))));
    windowed.push_back(build::assign(Loc, var(parts, bufType), newBuffer(iv(windows))));

    // The position of the window's first element, flat index f: its column
    // j and its leading indices (the innermost loop's own variable runs
    // along the row). Divisions once per window: each later segment starts
    // a row (see `nextRow`), which for narrow rows is most segments.
    std::vector<StmtPtr> position;
    const std::string j = temp("j", i64);
    position.push_back(build::assign(Loc, iv(j), arith(BinaryOp::Mod, iv(f), iv(last))));
    ExprPtr rest = arith(BinaryOp::FloorDiv, iv(f), iv(last));
    for (int d = ResultRank - 2; d >= 0; --d) {
      if (d == 0) {
        position.push_back(build::assign(Loc, iv(loopVars[0]), std::move(rest)));
        break;
      }
      position.push_back(build::assign(Loc, iv(loopVars[d]), arith(BinaryOp::Mod, cloneExpr(*rest), iv(dimVars[d]))));
      rest = arith(BinaryOp::FloorDiv, std::move(rest), iv(dimVars[d]));
    }
    std::vector<StmtPtr> segment;
    segment.push_back(build::assign(
        Loc, iv(take), smaller(arith(BinaryOp::Sub, iv(last), iv(j)), arith(BinaryOp::Sub, iv(end), iv(f)))));
    segment.push_back(build::assign(Loc, iv(off), arith(BinaryOp::Sub, iv(k), iv(j))));
    std::vector<ExprPtr> at;
    at.push_back(arith(BinaryOp::Add, iv(off), iv(jj)));
    std::vector<StmtPtr> fill;
    ExprPtr slot = build::index(Loc, var(buf, bufType), std::move(at), elem);
    cast<Index>(*slot).inRange = true;  // off + jj = k + (jj - j) < W
    fill.push_back(build::assign(Loc, std::move(slot), perElement(*tree, loopVars, true)));
    auto fillLoop = build::rangeLoop(Loc, jj, iv(j), arith(BinaryOp::Add, iv(j), iv(take)), std::move(fill));
    fillLoop->storesFresh = true;  // buf is this window's own, and E does not read it
    segment.push_back(std::move(fillLoop));
    segment.push_back(build::assign(Loc, iv(k), arith(BinaryOp::Add, iv(k), iv(take))));
    segment.push_back(build::assign(Loc, iv(f), arith(BinaryOp::Add, iv(f), iv(take))));
    // nextRow: a segment that did not end the window ended its row, so the
    // next one starts the next row (leading indices carried like a counter;
    // after the window's last segment they are not read).
    segment.push_back(build::assign(Loc, iv(j), lit(0)));
    if (ResultRank >= 2) {
      segment.push_back(build::assign(Loc, iv(loopVars[ResultRank - 2]),
                                      arith(BinaryOp::Add, iv(loopVars[ResultRank - 2]), lit(1))));
      for (int d = ResultRank - 2; d >= 1; --d) {
        std::vector<StmtPtr> wrap;
        wrap.push_back(build::assign(Loc, iv(loopVars[d]), lit(0)));
        wrap.push_back(build::assign(Loc, iv(loopVars[d - 1]), arith(BinaryOp::Add, iv(loopVars[d - 1]), lit(1))));
        segment.push_back(
            build::ifThen(Loc, build::compare(Loc, CmpOp::Eq, iv(loopVars[d]), iv(dimVars[d])), std::move(wrap)));
      }
    }
    auto segments = std::make_unique<While>(Loc);
    segments->cond = build::compare(Loc, CmpOp::Lt, iv(f), iv(end));
    segments->body = build::block(Loc, std::move(segment));

    auto window = std::make_unique<Slice>(Loc);
    window->start = lit(0);
    window->stop = iv(k);
    window->type = i64;  // sema's placeholder: a slice is not a value
    std::vector<ExprPtr> range;
    range.push_back(std::move(window));
    ExprPtr reduced = build::libraryCall(Loc, call.library, call.library->name,
                                         args(build::index(Loc, var(buf, bufType), std::move(range), bufType)), call.type);
    std::vector<StmtPtr> perWindow;
    perWindow.push_back(build::assign(Loc, iv(f), arith(BinaryOp::Mul, iv(w), lit(W))));
    perWindow.push_back(build::assign(Loc, iv(end), smaller(arith(BinaryOp::Add, iv(f), lit(W)), iv(size))));
    perWindow.push_back(build::assign(Loc, iv(k), lit(0)));
    // Allocated per window (each thread needs its own buffer), with a shape
    // that varies so that neither licm nor alloc moves it out of the loop.
    perWindow.push_back(build::assign(Loc, var(buf, bufType), newBuffer(arith(BinaryOp::Sub, iv(end), iv(f)))));
    for (auto& s : position) perWindow.push_back(std::move(s));
    perWindow.push_back(std::move(segments));
    auto part = [&](const std::string& at) {
      std::vector<ExprPtr> index;
      index.push_back(iv(at));
      ExprPtr p = build::index(Loc, var(parts, bufType), std::move(index), elem);
      cast<Index>(*p).inRange = true;  // 0 <= at < windows
      return p;
    };
    perWindow.push_back(build::assign(Loc, part(w), std::move(reduced)));
    auto windowLoop = build::rangeLoop(Loc, w, lit(0), iv(windows), std::move(perWindow));
    windowLoop->independent = true;
    windowLoop->elementsPerIteration = W;
    windowed.push_back(std::move(windowLoop));
    windowed.push_back(build::assign(Loc, var(acc, call.type), std::make_unique<Cast>(Loc, call.type, lit(0))));
    std::vector<StmtPtr> inOrder;
    inOrder.push_back(build::assign(Loc, var(acc, call.type),
                                    build::binary(Loc, BinaryOp::Add, var(acc, call.type), part(w2), call.type)));
    windowed.push_back(build::rangeLoop(Loc, w2, lit(0), iv(windows), std::move(inOrder)));
    if (ResultRank == 1) {
      // A row of at most kPairwiseBlock elements is one block of NumPy's
      // pairwise sum: summed in registers, no buffer.
      fused.push_back(build::ifThen(Loc, build::compare(Loc, CmpOp::Le, iv(size), lit(kPairwiseBlock)),
                                    smallSum(*tree, acc, size, jj, elem), std::move(windowed)));
      ++Ctx.stats["fuse: short sums in registers"];
    } else {
      for (auto& s : windowed) fused.push_back(std::move(s));
    }
    fused.push_back(build::assign(Loc, cloneExpr(*a.targets[0]), var(acc, call.type)));

    return guardedReduction(a, call, *tree, std::move(guard), std::move(fused));
  }

  /// NumPy's pairwise_sum sums a run of at most this many elements as one
  /// block (runtime/include/pydd/reduce.h: pairwise_block).
  static constexpr int64_t kPairwiseBlock = 128;

  /// `acc = sum(E)` for a 1-D tree of `size` <= kPairwiseBlock elements, in
  /// NumPy's order, the element formula applied in place (no buffer): below
  /// 8 elements one running sum; otherwise eight running sums over the
  /// multiples of 8, added as a tree, then the rest in order. The total
  /// starts at 0, as NumPy's reduction does (so -0.0 sums to 0.0).
  std::vector<StmtPtr> smallSum(const Expr& tree, const std::string& acc, const std::string& size,
                                const std::string& i, const Type& elem) {
    const Type i64 = Type::int64();
    auto iv = [&](const std::string& n) { return var(n, i64); };
    auto lit = [&](int64_t v) { return build::intLit(Loc, v); };
    auto add = [&](ExprPtr x, ExprPtr y) { return build::binary(Loc, BinaryOp::Add, std::move(x), std::move(y), elem); };
    auto accumulate = [&](const std::string& into, const std::string& at) {
      return build::assign(Loc, var(into, elem), add(var(into, elem), perElement(tree, {at}, true)));
    };
    std::vector<StmtPtr> out;
    out.push_back(build::assign(Loc, var(acc, elem), std::make_unique<Cast>(Loc, elem, lit(0))));
    std::vector<StmtPtr> running;
    running.push_back(accumulate(acc, i));
    std::vector<StmtPtr> few;
    few.push_back(build::rangeLoop(Loc, i, lit(0), iv(size), std::move(running)));

    std::vector<std::string> r, at;
    for (int k = 0; k < 8; ++k) r.push_back(temp("r", elem)), at.push_back(temp("p", i64));
    const std::string m = temp("m", i64), b = temp("b", i64), res = temp("res", elem);
    std::vector<StmtPtr> block;
    for (int k = 0; k < 8; ++k) block.push_back(build::assign(Loc, iv(at[k]), lit(k)));
    for (int k = 0; k < 8; ++k) block.push_back(build::assign(Loc, var(r[k], elem), perElement(tree, {at[k]}, true)));
    block.push_back(build::assign(Loc, iv(m), build::binary(Loc, BinaryOp::Sub, iv(size),
                                                            build::binary(Loc, BinaryOp::Mod, iv(size), lit(8), i64), i64)));
    std::vector<StmtPtr> eight;
    for (int k = 0; k < 8; ++k)
      eight.push_back(build::assign(Loc, iv(at[k]), build::binary(Loc, BinaryOp::Add, iv(b), lit(k), i64)));
    for (int k = 0; k < 8; ++k) eight.push_back(accumulate(r[k], at[k]));
    auto stepped = build::rangeLoop(Loc, b, lit(8), iv(m), std::move(eight));
    stepped->step = lit(8);
    block.push_back(std::move(stepped));
    auto pair = [&](int x, int y) { return add(var(r[x], elem), var(r[y], elem)); };
    block.push_back(build::assign(Loc, var(res, elem), add(add(pair(0, 1), pair(2, 3)), add(pair(4, 5), pair(6, 7)))));
    std::vector<StmtPtr> rest;
    rest.push_back(accumulate(res, i));
    block.push_back(build::rangeLoop(Loc, i, iv(m), iv(size), std::move(rest)));
    block.push_back(build::assign(Loc, var(acc, elem), add(var(acc, elem), var(res, elem))));
    out.push_back(build::ifThen(Loc, build::compare(Loc, CmpOp::Lt, iv(size), lit(8)), std::move(few), std::move(block)));
    return out;
  }

  /// For a reduction of `tree` (ResultRank set): collects its operands and,
  /// when one has the tree's rank (else false), the extents of the loop
  /// nest over its elements and the run-time test that the nest computes
  /// what broadcasting would.
  bool reductionLoop(ExprPtr& tree, std::vector<std::string>& dimVars, ExprPtr& guard) {
    collectOperands(tree);
    bool widest = false;
    for (auto& o : Operands) widest = widest || o.rank == ResultRank;
    if (!widest) return false;
    dimVars = resultExtents();
    guard = elementwiseGuard(dimVars);
    return true;
  }

  /// `v = R(E)` as `fused` when `guard` holds, else the general loop
  /// computing E (the tree taken out of `call`), which R then reduces; after
  /// the operands evaluated before both.
  std::vector<StmtPtr> guardedReduction(Assign& a, Call& call, const Expr& tree, ExprPtr guard,
                                        std::vector<StmtPtr> fused) {
    std::vector<StmtPtr> out = std::move(Before);
    if (guard) {
      std::vector<StmtPtr> general = broadcastLoop(tree);
      call.args[0] = var(General, GeneralType);
      general.push_back(build::assign(Loc, cloneExpr(*a.targets[0]), std::move(a.value)));
      out.push_back(build::ifThen(Loc, std::move(guard), std::move(fused), std::move(general)));
      cast<If>(*out.back()).rareElse = true;
    } else {
      for (auto& s : fused) out.push_back(std::move(s));
      ++Ctx.stats["fuse: shape tests proven"];
    }
    ++Ctx.stats["fuse: reductions fused"];
    Ctx.stats["fuse: operations fused"] += Fused;
    return out;
  }

  /// `v = R(E, axis)` for a fold R along the last axis of a 2-D element-wise
  /// tree E (`(d * d).sum(1)`): one row of E at a time is computed into a
  /// buffer that stays in cache, and v[i] = R(buffer). R of a contiguous
  /// row is what R along the last axis computes for that row (for a float
  /// sum: the same 8192-element windows, each summed pairwise), so the
  /// result is bit for bit the unfused one, without E's temporary. The rows
  /// go in blocks of about kRowBlock elements, each block allocating its own
  /// buffer, so the blocks are independent (For::independent: a large
  /// reduction's blocks run on all threads; alloc leaves an independent
  /// loop's allocations in it, and licm hoists no array a loop writes). Returns
  /// the statements that replace the assignment, or nothing.
  std::vector<StmtPtr> fuseRowFold(Assign& a) {
    auto& call = cast<Call>(*a.value);
    Loc = a.loc;
    ExprPtr tree = std::move(call.args[0]);
    auto giveBack = [&] {
      call.args[0] = std::move(tree);
      return std::vector<StmtPtr>{};
    };
    if (!typesPerElement(*tree) || tree->type.rank() != 2) return giveBack();
    ResultRank = 2;
    std::vector<std::string> dimVars;
    ExprPtr guard;
    if (!reductionLoop(tree, dimVars, guard)) return giveBack();

    const Type i64 = Type::int64(), resultType = call.type, rowType = Type::array(tree->type.elem(), 1);
    auto iv = [&](const std::string& n) { return var(n, i64); };
    auto lit = [&](int64_t v) { return build::intLit(Loc, v); };
    auto arith = [&](BinaryOp op, ExprPtr x, ExprPtr y) { return build::binary(Loc, op, std::move(x), std::move(y), i64); };
    auto atLeastOne = [&](const std::string& n) {  // n if n > 1 else 1
      auto s = std::make_unique<Select>(Loc, build::compare(Loc, CmpOp::Gt, iv(n), lit(1)), iv(n), lit(1));
      s->type = i64;
      return ExprPtr(std::move(s));
    };
    const std::string result = temp("r", resultType), row = temp("row", rowType), per = temp("per", i64),
                      blocks = temp("blocks", i64), b = temp("b", i64), lo = temp("lo", i64), hi = temp("hi", i64);
    std::vector<std::string> loopVars = {temp("i", i64), temp("i", i64)};
    std::vector<StmtPtr> fused;
    fused.push_back(build::assign(Loc, var(result, resultType), allocate({dimVars[0]}, resultType)));
    // Rows in blocks of about kRowBlock elements, each block with its own
    // row buffer: the blocks are independent, so code generation may run a
    // large reduction's blocks on all threads.
    fused.push_back(build::assign(Loc, iv(per), atLeastOne(dimVars[1])));
    fused.push_back(build::assign(Loc, iv(per), arith(BinaryOp::FloorDiv, lit(kRowBlock), iv(per))));
    fused.push_back(build::assign(Loc, iv(per), atLeastOne(per)));
    fused.push_back(build::assign(Loc, iv(blocks), arith(BinaryOp::FloorDiv, arith(BinaryOp::Add, iv(dimVars[0]), arith(BinaryOp::Sub, iv(per), lit(1))), iv(per))));
    // for i: (for j: row[j] = E[i, j]); result[i] = R(row)
    std::vector<StmtPtr> rowBody;
    rowBody.push_back(build::assign(
        Loc, build::index(Loc, var(row, rowType), args(var(loopVars[1], i64)), Type::scalar(rowType.elem())),
        perElement(*tree, loopVars)));
    StmtPtr rowLoop = build::rangeLoop(Loc, loopVars[1], lit(0), iv(dimVars[1]), std::move(rowBody));
    cast<For>(*rowLoop).independent = true;
    std::vector<StmtPtr> body;
    body.push_back(std::move(rowLoop));
    body.push_back(build::assign(
        Loc, build::index(Loc, var(result, resultType), args(var(loopVars[0], i64)), Type::scalar(resultType.elem())),
        build::libraryCall(Loc, call.library, call.library->name, args(var(row, rowType)), Type::scalar(resultType.elem()))));
    std::vector<StmtPtr> perBlock;
    perBlock.push_back(build::assign(Loc, var(row, rowType), allocate({dimVars[1]}, rowType)));
    perBlock.push_back(build::assign(Loc, iv(lo), arith(BinaryOp::Mul, iv(b), iv(per))));
    ExprPtr end = arith(BinaryOp::Add, iv(lo), iv(per));
    ExprPtr test = build::compare(Loc, CmpOp::Lt, cloneExpr(*end), iv(dimVars[0]));
    auto smaller = std::make_unique<Select>(Loc, std::move(test), std::move(end), iv(dimVars[0]));
    smaller->type = i64;
    perBlock.push_back(build::assign(Loc, iv(hi), std::move(smaller)));
    perBlock.push_back(build::rangeLoop(Loc, loopVars[0], iv(lo), iv(hi), std::move(body)));
    auto blockLoop = build::rangeLoop(Loc, b, lit(0), iv(blocks), std::move(perBlock));
    blockLoop->independent = true;
    blockLoop->elementsPerIteration = kRowBlock;
    fused.push_back(std::move(blockLoop));
    fused.push_back(build::assign(Loc, cloneExpr(*a.targets[0]), var(result, resultType)));

    return guardedReduction(a, call, *tree, std::move(guard), std::move(fused));
  }

  /// Returns the statements that replace `s`, or nothing when `s` is not a
  /// fusable assignment.
  std::vector<StmtPtr> fuse(Assign& a) {
    if (a.targets.size() != 1 || !a.value || !isElementwiseArrayCall(*a.value)) return {};
    Loc = a.loc;
    if (!typesPerElement(*a.value)) return {};
    ExprPtr& target = a.targets[0];
    if (!target->type.isArray()) return {};
    DestType = target->type;
    int valueRank = a.value->type.rank();
    if (auto* v = dyn_cast<VarRef>(target.get())) {
      // `y = E`: a new array of E's shape.
      Dest.var = v->name;
      Dest.type = DestType;
      Dest.rank = valueRank;
      Dest.extents = Extents.ofVar(Dest.var);
    } else {
      // A store into a view: `x[:] = E` (what `x += E` becomes), `F[i] = E`,
      // `F[i, :] = E`.
      InPlace = true;
      auto* x = dyn_cast<Index>(target.get());
      if (!x || x->base->kind != ExprKind::Var || !x->base->type.isArray()) return {};
      const Type elem = Type::scalar(DestType.elem());
      if (Type::scalar(a.value->type.elem()) != elem && !elem.isFloat()) return {};
      Dest.var = cast<VarRef>(*x->base).name;
      Dest.type = x->base->type;
      Dest.extents = Extents.ofVar(Dest.var);
      bool slices = false;
      for (auto& i : x->indices) {
        auto* sl = dyn_cast<Slice>(i.get());
        if (sl && (sl->start || sl->stop || sl->step)) return {};  // a strided or partial view
        if (!sl && (slices || !i->type.isInteger())) return {};
        slices = slices || sl;
        if (!sl) Dest.sources.push_back(i.get());
      }
      Dest.rank = DestType.rank();
      if (valueRank > Dest.rank) return {};
    }
    ResultRank = Dest.rank;
    if (ResultRank > 3) return {};

    // The operands, evaluated before the loop in Python's order (the value
    // before the target, as Python does), then the target's indices.
    ExprPtr tree = std::move(a.value);
    collectOperands(tree);
    if (InPlace)
      for (auto& i : cast<Index>(*target).indices)
        if (i->kind != ExprKind::Slice) {
          Dest.leadingNonNegative.push_back(nonNegative(*i, NonNegative));
          Dest.leading.push_back(evaluateIndex(i));
        }
    if (!InPlace) {
      bool widest = false;
      for (auto& o : Operands) widest = widest || o.rank == ResultRank;
      if (!widest) return restore(a, std::move(tree));
    }

    std::vector<std::string> dimVars = resultExtents();
    ExprPtr guard = elementwiseGuard(dimVars);

    // A new array for `y = E`; when E reads y itself, a temporary that y
    // takes after the loop.
    std::string written = Dest.var;
    if (!InPlace)
      for (auto& o : Operands)
        if (o.var == Dest.var) written = temp("r", DestType);

    // The loop nest: for i0: for i1: ... dest[i0, i1] = <tree per element>.
    std::vector<std::string> loopVars;
    for (int k = 0; k < ResultRank; ++k) loopVars.push_back(temp("i", Type::int64()));
    ExprPtr element = perElement(*tree, loopVars);
    std::vector<ExprPtr> destIndices;
    for (auto& l : Dest.leading) destIndices.push_back(var(l, Type::int64()));
    for (auto& v : loopVars) destIndices.push_back(var(v, Type::int64()));
    StmtPtr body = build::assign(
        Loc, build::index(Loc, var(written, Dest.type), std::move(destIndices), Type::scalar(DestType.elem())),
        std::move(element));
    body = loopNest(loopVars, dimVars, std::move(body));
    cast<For>(*body).independent = true;
    std::vector<StmtPtr> fused;
    if (!InPlace) fused.push_back(build::assign(Loc, var(written, DestType), allocate(dimVars, DestType)));
    fused.push_back(std::move(body));
    if (written != Dest.var) fused.push_back(build::assign(Loc, var(Dest.var, DestType), var(written, DestType)));

    std::vector<StmtPtr> out = std::move(Before);
    if (guard) {
      // Otherwise the same loop over the operands broadcast to the result's
      // shape (no copy, stride-0 axes), into a new array that is then stored
      // as NumPy stores a computed value.
      std::vector<StmtPtr> general = broadcastLoop(*tree);
      if (InPlace) {
        general.push_back(build::assign(Loc, std::move(target), var(General, GeneralType)));
      } else {
        general.push_back(build::assign(Loc, var(Dest.var, DestType), var(General, GeneralType)));
      }
      out.push_back(build::ifThen(Loc, std::move(guard), std::move(fused), std::move(general)));
      cast<If>(*out.back()).rareElse = true;
    } else {
      for (auto& s : fused) out.push_back(std::move(s));
      ++Ctx.stats["fuse: shape tests proven"];
    }
    ++Ctx.stats["fuse: loops created"];
    Ctx.stats["fuse: operations fused"] += Fused;
    return out;
  }

 private:
  /// The result's extents, into temporaries evaluated before the loop: the
  /// destination's, or a highest-rank operand's.
  std::vector<std::string> resultExtents() {
    std::vector<std::string> dimVars;
    for (int k = 0; k < ResultRank; ++k) {
      std::string d = temp("n", Type::int64());
      ExprPtr extent;
      if (InPlace) {
        extent = extentOf(Dest, k);
      } else {
        for (size_t i = 0; i < Operands.size() && !extent; ++i)
          if (Operands[i].rank == ResultRank) extent = extentOf(Operands[i], k), ExtentSource = static_cast<int>(i);
      }
      Before.push_back(build::assign(Loc, var(d, Type::int64()), std::move(extent)));
      dimVars.push_back(d);
    }
    return dimVars;
  }

  /// The run-time test that the loop computes what broadcasting would:
  /// aligned extents equal, folded indices in range, and no operand sharing
  /// memory with the destination of a store. Null when nothing needs
  /// testing: every extent is the one the loop's extents were read from,
  /// or surely equal to it (ArrayExtents).
  ExprPtr elementwiseGuard(const std::vector<std::string>& dimVars) {
    ExprPtr guard;
    if (InPlace) guard = indicesInRange(std::move(guard), Dest);
    // For each axis of the loop, the extents known equal to it: the one it
    // was read from, then those tested (operand, axis of its variable).
    const ArrayOperand& source = InPlace ? Dest : Operands[static_cast<size_t>(ExtentSource)];
    std::vector<std::vector<std::pair<const ArrayOperand*, int>>> tested;
    for (int k = 0; k < ResultRank; ++k) tested.push_back({{&source, static_cast<int>(source.leading.size()) + k}});
    for (auto& o : Operands) {
      if (InPlace && samePlace(o, Dest)) continue;  // the destination's own extents and indices
      for (int j = 0; j < o.rank; ++j) {
        const int k = ResultRank - o.rank + j, axis = static_cast<int>(o.leading.size()) + j;
        auto& known = tested[static_cast<size_t>(k)];
        bool same = false;
        for (auto& [other, otherAxis] : known) same = same || sameExtent(o, axis, *other, otherAxis);
        if (same) continue;
        known.push_back({&o, axis});
        guard = build::logicalAnd(Loc, std::move(guard),
                                  build::compare(Loc, CmpOp::Eq, extentOf(o, j), var(dimVars[k], Type::int64())));
      }
      guard = indicesInRange(std::move(guard), o);
      // The destination read element for element as itself (same variable,
      // same indices) is the one operand a store may share memory with. A
      // private destination (PrivateArrays) shares memory with no other
      // variable; a temporary computed from it may be a view of it.
      if (InPlace && Private.count(Dest.var) && Private.at(Dest.var).views.empty() && o.var != Dest.var &&
          !o.spilledFromDest) {
        ++Ctx.stats["fuse: overlap tests proven"];
      } else if (InPlace) {
        ExprPtr share = build::libraryCall(Loc, lookupLibraryFunction("may_share_memory"), "may_share_memory",
                                           args(var(Dest.var, Dest.type), var(o.var, o.type)), Type::boolTy());
        auto notShared = std::make_unique<Not>(Loc, std::move(share));
        notShared->type = Type::boolTy();
        guard = build::logicalAnd(Loc, std::move(guard), std::move(notShared));
      }
    }
    return guard;
  }

  /// Whether axis `i` of `a`'s array surely has the length of axis `j` of
  /// `b`'s: the same axis of the same variable (read once, before the
  /// loop), or two extents ArrayExtents names alike.
  static bool sameExtent(const ArrayOperand& a, int i, const ArrayOperand& b, int j) {
    if (a.var == b.var && i == j) return true;
    return a.extents && b.extents && (*a.extents)[static_cast<size_t>(i)] == (*b.extents)[static_cast<size_t>(j)];
  }

  /// The nest `for i0 in range(n0): ... body` over the given extents.
  StmtPtr loopNest(const std::vector<std::string>& loopVars, const std::vector<std::string>& dims, StmtPtr body) {
    for (int k = static_cast<int>(loopVars.size()) - 1; k >= 0; --k) {
      std::vector<StmtPtr> inner;
      inner.push_back(std::move(body));
      body = build::rangeLoop(Loc, loopVars[k], build::intLit(Loc, 0), var(dims[k], Type::int64()), std::move(inner));
    }
    return body;
  }

  /// The general form of the fused loop, for operands whose shapes differ
  /// from the result's (size-1 axes) or that overlap the destination: in
  /// Python's order, each folded view is made (IndexError as the view
  /// raises it) and each operation's result shape computed (its ValueError
  /// when its operands do not broadcast); then every array operand is read
  /// through a broadcast view of the result's shape. Sets General to the
  /// new array it computes.
  std::vector<StmtPtr> broadcastLoop(const Expr& tree) {
    std::vector<StmtPtr> out;
    ExprPtr shape = operationShapes(tree, out);
    const int rank = tree.type.rank();
    // The result's shape is the tree's (a store broadcasts it into its
    // destination afterwards, with the store's own ValueError).
    Type shapeType = Type::tuple(std::vector<Type>(rank, Type::int64()));
    std::string resultShape;
    if (auto* v = dyn_cast<VarRef>(shape.get())) {
      resultShape = v->name;
    } else {
      resultShape = temp("shape", shapeType);
      out.push_back(build::assign(Loc, var(resultShape, shapeType), std::move(shape)));
    }
    std::vector<std::string> dims;
    for (int k = 0; k < rank; ++k) {
      dims.push_back(temp("m", Type::int64()));
      out.push_back(build::assign(Loc, var(dims.back(), Type::int64()),
                                  build::index(Loc, var(resultShape, shapeType), args(build::intLit(Loc, k)),
                                               Type::int64())));
    }
    for (auto& [leaf, view] : LeafViews) {
      Type viewType = Type::array(view.second.elem(), rank);
      std::string b = temp("b", viewType);
      out.push_back(build::assign(Loc, var(b, viewType),
                                  build::libraryCall(Loc, lookupLibraryFunction("broadcast_to"), "broadcast_to",
                                                     args(var(view.first, view.second), var(resultShape, shapeType)),
                                                     viewType)));
      view = {b, viewType};
    }
    GeneralType = Type::array(tree.type.elem(), rank);
    General = temp("r", GeneralType);
    auto dtype = std::make_unique<Cast>(Loc, Type::scalar(GeneralType.elem()), build::intLit(Loc, 0));
    out.push_back(build::assign(Loc, var(General, GeneralType),
                                build::libraryCall(Loc, lookupLibraryFunction("empty"), "empty",
                                                   args(var(resultShape, shapeType), std::move(dtype)), GeneralType)));
    std::vector<std::string> loopVars;
    for (int k = 0; k < rank; ++k) loopVars.push_back(temp("j", Type::int64()));
    std::vector<ExprPtr> at;
    for (auto& v : loopVars) at.push_back(var(v, Type::int64()));
    StmtPtr body = build::assign(Loc, build::index(Loc, var(General, GeneralType), std::move(at),
                                                   Type::scalar(GeneralType.elem())),
                                 broadcastElement(tree, loopVars));
    out.push_back(loopNest(loopVars, dims, std::move(body)));
    return out;
  }

  /// The shape of `e`'s value as an expression (a shape tuple, or the
  /// scalar itself for a scalar), appending to `out` the views and the
  /// operations' shape checks it needs, in Python's evaluation order.
  ExprPtr operationShapes(const Expr& e, std::vector<StmtPtr>& out) {
    if (isElementwiseArrayCall(e)) {
      auto& c = cast<Call>(e);
      std::vector<ExprPtr> shapes;
      int arrays = 0;
      for (auto& a : c.args) {
        shapes.push_back(operationShapes(*a, out));
        arrays += a->type.isArray();
      }
      if (arrays == 1)  // one array among scalars: its shape, and nothing can fail
        for (size_t i = 0; i < c.args.size(); ++i)
          if (c.args[i]->type.isArray()) return std::move(shapes[i]);
      Type t = Type::tuple(std::vector<Type>(c.type.rank(), Type::int64()));
      std::vector<ExprPtr> callArgs;
      callArgs.push_back(std::make_unique<StrLit>(Loc, c.library->name));
      callArgs.back()->type = Type::string();
      for (auto& s : shapes) callArgs.push_back(std::move(s));
      std::string shape = temp("shape", t);
      out.push_back(build::assign(Loc, var(shape, t),
                                  build::libraryCall(Loc, lookupLibraryFunction("broadcast_shapes_for"),
                                                     "broadcast_shapes_for", std::move(callArgs), t)));
      return var(shape, t);
    }
    if (!e.type.isArray()) return cloneExpr(e);
    // An array operand: a variable, or a folded view made now.
    std::string name;
    Type type = e.type;
    if (e.kind == ExprKind::Var) {
      name = cast<VarRef>(e).name;
    } else {
      name = temp("v", type);
      out.push_back(build::assign(Loc, var(name, type), cloneExpr(e)));
    }
    LeafViews.push_back({&e, {name, type}});
    Type t = Type::tuple(std::vector<Type>(type.rank(), Type::int64()));
    return build::libraryCall(Loc, lookupLibraryFunction("shape"), "shape", args(var(name, type)), t);
  }

  /// One element of the tree in the general loop: every array operand read
  /// from its broadcast view at the loop's indices.
  ExprPtr broadcastElement(const Expr& tree, const std::vector<std::string>& loopVars) {
    return instantiateElement(tree, [&](const Expr& leaf) -> ExprPtr {
      for (auto& [operand, view] : LeafViews)
        if (operand == &leaf) {
          std::vector<ExprPtr> at;
          for (auto& v : loopVars) at.push_back(var(v, Type::int64()));
          return build::index(leaf.loc, var(view.first, view.second), std::move(at), Type::scalar(leaf.type.elem()));
        }
      return nullptr;  // unreachable: operationShapes saw every operand
    });
  }

  static std::vector<ExprPtr> args(ExprPtr a) {
    std::vector<ExprPtr> v;
    v.push_back(std::move(a));
    return v;
  }
  static std::vector<ExprPtr> args(ExprPtr a, ExprPtr b) {
    std::vector<ExprPtr> v;
    v.push_back(std::move(a));
    v.push_back(std::move(b));
    return v;
  }

  std::vector<StmtPtr> restore(Assign& a, ExprPtr tree) {
    a.value = std::move(tree);
    return {};
  }

  ExprPtr var(const std::string& name, const Type& t) { return build::var(Loc, name, t); }

  std::string temp(const std::string& hint, const Type& t) {
    return Ctx.newLocal(F, hint, t, Loc);
  }

  ExprPtr shapeOf(const std::string& v, const Type& t, int k) {
    return shapeQuery(Loc, var(v, t), k);
  }

  /// A variable or a literal: compared by name, and cheap to read twice.
  static bool simpleIndex(const Expr& e) {
    int64_t v;
    return e.kind == ExprKind::Var || constantInt(e, v);
  }

  bool samePlace(const ArrayOperand& o, const ArrayOperand& d) {
    if (o.var != d.var || o.sources.size() != d.sources.size() || o.rank != d.rank) return false;
    for (size_t k = 0; k < o.sources.size(); ++k)
      if (!o.sources[k] || !d.sources[k] || !sameIndex(*o.sources[k], *d.sources[k])) return false;
    return true;
  }

  /// An integer index evaluated into a temporary before the loop.
  std::string evaluateIndex(ExprPtr& i) {
    std::string t = temp("k", Type::int64());
    ExprPtr value = cloneExpr(*i);
    if (value->type != Type::int64()) {
      value = std::make_unique<Cast>(value->loc, Type::int64(), std::move(value));
    }
    Before.push_back(build::assign(Loc, var(t, Type::int64()), std::move(value)));
    return t;
  }

  /// guard and -shape(A, k) <= i < shape(A, k) for each folded index i
  /// (the lower bound only for an index that may be negative).
  ExprPtr indicesInRange(ExprPtr guard, const ArrayOperand& o) {
    for (size_t k = 0; k < o.leading.size(); ++k) {
      int axis = static_cast<int>(k);
      guard = build::logicalAnd(Loc, std::move(guard),
                                build::compare(Loc, CmpOp::Lt, var(o.leading[k], Type::int64()), shapeOf(o.var, o.type, axis)));
      if (o.leadingNonNegative[k]) {
        ++Ctx.stats["fuse: lower index bounds proven"];
        continue;
      }
      guard = build::logicalAnd(
          Loc, std::move(guard),
          build::compare(Loc, CmpOp::Ge, var(o.leading[k], Type::int64()),
                         build::binary(Loc, BinaryOp::Sub, build::intLit(Loc, 0), shapeOf(o.var, o.type, axis),
                                       Type::int64())));
    }
    return guard;
  }

  /// Extent j of an operand as the tree sees it (after its folded indices).
  ExprPtr extentOf(const ArrayOperand& o, int j) {
    return shapeOf(o.var, o.type, static_cast<int>(o.leading.size()) + j);
  }

  /// A new array of `type` with the given extents.
  ExprPtr allocate(const std::vector<std::string>& dims, const Type& type) {
    ExprPtr shape;
    if (dims.size() == 1) {
      shape = var(dims[0], Type::int64());
    } else {
      auto t = std::make_unique<TupleLit>(Loc, false);
      for (auto& d : dims) t->elems.push_back(var(d, Type::int64()));
      t->type = Type::tuple(std::vector<Type>(dims.size(), Type::int64()));
      shape = std::move(t);
    }
    auto dtype = std::make_unique<Cast>(Loc, Type::scalar(type.elem()), build::intLit(Loc, 0));
    return build::libraryCall(Loc, lookupLibraryFunction("empty"), "empty", args(std::move(shape), std::move(dtype)), type);
  }

  /// Replaces each operand of the tree that is not a literal or a scalar
  /// variable by a temporary assigned before the loop, in evaluation order,
  /// and records the array operands.
  void collectOperands(ExprPtr& e) {
    if (isElementwiseArrayCall(*e)) {
      ++Fused;
      for (auto& a : cast<Call>(*e).args) collectOperands(a);
      return;
    }
    if (isLiteral(*e)) return;
    if (e->type.isScalar()) {
      if (e->kind == ExprKind::Var) return;
      StmtPtr spilled = Ctx.spill(F, e, "s");
      // A scalar operand computed from reductions (`x / sqrt((x * x).sum())`)
      // has them folded too, before the loop.
      if (!FuseScalar) return Before.push_back(std::move(spilled));
      for (auto& r : FuseScalar(std::move(spilled))) Before.push_back(std::move(r));
      return;
    }
    // An array operand. A view A[i] of a variable with integer indices is
    // read as A[i, j] (its indices evaluated before the loop).
    ArrayOperand o;
    o.rank = e->type.rank();
    if (auto* x = dyn_cast<Index>(e.get()); x && x->base->kind == ExprKind::Var && x->base->type.isArray()) {
      bool allInts = true;
      for (auto& i : x->indices) allInts = allInts && i->type.isInteger() && i->kind != ExprKind::Slice;
      if (allInts && static_cast<int>(x->indices.size()) + o.rank == x->base->type.rank()) {
        o.var = cast<VarRef>(*x->base).name;
        o.type = x->base->type;
        o.extents = Extents.ofVar(o.var);
        for (auto& i : x->indices) {
          o.sources.push_back(simpleIndex(*i) ? i.get() : nullptr);
          o.leadingNonNegative.push_back(nonNegative(*i, NonNegative));
          std::string t = evaluateIndex(i);
          o.leading.push_back(t);
          if (!simpleIndex(*i)) i = var(t, Type::int64());
        }
        Operands.push_back(o);
        return;
      }
    }
    o.extents = Extents.of(*e);
    if (e->kind == ExprKind::Var) {
      o.var = cast<VarRef>(*e).name;
      o.type = e->type;
    } else {
      o.type = e->type;
      o.spilledFromDest = InPlace && mentions(*e, {Dest.var});
      Before.push_back(Ctx.spill(F, e, "a"));
      o.var = cast<VarRef>(*e).name;
    }
    Operands.push_back(o);
  }

  /// The tree for one element: array operands indexed by the trailing loop
  /// variables, each element-wise call applied to scalars.
  /// inRange: the loop variables are known to lie within the result's
  /// extents, so reads without leading (folded-view) indices are marked
  /// Index::inRange.
  ExprPtr perElement(const Expr& tree, const std::vector<std::string>& loopVars, bool inRange = false) {
    return instantiateElement(tree, [&](const Expr& e) {
      // Found by variable (a folded view's base reads the same variable
      // with its leading indices).
      int rank = e.type.rank();
      std::vector<ExprPtr> indices;
      std::string base;
      Type baseType;
      if (auto* x = dyn_cast<Index>(&e)) {
        base = cast<VarRef>(*x->base).name;
        baseType = x->base->type;
        for (auto& i : x->indices) indices.push_back(cloneExpr(*i));
      } else {
        base = cast<VarRef>(e).name;
        baseType = e.type;
      }
      const bool leading = !indices.empty();
      for (int j = 0; j < rank; ++j) indices.push_back(var(loopVars[ResultRank - rank + j], Type::int64()));
      ExprPtr read = build::index(e.loc, var(base, baseType), std::move(indices), Type::scalar(e.type.elem()));
      cast<Index>(*read).inRange = inRange && !leading;
      return read;
    });
  }

  Function& F;
  PassContext& Ctx;
  const ArrayExtents& Extents;
  const std::set<std::string>& NonNegative;  // ValueRanges, of the function before fusion
  const std::map<std::string, PrivateArray>& Private;  // likewise
  SourceLoc Loc;
  int ResultRank = 0;
  int ExtentSource = 0;  // the operand the loop's extents are read from (not InPlace)
  bool InPlace = false;
  ArrayOperand Dest;  // the assigned variable, or the array a view store writes
  Type DestType;      // of the assignment's target
  std::vector<ArrayOperand> Operands;
  std::vector<StmtPtr> Before;
  unsigned Fused = 0;
  // The general loop: each array operand of the tree, with the variable
  // (and type) it is read from; the array it computes.
  std::vector<std::pair<const Expr*, std::pair<std::string, Type>>> LeafViews;
  std::string General;
  Type GeneralType;
};

/// `R(E, axis)`: a reduction whose catalog entry folds elements (sum) along
/// the last axis of a 2-D element-wise tree E, without keepdims.
bool rowFoldable(const Expr& value) {
  auto* c = dyn_cast<Call>(&value);
  if (!c || c->target != CallTarget::Library || !c->library->fold) return false;
  if (c->args.size() < 2 || c->args.size() > 3 || !isElementwiseArrayCall(*c->args[0])) return false;
  if (c->args[0]->type.rank() != 2 || !c->type.isArray() || c->type.rank() != 1) return false;
  int64_t axis;
  if (!constantInt(*c->args[1], axis) || (axis != 1 && axis != -1)) return false;
  auto* keep = c->args.size() == 3 ? dyn_cast<BoolLit>(c->args[2].get()) : nullptr;
  return c->args.size() == 2 || (keep && !keep->value);
}

/// `R(E)`: a whole-array reduction whose catalog entry folds elements one
/// at a time, exactly in any order (any, all, an integer sum), or in
/// NumPy's windows (a float sum: fuseWindowFold), of an element-wise tree.
bool wholeFold(const Expr& value) {
  auto* c = dyn_cast<Call>(&value);
  if (!c || c->target != CallTarget::Library || !c->library->fold || c->args.size() != 1) return false;
  const FoldRule& fold = *c->library->fold;
  const bool windowed = fold.window && c->type.isFloat() && !c->type.isComplex();  // see fuseWindowFold
  if (!c->type.isScalar() || !(fold.orderFree || c->type.isInteger() || windowed)) return false;
  return isElementwiseArrayCall(*c->args[0]);
}

/// Moves the element-wise trees that are operands of other calls
/// (`sum(a * b)`, `where(x > 0.5)`, `(X - mu) @ w`) into assignments of
/// their own just before the statement, where they can be fused: one
/// temporary instead of one per operator. A whole-array reduction of such
/// a tree anywhere in an expression (`exp(-b * (d * d).sum())`,
/// `D[i, j] = abs(x - y).sum()`) moves out whole, into a scalar that its
/// fold computes with no temporary array (Halide's inline reductions). Only trees that the statement
/// evaluates before anything that may raise or has effects move, so the
/// order of effects and exceptions is Python's.
class OperandExtractor {
 public:
  OperandExtractor(Function& f, PassContext& ctx, bool wholeReductions)
      : F(f), Ctx(ctx), WholeReductions(wholeReductions) {}
  std::vector<StmtPtr> before;

  void extract(ExprPtr& e) {
    if (Blocked) return;
    switch (e->kind) {
      case ExprKind::Logical: extract(cast<Logical>(*e).lhs); Blocked = true; return;
      case ExprKind::Select: extract(cast<Select>(*e).cond); Blocked = true; return;
      case ExprKind::Compare: {
        auto& c = cast<Compare>(*e);
        extract(c.operands[0]);
        if (c.operands.size() > 2) return void(Blocked = true);
        extract(c.operands[1]);
        break;
      }
      case ExprKind::Call: {
        if (WholeReductions && wholeFold(*e)) return moveOut(e, "red");
        auto& c = cast<Call>(*e);
        bool operandsOfOther = !isElementwiseArrayCall(*e);
        for (auto& a : c.args) {
          if (Blocked) return;
          if (rowFoldable(*a)) moveOut(a);  // fused with its reduction
          else if (operandsOfOther && isElementwiseArrayCall(*a)) moveOut(a);
          else extract(a);
        }
        break;
      }
      default: forEachChild(*e, [&](ExprPtr& c) { extract(c); });
    }
    if (mayRaise(*e, Ctx.options.boundsCheck) || hasSideEffects(*e)) Blocked = true;
  }

 private:
  void moveOut(ExprPtr& tree, const char* hint = "e") {
    before.push_back(Ctx.spill(F, tree, hint));
    // The tree itself may raise (shapes that do not broadcast): later
    // operands stay where they are.
    Blocked = true;
  }

  Function& F;
  PassContext& Ctx;
  bool WholeReductions;
  bool Blocked = false;
};

class FuseAssignments : public StmtMutator {
 public:
  FuseAssignments(Function& f, PassContext& ctx)
      : F(f), Ctx(ctx), Extents(f), NonNegative(nonNegativeVars(f)), Private(privateArrays(f)) {}
  std::vector<StmtPtr> mutateStmt(StmtPtr s) override {
    if (auto* a = dyn_cast<Assign>(s.get()); a && foldable(*a)) {
      Fuser fuser = makeFuser();
      std::vector<StmtPtr> out = fuser.fuseFold(*a);
      if (!out.empty()) return out;
    }
    if (auto* a = dyn_cast<Assign>(s.get()); a && rowFoldable(*a)) {
      Fuser fuser = makeFuser();
      std::vector<StmtPtr> out = fuser.fuseRowFold(*a);
      if (!out.empty()) return out;
    }
    if (auto* r = dyn_cast<Return>(s.get()); r && r->value && foldable(*r->value))
      return throughTemporary(std::move(s), "red", &Fuser::fuseFold);  // `return R(E)`
    if (auto* r = dyn_cast<Return>(s.get()); r && r->value && pydd::rowFoldable(*r->value))
      return throughTemporary(std::move(s), "red", &Fuser::fuseRowFold);  // `return R(E, 1)`
    return extractAndFuse(std::move(s), true);
  }

 private:
  Fuser makeFuser() {
    Fuser fuser(F, Ctx, Extents, NonNegative, Private);
    fuser.FuseScalar = [this](StmtPtr s) { return extractAndFuse(std::move(s), true); };
    return fuser;
  }

  /// `s` after the element-wise trees (and, with `wholeReductions`, the
  /// whole-array reductions) among its operands moved into statements of
  /// their own before it, each fused.
  std::vector<StmtPtr> extractAndFuse(StmtPtr s, bool wholeReductions) {
    ExprPtr* value = nullptr;
    if (auto* a = dyn_cast<Assign>(s.get()); a && a->value) value = &a->value;
    if (auto* x = dyn_cast<ExprStmt>(s.get())) value = &x->expr;
    if (auto* r = dyn_cast<Return>(s.get()); r && r->value) value = &r->value;
    if (!value) return fuseOne(std::move(s));
    OperandExtractor extractor(F, Ctx, wholeReductions);
    extractor.extract(*value);
    std::vector<StmtPtr> out;
    for (auto& b : extractor.before) {
      auto& spill = cast<Assign>(*b);  // a fresh temporary's only assignment
      if (foldable(spill)) {
        Fuser fuser = makeFuser();
        std::vector<StmtPtr> folded = fuser.fuseFold(spill);
        // A reduction that does not fold computes its tree as before.
        if (folded.empty()) folded = extractAndFuse(std::move(b), false);
        for (auto& r : folded) out.push_back(std::move(r));
        continue;
      }
      Extents.addTemporary(cast<VarRef>(*spill.targets[0]).name, *spill.value);
      for (auto& r : fuseOne(std::move(b))) out.push_back(std::move(r));
    }
    for (auto& r : fuseOne(std::move(s))) out.push_back(std::move(r));
    return out;
  }

  /// `v = R(E)`: a whole-array reduction whose catalog entry folds elements
  /// one at a time, exactly in any order (any, all, an integer sum), or in
  /// NumPy's windows (a float sum: fuseWindowFold), of an element-wise tree.
  static bool foldable(const Assign& a) {
    if (a.targets.size() != 1 || a.targets[0]->kind != ExprKind::Var || !a.value) return false;
    return foldable(*a.value);
  }
  static bool rowFoldable(const Assign& a) {
    return a.targets.size() == 1 && a.targets[0]->kind == ExprKind::Var && a.value && pydd::rowFoldable(*a.value);
  }
  static bool foldable(const Expr& value) { return wholeFold(value); }

  /// `return X`: X computed by `how` (fuse or fold) into a temporary that
  /// is returned.
  std::vector<StmtPtr> throughTemporary(StmtPtr s, const char* hint, std::vector<StmtPtr> (Fuser::*how)(Assign&)) {
    StmtPtr a = Ctx.spill(F, cast<Return>(*s).value, hint);
    Fuser fuser = makeFuser();
    std::vector<StmtPtr> out = (fuser.*how)(cast<Assign>(*a));
    if (out.empty()) out.push_back(std::move(a));
    out.push_back(std::move(s));
    return out;
  }

  std::vector<StmtPtr> fuseOne(StmtPtr s) {
    if (auto* r = dyn_cast<Return>(s.get()); r && r->value && isElementwiseArrayCall(*r->value))
      return throughTemporary(std::move(s), "ret", &Fuser::fuse);  // `return E`
    if (auto* a = dyn_cast<Assign>(s.get())) {
      Fuser fuser = makeFuser();
      std::vector<StmtPtr> out = rowFoldable(*a) ? fuser.fuseRowFold(*a) : fuser.fuse(*a);
      if (!out.empty()) return out;
    }
    return StmtMutator::mutateStmt(std::move(s));
  }

  Function& F;
  PassContext& Ctx;
  ArrayExtents Extents;
  // Computed before any rewrite: fusion's own temporaries are new names,
  // it never rebinds a variable of the source, and the views it makes of
  // a destination live within the statement it rewrites.
  std::set<std::string> NonNegative;
  std::map<std::string, PrivateArray> Private;
};

}  // namespace

void fuseElementwise(Function& f, PassContext& context) {
  FuseAssignments fuse(f, context);
  fuse.mutateBlock(*f.body);
}

}  // namespace pydd
