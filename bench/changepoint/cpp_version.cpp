// Graph change-point detection, hand-written C++: the Python algorithm over
// the CSR arrays of the graph (indptr, indices). hi_cross is a binary
// min-heap (std::push_heap/pop_heap) of upper endpoints, lo_cross a counter
// (only its length is read). The 2-D scan's offsets are independent: OpenMP
// over offsets (dynamic schedule: offset k scans n - k nodes), one heap
// buffer per thread. The z-scores are element-wise loops.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

namespace py = pybind11;
using I64 = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
using F64 = py::array_t<double, py::array::c_style | py::array::forcecast>;

static void scan_stat(const int64_t *indptr, const int64_t *indices, int64_t n, int64_t offset,
                      int64_t *R, std::vector<int64_t> &heap) {
    heap.clear();
    int64_t lo_cross = 0;
    std::greater<int64_t> cmp;  // min-heap
    for (int64_t src = 0; src < n; ++src) {
        if (src >= offset) {
            for (int64_t e = indptr[src]; e < indptr[src + 1]; ++e) {
                int64_t neib = indices[e];
                if (neib > src) {
                    heap.push_back(neib);
                    std::push_heap(heap.begin(), heap.end(), cmp);
                } else if (neib < offset) {
                    ++lo_cross;
                }
            }
        }
        while (!heap.empty() && heap.front() <= src) {
            std::pop_heap(heap.begin(), heap.end(), cmp);
            heap.pop_back();
        }
        R[src] = static_cast<int64_t>(heap.size()) + lo_cross;
    }
}

struct Degrees {
    double nE;
    int64_t deg_sq;
};

static Degrees degree_stats(const int64_t *indptr, int64_t n) {
    int64_t total = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) {
        int64_t d = indptr[i + 1] - indptr[i];
        total += d;
        sq += d * d;
    }
    return {total / 2.0, sq};
}

static py::tuple changepoint(I64 indptr_a, I64 indices_a) {
    const int64_t n = indptr_a.shape(0) - 1;
    I64 R_a(n), R2_a({n, n});
    F64 Z_a(n), Z2_a({n, n});
    const int64_t *indptr = indptr_a.data(), *indices = indices_a.data();
    int64_t *R = R_a.mutable_data(), *R2 = R2_a.mutable_data();
    double *Z = Z_a.mutable_data(), *Z2 = Z2_a.mutable_data();
    const int64_t nnz = indices_a.shape(0);
    {
        py::gil_scoped_release release;
        const Degrees dg = degree_stats(indptr, n);
        const double nE = dg.nE, deg_sq = static_cast<double>(dg.deg_sq);
        const double d1 = static_cast<double>(n * (n - 1));
        const double d2 = static_cast<double>(n * (n - 1) * (n - 2));
        const double d3 = static_cast<double>(n * (n - 1) * (n - 2) * (n - 3));

        // 1-D scan and its z-scores
        std::vector<int64_t> heap;
        heap.reserve(nnz);
        scan_stat(indptr, indices, n, 0, R, heap);
        for (int64_t i = 0; i < n; ++i) {
            const int64_t tt = i + 1;
            const double mu_t = nE * 2 * tt * (n - tt) / d1;
            const double p1_tt = static_cast<double>(2 * tt * (n - tt)) / d1;
            const double p2_tt = static_cast<double>(tt * (n - tt) * (n - 2)) / d2;
            const double p3_tt = static_cast<double>(4 * tt * (n - tt) * (tt - 1) * (n - tt - 1)) / d3;
            const double A_tt = (p1_tt - 2 * p2_tt + p3_tt) * nE + (p2_tt - p3_tt) * deg_sq + p3_tt * (nE * nE);
            Z[i] = (mu_t - R[i]) / std::sqrt(A_tt - mu_t * mu_t + 1e-7);
        }

        // 2-D scan: one row per offset, in parallel; z-scores row by row
#pragma omp parallel
        {
            std::vector<int64_t> h;
            h.reserve(nnz);
#pragma omp for schedule(dynamic, 4)
            for (int64_t k = 0; k < n; ++k) {
                int64_t *row = R2 + k * n;
                scan_stat(indptr, indices, n, k + 1, row, h);
                double *zrow = Z2 + k * n;
                for (int64_t j = 0; j < n; ++j) {
                    const int64_t tt = std::max<int64_t>(j - k, 0);
                    const double mu_t = nE * 2 * tt * (n - tt) / d1;
                    const double p1_tt = static_cast<double>(2 * tt * (n - tt)) / d1;
                    const double p2_tt = static_cast<double>(4 * tt * (n - tt) * (tt - 1) * (n - tt - 1)) / d3;
                    const double V_tt = p2_tt * nE + (p1_tt / 2 - p2_tt) * deg_sq + (p2_tt - p1_tt * p1_tt) * (nE * nE);
                    zrow[j] = (mu_t - row[j]) / std::sqrt(V_tt + 1e-7);
                }
            }
        }
    }
    return py::make_tuple(R_a, Z_a, R2_a, Z2_a);
}

PYBIND11_MODULE(cpp_version, m) {
    m.def("changepoint", &changepoint, py::arg("indptr"), py::arg("indices"),
          "1-D and 2-D graph scan statistics and z-scores: (R, Z, R_2d, Z_2d)");
}
