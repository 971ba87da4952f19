#include "opt/PrefetchGathers.h"

#include <algorithm>
#include <set>
#include <string>

#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/Loops.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// The column variable of a loop over S.row(i) or S.nonzeros() that starts
/// by unpacking its entry and binds the column nowhere else, else null.
const std::string* columnOf(const For& f) {
  auto* entries = f.isRange || !f.iterable ? nullptr : dyn_cast<Call>(f.iterable.get());
  if (!entries || !entries->library || !entries->library->yieldsEntries || f.body->stmts.empty()) return nullptr;
  const size_t column = entries->library->sparseAccess == SparseAccess::NonZeros ? 1 : 0;
  auto* unpack = dyn_cast<Assign>(f.body->stmts[0].get());
  auto* entry = unpack && unpack->value ? dyn_cast<VarRef>(unpack->value.get()) : nullptr;
  if (!entry || entry->name != f.var || unpack->targets.size() <= column) return nullptr;
  auto* j = dyn_cast<VarRef>(unpack->targets[column].get());
  if (!j) return nullptr;
  VarCounts counts;
  counts.count(*f.body);
  return counts.binds[j->name] == 1 ? &j->name : nullptr;
}

/// Appends to `arrays` each 1-D array variable not in `rebound` that `e`
/// reads as `x[column]`.
void addGathers(const Expr& e, const std::string& column, const std::set<std::string>& rebound,
                std::vector<std::string>& arrays) {
  if (auto* x = dyn_cast<Index>(&e); x && x->indices.size() == 1) {
    auto* base = dyn_cast<VarRef>(x->base.get());
    auto* at = dyn_cast<VarRef>(x->indices[0].get());
    if (base && at && at->name == column && base->type.isArray() && base->type.rank() == 1 &&
        !rebound.count(base->name) && std::find(arrays.begin(), arrays.end(), base->name) == arrays.end())
      arrays.push_back(base->name);
  }
  forEachChild(e, [&](const Expr& child) { addGathers(child, column, rebound, arrays); });
}

}  // namespace

void prefetchGathers(Function& f, PassContext& context) {
  markOutermost(*f.body, [&](Stmt& s) {
    auto* loop = dyn_cast<For>(&s);
    const std::string* column = loop ? columnOf(*loop) : nullptr;
    if (!column) return false;
    const std::set<std::string> rebound = assignedVars(*loop->body);
    std::vector<std::string> arrays;
    std::function<void(const Block&)> onBlock = [&](const Block& b) {
      for (auto& st : b.stmts)
        forEachPart(*st, [&](const Expr& e) { addGathers(e, *column, rebound, arrays); }, onBlock);
    };
    onBlock(*loop->body);
    if (arrays.empty()) return false;
    loop->gathersFrom = std::move(arrays);
    ++context.stats["prefetch: sparse loops prefetch the vectors they gather from"];
    return false;  // a loop inside may gather too
  });
}

}  // namespace pydd
