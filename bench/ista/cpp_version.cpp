// ISTA for l1-regularized PageRank, hand-written: the seeds run in parallel
// (OpenMP), each with its own q, gradient and scratch vector; Q q through a
// CSR matvec loop.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace py = pybind11;
template <class T>
using In = py::array_t<T, py::array::c_style | py::array::forcecast>;

// GCC's -O3 -march=native vectorizes the CSR row sum with AVX-512 gathers
// and an in-order lane-by-lane reduction, about twice as slow as the scalar
// loop on this machine: keep this function's loops scalar.
__attribute__((optimize("no-tree-vectorize")))
static py::array_t<double> ista(In<int64_t> seeds_a, In<int64_t> indptr_a, In<int64_t> indices_a,
                                In<double> data_a, double alpha, double rho, int64_t iters) {
  const int64_t n = indptr_a.size() - 1, ns = seeds_a.size();
  const int64_t* seeds = seeds_a.data();
  const int64_t* indptr = indptr_a.data();
  const int64_t* indices = indices_a.data();
  const double* data = data_a.data();
  py::array_t<double> scores_a({n, ns});
  double* scores = scores_a.mutable_data();
  {
    py::gil_scoped_release release;
    std::vector<double> d_sqrt(n), dn_sqrt(n), thresh(n);
    for (int64_t i = 0; i < n; ++i) {
      double d = 0.0;
      for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) d += data[k];
      d_sqrt[i] = std::sqrt(d);
      dn_sqrt[i] = 1.0 / d_sqrt[i];
      thresh[i] = rho * alpha * d_sqrt[i];
    }
    const double c = (1 - alpha) / 2;
#pragma omp parallel
    {
      std::vector<double> q(n), y(n), grad(n);
#pragma omp for schedule(dynamic)
      for (int64_t s = 0; s < ns; ++s) {
        const int64_t seed = seeds[s];
        const double g_seed = -alpha * dn_sqrt[seed];  // grad0 is zero elsewhere
        std::fill(q.begin(), q.end(), 0.0);
        std::fill(grad.begin(), grad.end(), 0.0);
        grad[seed] = g_seed;
        for (int64_t it = 0; it < iters; ++it) {
          for (int64_t i = 0; i < n; ++i) {
            const double z = q[i] - grad[i];
            q[i] = z >= thresh[i] ? z - thresh[i] : z <= -thresh[i] ? z + thresh[i] : 0.0;
            y[i] = dn_sqrt[i] * q[i];
          }
          for (int64_t i = 0; i < n; ++i) {
            // four partial sums break the add latency chain of a long row
            double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
            int64_t k = indptr[i];
            const int64_t e = indptr[i + 1];
            for (; k + 4 <= e; k += 4) {
              a0 += data[k] * y[indices[k]];
              a1 += data[k + 1] * y[indices[k + 1]];
              a2 += data[k + 2] * y[indices[k + 2]];
              a3 += data[k + 3] * y[indices[k + 3]];
            }
            for (; k < e; ++k) a0 += data[k] * y[indices[k]];
            const double acc = (a0 + a1) + (a2 + a3);
            grad[i] = (i == seed ? g_seed : 0.0) + (q[i] - c * (q[i] + dn_sqrt[i] * acc));
          }
        }
        for (int64_t i = 0; i < n; ++i) scores[i * ns + s] = q[i] * d_sqrt[i];
      }
    }
  }
  return scores_a;
}

PYBIND11_MODULE(cpp_version, m) { m.def("ista", &ista); }
