// The algorithm and its conditions are in DeviceLoops.h.
#include "opt/DeviceLoops.h"

#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/Loops.h"
#include "stdlib/Catalog.h"

namespace pydd {

const char* kindName(DeviceLoopKind k) {
  switch (k) {
    case DeviceLoopKind::Host: return "host";
    case DeviceLoopKind::Kernel: return "kernel";
    case DeviceLoopKind::Reduction: return "reduction kernel";
    case DeviceLoopKind::Rows: return "row kernel";
    case DeviceLoopKind::Inside: return "in kernel";
  }
  return "host";
}

namespace {

bool hostOnlyType(const Type& t) {
  if (t.isList() || t.isDict() || t.isHeap() || t.isString()) return true;
  if (t.isTuple())
    for (const Type& e : t.elems())
      if (hostOnlyType(e)) return true;
  return false;
}

/// Why the body of a candidate cannot run on the device; empty when it can.
/// The first reason in source order is kept.
class HostOnly : public Visitor {
 public:
  explicit HostOnly(const DeviceSupport* s) : support(s) {}
  const DeviceSupport* support;
  std::string reason;
  void visit(const Expr& e) override {
    if (!reason.empty()) return;
    // A loop's iterable over a sparse row's entries (`for j, v in S.row(i)`)
    // reads the matrix in place: its list type allocates nothing.
    if (auto* c = dyn_cast<Call>(&e); c && c->library && c->library->yieldsEntries) {
      visitChildren(e);
      return;
    }
    if (!e.type.isUnknown() && hostOnlyType(e.type)) {
      reason = "uses a list, dict, heap or string (containers stay on the host)";
      return;
    }
    auto* c = dyn_cast<Call>(&e);
    // A user function may allocate or print; the reason shown is the call.
    if (c && c->target == CallTarget::User) {
      reason = "calls the function '" + c->callee + "' (only element formulas run on the device)";
      return;
    }
    if (nodeMayAllocate(e)) {
      reason = "may allocate (a temporary per iteration; allocation stays on the host)";
      return;
    }
    if (c) {
      if (c->library) {
        const LibraryFunction& f = *c->library;
        if (f.io) {
          reason = std::string("calls '") + f.name + "', which does I/O";
          return;
        }
        bool deviceSafe = f.category == LibraryCategory::Elementwise || f.category == LibraryCategory::Query ||
                          f.category == LibraryCategory::Sparse;
        if (!deviceSafe) {
          reason = std::string("calls '") + f.name + "', which the catalog does not class element-wise";
          return;
        }
      }
    }
    if (support) reason = support->unsupported(e);
    if (!reason.empty()) return;
    visitChildren(e);
  }
  void visit(const Stmt& s) override {
    if (!reason.empty()) return;
    if (s.kind == StmtKind::Task) reason = "holds async, finish or isolated";
    else if (s.kind == StmtKind::Return) reason = "returns from inside the loop";
    else if (s.kind == StmtKind::Break) reason = "may leave the loop early (break)";
    else if (auto* a = dyn_cast<Assign>(&s); a && !a->declared.isUnknown() && hostOnlyType(a->declared))
      reason = "uses a list, dict, heap or string (containers stay on the host)";
    if (!reason.empty()) return;
    visitChildren(s);
    // The emitter's limits after DeviceLoops' own reasons (an allocation
    // says more than the array assignment that keeps it).
    if (support && reason.empty()) reason = support->unsupported(s);
  }
};

class Planner {
 public:
  Planner(const ParallelPlan& p, DevicePlan& out, const DeviceSupport* s) : parallel(p), plan(out), support(s) {}

  void function(const Function& f) {
    fn = &f;
    block(*f.body, false);
  }

 private:
  const ParallelPlan& parallel;
  DevicePlan& plan;
  const DeviceSupport* support;
  const Function* fn = nullptr;
  std::string enclosing;  // the remark of a loop nested in a kernel
  std::string hostParallel;  // the host loop running on all threads that holds this one

  void add(DeviceLoop d) {
    plan.index[d.loop] = plan.loops.size();
    plan.loops.push_back(std::move(d));
  }

  void block(const Block& b, bool inside) {
    for (auto& s : b.stmts) stmt(*s, inside);
  }

  void nested(const Stmt& s, bool inside) {
    forEachPart(s, [](const Expr&) {}, [&](const Block& b) { block(b, inside); });
  }

  void stmt(const Stmt& s, bool inside) {
    if (s.kind == StmtKind::Task) {
      // Loops in a task stay with the task on the host.
      nested(s, true);
      return;
    }
    auto* loop = s.kind == StmtKind::For ? static_cast<const For*>(&s) : nullptr;
    if (!loop) {
      nested(s, inside);
      return;
    }
    DeviceLoop d;
    d.loop = loop;
    d.function = fn;
    if (inside) {
      d.kind = DeviceLoopKind::Inside;
      d.reason = enclosing.empty() ? "stays on the host with the task that holds it" : enclosing;
      add(std::move(d));
      nested(s, true);
      return;
    }
    if (!hostParallel.empty()) {
      // Its iterations would launch kernels at the same time from host
      // threads, each copying the arrays it writes back whole.
      d.reason = "stays on the host: nested in " + hostParallel;
      add(std::move(d));
      nested(s, false);
      return;
    }
    classify(*loop, d);
    bool device = d.kind != DeviceLoopKind::Host;
    // A pfor or fused nest that stays on the host may run on all threads.
    bool parallelHost = !device && (loop->independent || !loop->foldsInto.empty() ||
                                    (loop->parallel && parallel.loops.count(loop) && parallel.loops.at(loop).parallel));
    std::string saved = enclosing;
    if (device)
      enclosing = std::string("part of the ") + kindName(d.kind) + " of the loop at line " +
                  std::to_string(loop->loc.line) + (d.collapse > 1 ? " (collapsed into it)" : "");
    add(std::move(d));
    if (parallelHost) hostParallel = "the loop at line " + std::to_string(loop->loc.line) + ", which runs in parallel on the host";
    nested(s, device);
    if (parallelHost) hostParallel.clear();
    enclosing = saved;
  }

  void classify(const For& loop, DeviceLoop& d) {
    auto planned = parallel.loops.find(&loop);
    bool pfor = loop.parallel && planned != parallel.loops.end() && planned->second.parallel;
    bool rows = rowsLoopMatrix(loop) != nullptr && (pfor || loop.rowsInPairs);
    bool fold = !loop.foldsInto.empty();
    if (loop.parallel && !pfor) {
      d.reason = "stays on the host: this pfor runs sequentially (" +
                 (planned != parallel.loops.end() ? planned->second.reason : std::string("not planned")) + ")";
      return;
    }
    if (!pfor && !loop.independent && !fold && !rows) {
      d.reason = "stays on the host: a sequential loop (not a pfor, nor marked independent by fusion)";
      return;
    }
    if (!loop.isRange) {
      d.reason = "stays on the host: a loop over an array's elements (only range loops map to threads)";
      return;
    }
    if (rows && support && !support->rowKernels()) {
      d.reason = "stays on the host: a loop over sparse rows (the emitter prints no row kernels)";
      return;
    }
    HostOnly check(support);
    check.visit(*loop.body);
    for (const Expr* e : {loop.start.get(), loop.stop.get(), loop.step.get()})
      if (e) check.visit(*e);
    if (!check.reason.empty()) {
      d.reason = "stays on the host: the body " + check.reason;
      return;
    }
    if (pfor) {
      d.collapse = planned->second.collapse;
      d.reductions = planned->second.reductions;
    }
    if (fold) d.reductions.push_back({loop.foldsInto, "fold"});
    if (rows) {
      d.kind = DeviceLoopKind::Rows;
      d.reason = "row kernel: one thread per row of a sparse matrix";
    } else if (!d.reductions.empty()) {
      d.kind = DeviceLoopKind::Reduction;
      // Integer folds are exact in any order (atomics may add them); float
      // ones keep one order: the trees'.
      d.atomics = fold || allInteger(loop, d);
      d.reason = std::string("reduction kernel: two passes (per-block trees, then one block) on a grid set by the "
                             "extent alone") +
                 (allInteger(loop, d) ? " (integers: exact)" : "");
    } else {
      d.kind = DeviceLoopKind::Kernel;
      d.reason = loop.parallel ? "kernel: one thread per iteration of the pfor" : "kernel: one thread per iteration of the fused element-wise nest";
    }
    if (d.collapse > 1) d.reason += " (" + std::to_string(d.collapse) + " loops collapsed)";
  }

  // Whether every reduction variable is an integer (fn's locals say).
  bool allInteger(const For&, const DeviceLoop& d) {
    for (auto& r : d.reductions) {
      bool integer = false;
      for (auto& l : fn->locals)
        if (l.name == r.var) integer = l.type.isInteger() || l.type.isBool();
      for (auto& p : fn->params)
        if (p.name == r.var) integer = p.type.isInteger() || p.type.isBool();
      if (!integer) return false;
    }
    return true;
  }
};

}  // namespace

DevicePlan planDeviceLoops(const Module& m, const ParallelPlan& parallel, bool /*boundsCheck*/,
                           const DeviceSupport* support) {
  DevicePlan plan;
  Planner planner(parallel, plan, support);
  for (auto& f : m.functions) planner.function(*f);
  return plan;
}

}  // namespace pydd
