// bench/gpu.py's device measurements, written against pydd/cuda/portable.h
// as generated kernels are: a copy kernel (the bandwidth reference), the
// fused y = a * x + y, and the deterministic two-pass sum. Prints one
// `name seconds bytes` line per measurement (the best of `reps`).
// Usage: gpu_kernels N REPS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "pydd/cuda/portable.h"

using pydd::cuda::dim;

PYDD_GLOBAL void copy_kernel(int64_t n, const double* x, double* y) {
  int64_t i = int64_t(pydd_blockIdx.x) * pydd_blockDim.x + pydd_threadIdx.x;
  if (i < n) y[i] = x[i];
}
PYDD_GLOBAL void axpy_kernel(int64_t n, double a, const double* x, double* y) {
  int64_t i = int64_t(pydd_blockIdx.x) * pydd_blockDim.x + pydd_threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

template <class F>
double best(int reps, F f) {
  double t = 1e300;
  for (int r = 0; r < reps; ++r) {
    auto s = std::chrono::steady_clock::now();
    f();  // launch synchronizes
    double d = std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count();
    t = d < t ? d : t;
  }
  return t;
}

int main(int argc, char** argv) {
  int64_t n = argc > 1 ? std::atoll(argv[1]) : 100000000;
  int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  try {
    std::vector<double> hx(n), hy(n);
    for (int64_t i = 0; i < n; ++i) {
      hx[i] = double(i % 1000) * 0.001;
      hy[i] = 1.0;
    }
    auto* x = static_cast<double*>(pydd::cuda::device_alloc(sizeof(double) * n));
    auto* y = static_cast<double*>(pydd::cuda::device_alloc(sizeof(double) * n));
    pydd::cuda::copy_to_device(x, hx.data(), sizeof(double) * n);
    pydd::cuda::copy_to_device(y, hy.data(), sizeof(double) * n);
    unsigned threads = 256, blocks = unsigned((n + threads - 1) / threads);
    double tc = best(reps, [&] { pydd::cuda::launch(&copy_kernel, dim(blocks), dim(threads), n, (const double*)x, y); });
    std::printf("copy %.6e %lld\n", tc, (long long)(2 * 8 * n));
    double ta = best(reps, [&] {
      pydd::cuda::launch(&axpy_kernel, dim(blocks), dim(threads), n, 1.0000001, (const double*)x, y);
    });
    std::printf("axpy %.6e %lld\n", ta, (long long)(3 * 8 * n));
    double s = 0;
    double ts = best(reps, [&] { s = pydd::cuda::deterministic_sum((const double*)x, n); });
    std::printf("sum %.6e %lld\n", ts, (long long)(8 * n));
    double ref = pydd::cuda::reference_tree_sum(hx.data(), n);
    std::printf("sum_bitwise_equal %d\n", int(s == ref));
    pydd::cuda::device_free(x);
    pydd::cuda::device_free(y);
  } catch (const std::exception& e) {
    std::printf("error %s\n", e.what());
    return 2;
  }
  return 0;
}
