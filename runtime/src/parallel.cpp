// The OpenMP team behind pydd::parallel_range (pydd/parallel.h), compiled
// once instead of once per loop nest that uses it.
#include "pydd/parallel.h"

namespace pydd {

void run_parts(int64_t start, int64_t stop, int threads, void (*part)(const void*, int64_t, int64_t),
               const void* context) {
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), n = omp_get_num_threads(), len = stop - start;
    const int64_t lo = start + (len / n) * t + std::min(t, len % n);
    const int64_t hi = lo + len / n + (t < len % n ? 1 : 0);
    if (lo < hi) part(context, lo, hi);
  }
}

}  // namespace pydd
