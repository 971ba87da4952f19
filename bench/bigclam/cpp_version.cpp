// bigCLAM (RobRomijnders/bigclam main.py), hand-written C++: per-node gradient
// ascent of the community affiliations F, then the log-likelihood, for a
// fixed number of iterations.
//
// The gradient of row i visits row i of A in index order (neighbours and
// non-neighbours as np.where lists them), so the node updates keep the
// original's sequential (Gauss-Seidel) order. The log-likelihood uses the
// symmetry of A and of F F^T: each pair i < j once, counted twice, plus the
// diagonal (a non-edge), with log(1 - exp(-<F_i, F_j>)) only for the edges
// (the original multiplies it by A = 0 elsewhere); its rows are split over
// OpenMP threads.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace py = pybind11;

namespace {

using Adj = py::array_t<int8_t, py::array::c_style | py::array::forcecast>;
using Mat = py::array_t<double, py::array::c_style | py::array::forcecast>;

inline double sigm(double x) {
  double e = std::exp(-x);
  return e / (1. - e);
}

// C is a template parameter for the common small community counts so the
// per-pair loops over communities unroll into registers.
template <int CT>
struct Bigclam {
  const int8_t* A;
  double* F;
  int64_t N, C;

  int64_t cols() const { return CT > 0 ? CT : C; }

  double dot(const double* a, const double* b) const {
    double s = 0.0;
    for (int64_t c = 0; c < cols(); ++c) s += a[c] * b[c];
    return s;
  }

  void gradient(int64_t i, double* sum_neigh, double* sum_nneigh) const {
    const int64_t K = cols();
    const int8_t* Ai = A + i * N;
    const double* Fi = F + i * K;
    for (int64_t c = 0; c < K; ++c) sum_neigh[c] = sum_nneigh[c] = 0.0;
    for (int64_t j = 0; j < N; ++j) {
      const double* Fj = F + j * K;
      if (Ai[j]) {
        double s = sigm(dot(Fj, Fi));
        for (int64_t c = 0; c < K; ++c) sum_neigh[c] += Fj[c] * s;
      } else {
        for (int64_t c = 0; c < K; ++c) sum_nneigh[c] += Fj[c];
      }
    }
  }

  double log_likelihood() const {
    const int64_t K = cols();
    double sum_edges = 0.0, sum_nedges = 0.0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : sum_edges, sum_nedges) if (N >= 256)
    for (int64_t i = 0; i < N; ++i) {
      const int8_t* Ai = A + i * N;
      const double* Fi = F + i * K;
      double edges = 0.0, nedges = 0.0;
      for (int64_t j = i + 1; j < N; ++j) {
        double a_soft = dot(Fi, F + j * K);
        if (Ai[j]) edges += std::log(1. - std::exp(-a_soft));
        else nedges += a_soft;
      }
      sum_edges += 2.0 * edges;
      sum_nedges += 2.0 * nedges + dot(Fi, Fi);  // A[i, i] = 0
    }
    return sum_edges - sum_nedges;
  }

  void train(int64_t iterations, double lr, double* lls) {
    const int64_t K = cols();
    std::vector<double> sum_neigh(K), sum_nneigh(K);
    for (int64_t n = 0; n < iterations; ++n) {
      for (int64_t person = 0; person < N; ++person) {
        gradient(person, sum_neigh.data(), sum_nneigh.data());
        double* Fp = F + person * K;
        for (int64_t c = 0; c < K; ++c)
          Fp[c] = std::max(0.001, Fp[c] + lr * (sum_neigh[c] - sum_nneigh[c]));
      }
      lls[n] = log_likelihood();
    }
  }
};

template <int CT>
void run(const int8_t* A, double* F, int64_t N, int64_t C, int64_t iterations, double lr, double* lls) {
  Bigclam<CT>{A, F, N, C}.train(iterations, lr, lls);
}

py::tuple train(Adj A, Mat F_in, int64_t iterations, double lr) {
  if (A.ndim() != 2 || F_in.ndim() != 2 || A.shape(0) != A.shape(1) || F_in.shape(0) != A.shape(0))
    throw std::invalid_argument("train: A must be N x N and F N x C");
  const int64_t N = A.shape(0), C = F_in.shape(1);
  auto F = F_in.mutable_unchecked<2>();
  double* Fp = F.mutable_data(0, 0);
  py::array_t<double> lls(iterations);
  double* L = lls.mutable_data();
  const int8_t* Ap = A.data();
  {
    py::gil_scoped_release release;
    switch (C) {
      case 2: run<2>(Ap, Fp, N, C, iterations, lr, L); break;
      case 3: run<3>(Ap, Fp, N, C, iterations, lr, L); break;
      case 4: run<4>(Ap, Fp, N, C, iterations, lr, L); break;
      case 8: run<8>(Ap, Fp, N, C, iterations, lr, L); break;
      default: run<0>(Ap, Fp, N, C, iterations, lr, L); break;
    }
  }
  return py::make_tuple(F_in, lls);
}

}  // namespace

PYBIND11_MODULE(cpp_version, m) {
  m.def("train", &train, py::arg("A"), py::arg("F"), py::arg("iterations"), py::arg("lr"),
        "bigCLAM: updates F in place (when it is float64 and C-contiguous, else a copy); returns (F, log-likelihood per iteration)");
}
