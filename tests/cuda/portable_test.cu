// Kernels written against pydd/cuda/portable.h, the way the CUDA emitter
// spells them, checked against host loops. Built two ways by
// tests/e2e/test_cuda.py: with g++ (the CPU emulation, run here) and with
// `nvcc -ptx -arch=sm_90 --fmad=false` (compiles for the device).
#include <cmath>
#include <cstdio>
#include <vector>

#include "pydd/cuda/portable.h"

using pydd::cuda::dim;

static int failures = 0;
#define EXPECT(cond, what)                                        \
  do {                                                            \
    if (!(cond)) {                                                \
      std::printf("FAIL %s (line %d)\n", what, __LINE__);        \
      ++failures;                                                 \
    }                                                             \
  } while (0)

// y[i*sy] = a * x[i*sx] + y[i*sy]: a fused element-wise loop, strided views.
template <class T>
PYDD_GLOBAL void axpy(int64_t n, T a, const T* x, int64_t sx, T* y, int64_t sy) {
  int64_t i = int64_t(pydd_blockIdx.x) * pydd_blockDim.x + pydd_threadIdx.x;
  if (i < n) y[i * sy] = a * x[i * sx] + y[i * sy];
}

// Reverses each block's segment through shared memory (needs the barrier).
PYDD_GLOBAL void reverse_blocks(int64_t n, const double* x, double* y) {
  PYDD_SHARED double tile[64];
  unsigned t = pydd_threadIdx.x;
  int64_t base = int64_t(pydd_blockIdx.x) * 64;
  tile[t] = base + t < n ? x[base + t] : 0.0;
  PYDD_SYNCTHREADS();
  // Reads another thread's slot: wrong without the barrier.
  if (base + t < n) y[base + t] = tile[63 - t];
}

// An integer reduction by atomics: the count of positive elements.
PYDD_GLOBAL void count_positive(int64_t n, const double* x, int64_t* count) {
  int64_t i = int64_t(pydd_blockIdx.x) * pydd_blockDim.x + pydd_threadIdx.x;
  if (i < n && x[i] > 0) pydd::cuda::atomic_add(count, int64_t(1));
}

// y[i] = x[i] / z[i], ZeroDivisionError recorded per thread.
PYDD_GLOBAL void divide(int64_t n, const double* x, const double* z, double* y, pydd::cuda::KernelErrors* err) {
  int64_t i = int64_t(pydd_blockIdx.x) * pydd_blockDim.x + pydd_threadIdx.x;
  if (i >= n) return;
  if (z[i] == 0.0) {
    pydd::cuda::record_error(err, i, pydd::cuda::kZeroDivision);
    return;
  }
  y[i] = x[i] / z[i];
}

// Half the threads skip the barrier: undefined on a GPU, an error here.
PYDD_GLOBAL void divergent(double* y) {
  if (pydd_threadIdx.x % 2 == 0) return;
  PYDD_SYNCTHREADS();
  y[pydd_threadIdx.x] = 1.0;
}

// One thread per row of a CSR matrix: out[r] = sum of the row's entries * x[col].
PYDD_GLOBAL void csr_rows(int64_t rows, const int64_t* indptr, const int64_t* indices, const double* data,
                          const double* x, double* out) {
  int64_t r = int64_t(pydd_blockIdx.x) * pydd_blockDim.x + pydd_threadIdx.x;
  if (r >= rows) return;
  double acc = 0.0;
  for (int64_t k = indptr[r]; k < indptr[r + 1]; ++k) acc = acc + data[k] * x[indices[k]];
  out[r] = acc;
}

// sqrt, bit for bit with the host under --fmad=false.
PYDD_GLOBAL void roots(int64_t n, const double* x, double* y) {
  int64_t i = int64_t(pydd_blockIdx.x) * pydd_blockDim.x + pydd_threadIdx.x;
  if (i < n) y[i] = std::sqrt(x[i]) * x[i] - x[i] / 3.0;
}

template <class T>
T* to_device(const std::vector<T>& v) {
  T* d = static_cast<T*>(pydd::cuda::device_alloc(sizeof(T) * v.size()));
  pydd::cuda::copy_to_device(d, v.data(), sizeof(T) * v.size());
  return d;
}
template <class T>
void to_host(std::vector<T>& v, const T* d) {
  pydd::cuda::copy_to_host(v.data(), d, sizeof(T) * v.size());
}

static unsigned blocks_for(int64_t n, unsigned threads) { return unsigned((n + threads - 1) / threads); }

template <class T>
void test_axpy(int64_t n, int64_t sx, const char* what) {
  std::vector<T> x(n * sx), y(n), expect(n);
  for (int64_t i = 0; i < n * sx; ++i) x[i] = T((i * 37) % 101 - 50);
  for (int64_t i = 0; i < n; ++i) y[i] = T((i * 13) % 17 - 8);
  T a = T(3);
  for (int64_t i = 0; i < n; ++i) expect[i] = T(a * x[i * sx] + y[i]);
  T* dx = to_device(x);
  T* dy = to_device(y);
  pydd::cuda::launch(&axpy<T>, dim(blocks_for(n, 128)), dim(128), n, a, (const T*)dx, sx, dy, int64_t(1));
  to_host(y, dy);
  pydd::cuda::device_free(dx);
  pydd::cuda::device_free(dy);
  EXPECT(std::memcmp(y.data(), expect.data(), sizeof(T) * n) == 0, what);
}

int main() {
  try {
    test_axpy<double>(1000, 1, "float64 axpy, 1000 elements in blocks of 128");
    test_axpy<double>(0, 1, "float64 axpy, empty");
    test_axpy<double>(777, 3, "float64 axpy, stride 3");
    test_axpy<float>(1001, 1, "float32 axpy");
    test_axpy<int8_t>(300, 2, "int8 axpy wraps");

    {
      int64_t n = 200;  // not a multiple of 64
      std::vector<double> x(n), y(n, -1.0);
      for (int64_t i = 0; i < n; ++i) x[i] = double(i);
      double* dx = to_device(x);
      double* dy = to_device(y);
      pydd::cuda::launch(&reverse_blocks, dim(blocks_for(n, 64)), dim(64), n, (const double*)dx, dy);
      to_host(y, dy);
      bool ok = true;
      for (int64_t i = 0; i < n; ++i) {
        int64_t base = i / 64 * 64, src = base + 63 - (i - base);
        double want = src < n ? x[src] : 0.0;
        ok = ok && y[i] == want;
      }
      EXPECT(ok, "shared memory and __syncthreads");
      pydd::cuda::device_free(dx);
      pydd::cuda::device_free(dy);
    }

    {
      int64_t n = 10007;
      std::vector<double> x(n);
      int64_t want = 0;
      for (int64_t i = 0; i < n; ++i) {
        x[i] = std::sin(double(i));
        want += x[i] > 0;
      }
      double* dx = to_device(x);
      std::vector<int64_t> count(1, 0);
      int64_t* dc = to_device(count);
      pydd::cuda::launch(&count_positive, dim(blocks_for(n, 256)), dim(256), n, (const double*)dx, dc);
      to_host(count, dc);
      EXPECT(count[0] == want, "atomic integer reduction");
      for (int64_t m : {int64_t(0), int64_t(1), int64_t(255), int64_t(257), n, int64_t(300000) + 7}) {
        std::vector<double> v(m);
        for (int64_t i = 0; i < m; ++i) v[i] = std::sin(double(i) * 0.37) * 1e3 + 1.0 / (1.0 + i);
        double* dv = to_device(v);
        double got = pydd::cuda::deterministic_sum(dv, m);
        double ref = pydd::cuda::reference_tree_sum(v.data(), m);
        EXPECT(std::memcmp(&got, &ref, sizeof got) == 0, "two-pass sum equals the host tree bit for bit");
        pydd::cuda::device_free(dv);
      }
      pydd::cuda::device_free(dx);
      pydd::cuda::device_free(dc);
    }

    {
      int64_t n = 1000;
      std::vector<double> x(n, 1.0), z(n, 2.0), y(n, 0.0);
      z[700] = 0.0;
      z[300] = 0.0;
      z[999] = 0.0;
      double* dx = to_device(x);
      double* dz = to_device(z);
      double* dy = to_device(y);
      std::vector<pydd::cuda::KernelErrors> err(1, {pydd::cuda::kNoError});
      auto* de = to_device(err);
      pydd::cuda::launch(&divide, dim(blocks_for(n, 256)), dim(256), n, (const double*)dx, (const double*)dz, dy,
                         de);
      to_host(err, de);
      EXPECT(pydd::cuda::failed_iteration(err[0]) == 300, "lowest failing iteration");
      EXPECT(pydd::cuda::failed_code(err[0]) == pydd::cuda::kZeroDivision, "error code");
      pydd::cuda::device_free(dx);
      pydd::cuda::device_free(dz);
      pydd::cuda::device_free(dy);
      pydd::cuda::device_free(de);
    }

    {
      // rows 0, 2, 5 and the last are empty
      std::vector<int64_t> indptr = {0, 0, 2, 2, 3, 5, 5, 6, 6};
      std::vector<int64_t> indices = {1, 3, 0, 2, 3, 1};
      std::vector<double> data = {1.5, -2.0, 4.0, 0.25, 8.0, 3.0}, x = {1.0, 2.0, 3.0, 4.0};
      int64_t rows = int64_t(indptr.size()) - 1;
      std::vector<double> out(rows, -1.0), want(rows, 0.0);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = indptr[r]; k < indptr[r + 1]; ++k) want[r] = want[r] + data[k] * x[indices[k]];
      auto *dp = to_device(indptr), *di = to_device(indices);
      auto *dd = to_device(data), *dx = to_device(x), *dout = to_device(out);
      pydd::cuda::launch(&csr_rows, dim(blocks_for(rows, 4)), dim(4), rows, (const int64_t*)dp, (const int64_t*)di,
                         (const double*)dd, (const double*)dx, dout);
      to_host(out, dout);
      EXPECT(out == want, "one thread per sparse row, rows of length 0");
      for (void* p : {(void*)dp, (void*)di, (void*)dd, (void*)dx, (void*)dout}) pydd::cuda::device_free(p);
    }

    {
      int64_t n = 4099;
      std::vector<double> x(n), y(n), want(n);
      for (int64_t i = 0; i < n; ++i) x[i] = 0.001 * i * i + 0.5;
      for (int64_t i = 0; i < n; ++i) want[i] = std::sqrt(x[i]) * x[i] - x[i] / 3.0;
      double* dx = to_device(x);
      double* dy = to_device(y);
      pydd::cuda::launch(&roots, dim(blocks_for(n, 256)), dim(256), n, (const double*)dx, dy);
      to_host(y, dy);
      EXPECT(std::memcmp(y.data(), want.data(), sizeof(double) * n) == 0, "sqrt * - / bit-identical");
      pydd::cuda::device_free(dx);
      pydd::cuda::device_free(dy);
    }

#if !defined(__CUDACC__)
    {
      std::vector<double> y(8, 0.0);
      bool caught = false;
      try {
        pydd::cuda::launch(&divergent, dim(1), dim(8), y.data());
      } catch (const pydd::cuda::DeviceError& e) {
        caught = std::string(e.what()).find("__syncthreads") != std::string::npos;
      }
      EXPECT(caught, "a divergent __syncthreads is reported");
    }
#endif
  } catch (const std::exception& e) {
    std::printf("FAIL exception: %s\n", e.what());
    return 2;
  }
  if (failures == 0) std::printf("PASS\n");
  return failures ? 1 : 0;
}
