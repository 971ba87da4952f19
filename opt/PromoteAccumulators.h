// Short array accumulators live in registers: a loop that adds into every
// element of a small local array on each iteration keeps the elements in
// scalar variables while it runs.
//
//     acc = zeros(C)                      acc = zeros(C)
//     for j in range(N):                  if shape(acc, 0) <= 8:
//         if A[i, j] == 0:                    a0 = acc[0] if 0 < len else 0 ...
//             for c in range(0, C, 1):        for j in range(N):
//                 acc[c] = acc[c] + F[j, c]       if A[i, j] == 0:
//                                                     if 0 < len: a0 = a0 + F[j, 0]
//                                                     ...
//                                             if 0 < len: acc[0] = a0 ...
//                                         else:
//                                             <the loop as it was>
//
// Why: each element of `acc` is a chain of additions through memory, a store
// and a reload per iteration (about 9 cycles on the machines measured,
// where an addition in a register takes 3-4), and with C unknown at compile
// time the C++ compiler cannot keep the elements in registers itself.
// bigCLAM's gradient sums rows of its 4-column F this way (`s += F[j]`,
// fused into such an inner loop), as do k-means centroid updates.
//
// What is rewritten: in a sequential `for` loop L, every inner loop
// `for c in range(0, n, 1): acc[c] = E` over the whole of acc (n provably
// equals len(acc)), whose E reads acc[c] and acc no other way (a loop that
// only writes acc has no chain to cut), becomes W guarded
// register updates (E with c replaced by 0..W-1). Other statements of L
// that use acc run with the registers spilled to acc before them and
// reloaded after them (the fusion pass's fallback paths). The rewritten
// loop runs when len(acc) <= W; the original loop otherwise. The additions
// happen in the same order, so results are the same bit for bit.
//
// When it is safe: acc's memory must be reachable only through acc while L
// runs. So acc is a local bound once, by a catalog call that returns a new
// array; it is never passed to a kernel function, put in a container, or
// handed to a call that writes another argument; a view of it may only be
// bound to a variable used nowhere in L but where the registers are
// spilled. E reads no other array L keeps in registers (its memory is
// stale there). L is not a pfor and holds no async/finish, and the statements
// that run with spilled registers do not break, continue or return out of
// L (that would skip the reload).
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Keeps the short accumulators of `f`'s loops in registers. Counts
/// "promote: accumulators kept in registers".
void promoteAccumulators(Function& f, PassContext& context);

}  // namespace pydd
