// PR-Nibble (optimized parallel variant), hand-written: the seeds run in
// parallel (OpenMP), each with its own p, r, r' and frontier.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <vector>

namespace py = pybind11;
template <class T>
using In = py::array_t<T, py::array::c_style | py::array::forcecast>;

static py::array_t<double> pr_nibble(In<int64_t> seeds_a, In<int64_t> indptr_a, In<int64_t> indices_a,
                                     In<double> data_a, double alpha, double epsilon) {
  const int64_t n = indptr_a.size() - 1, ns = seeds_a.size();
  const int64_t* seeds = seeds_a.data();
  const int64_t* indptr = indptr_a.data();
  const int64_t* indices = indices_a.data();
  const double* data = data_a.data();
  py::array_t<double> scores_a({n, ns});
  double* scores = scores_a.mutable_data();
  {
    py::gil_scoped_release release;
    std::vector<double> degrees(n, 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) degrees[i] += data[k];
    const double keep = 2 * alpha / (1 + alpha), spread = (1 - alpha) / (1 + alpha);
#pragma omp parallel
    {
      std::vector<double> p(n), r(n), r_prime(n);
      std::vector<int64_t> frontier;
      frontier.reserve(n);
#pragma omp for schedule(dynamic)
      for (int64_t s = 0; s < ns; ++s) {
        std::fill(p.begin(), p.end(), 0.0);
        std::fill(r_prime.begin(), r_prime.end(), 0.0);
        r_prime[seeds[s]] = 1.0;
        frontier.assign(1, seeds[s]);
        while (!frontier.empty()) {
          r = r_prime;
          for (int64_t v : frontier) {
            p[v] += keep * r[v];
            r_prime[v] = 0.0;
          }
          for (int64_t v : frontier) {
            const double update = spread * r[v] / degrees[v];
            for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) r_prime[indices[k]] += update;
          }
          frontier.clear();
          for (int64_t i = 0; i < n; ++i)
            if (r_prime[i] >= degrees[i] * epsilon) frontier.push_back(i);
        }
        for (int64_t i = 0; i < n; ++i) scores[i * ns + s] = p[i];
      }
    }
  }
  return scores_a;
}

PYBIND11_MODULE(cpp_version, m) { m.def("pr_nibble", &pr_nibble); }
