// Sinkhorn Word Mover's Distance, hand-written C++.
//
// Every document's Sinkhorn iteration is independent of the others: with the
// term matrix transposed to document-major (CSC) order, one OpenMP task runs
// all iterations of one document over its non-zeros only (c .* (1 / (K.T u))
// is needed at c's non-zeros), with K, K / r and K .* M stored word-major
// (vocabulary x query words) so each inner product is one contiguous row.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace py = pybind11;
template <class T>
using Arr = py::array_t<T, py::array::c_style | py::array::forcecast>;

static py::array_t<double> sinkhorn_wmd(Arr<double> r_in, Arr<double> c_data_in, Arr<int32_t> c_indices_in,
                                        Arr<int32_t> c_indptr_in, int64_t n_docs, Arr<double> vecs_in,
                                        double lamb, int64_t max_iter) {
    const double* r = r_in.data();
    const double* c_data = c_data_in.data();
    const int32_t* c_indices = c_indices_in.data();
    const int32_t* c_indptr = c_indptr_in.data();
    const double* vecs = vecs_in.data();
    const int64_t vocab = vecs_in.shape(0), dim = vecs_in.shape(1);
    const int64_t nnz = c_indptr[c_indptr_in.shape(0) - 1];
    py::array_t<double> out(n_docs);
    double* wmd = out.mutable_data();
    {
        py::gil_scoped_release nogil;
        std::vector<int64_t> sel;
        for (int64_t i = 0; i < vocab; ++i)
            if (r[i] > 0) sel.push_back(i);
        const int64_t a = static_cast<int64_t>(sel.size());

        // word-major K, K / r, K .* M: row i holds the a query words
        std::vector<double> Kt(vocab * a), Krt(vocab * a), KMt(vocab * a);
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < vocab; ++i) {
            const double* vi = vecs + i * dim;
            for (int64_t q = 0; q < a; ++q) {
                const double* vq = vecs + sel[q] * dim;
                double d = 0.0;
#pragma omp simd reduction(+ : d)
                for (int64_t k = 0; k < dim; ++k) {
                    double t = vq[k] - vi[k];
                    d += t * t;
                }
                double m = std::sqrt(d), kk = std::exp(-lamb * m);
                Kt[i * a + q] = kk;
                Krt[i * a + q] = kk / r[sel[q]];
                KMt[i * a + q] = kk * m;
            }
        }

        // CSC of c (document-major), rows ascending within each document
        std::vector<int64_t> colptr(n_docs + 1, 0);
        for (int64_t p = 0; p < nnz; ++p) ++colptr[c_indices[p] + 1];
        for (int64_t j = 0; j < n_docs; ++j) colptr[j + 1] += colptr[j];
        std::vector<int32_t> rowidx(nnz);
        std::vector<double> cval(nnz);
        {
            std::vector<int64_t> next(colptr.begin(), colptr.end() - 1);
            for (int64_t i = 0; i < vocab; ++i)
                for (int64_t p = c_indptr[i]; p < c_indptr[i + 1]; ++p) {
                    int64_t q = next[c_indices[p]]++;
                    rowidx[q] = static_cast<int32_t>(i);
                    cval[q] = c_data[p];
                }
        }

#pragma omp parallel
        {
            std::vector<double> u(a), x(a), v;
#pragma omp for schedule(dynamic, 16)
            for (int64_t j = 0; j < n_docs; ++j) {
                const int64_t p0 = colptr[j], len = colptr[j + 1] - p0;
                v.resize(len);
                for (int64_t q = 0; q < a; ++q) x[q] = 1.0 / a;
                for (int64_t it = 0; it <= max_iter; ++it) {
                    for (int64_t q = 0; q < a; ++q) u[q] = 1.0 / x[q];
                    // v = c .* (1 / (K.T @ u)) at this document's words
                    for (int64_t e = 0; e < len; ++e) {
                        const double* k = &Kt[rowidx[p0 + e] * a];
                        double s = 0.0;
#pragma omp simd reduction(+ : s)
                        for (int64_t q = 0; q < a; ++q) s += k[q] * u[q];
                        v[e] = cval[p0 + e] / s;
                    }
                    if (it == max_iter) break;
                    // x = (K / r) @ v
                    for (int64_t q = 0; q < a; ++q) x[q] = 0.0;
                    for (int64_t e = 0; e < len; ++e) {
                        const double* k = &Krt[rowidx[p0 + e] * a];
                        const double w = v[e];
#pragma omp simd
                        for (int64_t q = 0; q < a; ++q) x[q] += k[q] * w;
                    }
                }
                // WMD = sum(u .* ((K .* M) @ v))
                double total = 0.0;
                for (int64_t e = 0; e < len; ++e) {
                    const double* k = &KMt[rowidx[p0 + e] * a];
                    double s = 0.0;
#pragma omp simd reduction(+ : s)
                    for (int64_t q = 0; q < a; ++q) s += k[q] * u[q];
                    total += s * v[e];
                }
                wmd[j] = total;
            }
        }
    }
    return out;
}

PYBIND11_MODULE(cpp_version, m) {
    m.def("sinkhorn_wmd", &sinkhorn_wmd, py::arg("r"), py::arg("c_data"), py::arg("c_indices"),
          py::arg("c_indptr"), py::arg("n_docs"), py::arg("vecs"), py::arg("lamb"), py::arg("max_iter"));
}
