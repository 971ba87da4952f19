// Recursive in-place quicksort (the Julia microbenchmark), hand-written:
// middle pivot, Hoare-style scan, recursion on the left part, loop on the right.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>
#include <utility>

namespace py = pybind11;

static void qsort_rec(double* a, int64_t lo, int64_t hi) {
    int64_t i = lo, j = hi;
    while (i < hi) {
        const double pivot = a[(lo + hi) / 2];
        while (i <= j) {
            while (a[i] < pivot) ++i;
            while (a[j] > pivot) --j;
            if (i <= j) {
                std::swap(a[i], a[j]);
                ++i;
                --j;
            }
        }
        if (lo < j) qsort_rec(a, lo, j);
        lo = i;
        j = hi;
    }
}

// Sorts a[lo..hi] in place. The benchmark passes a C-contiguous float64 array,
// so forcecast never copies (a copy would leave the caller's array unsorted).
static py::array_t<double> quicksort(py::array_t<double, py::array::c_style | py::array::forcecast> a,
                                     int64_t lo, int64_t hi) {
    if (lo < 0 || hi >= a.size()) throw std::out_of_range("quicksort: lo/hi out of range");
    double* p = a.mutable_data();
    {
        py::gil_scoped_release release;
        qsort_rec(p, lo, hi);
    }
    return a;
}

PYBIND11_MODULE(cpp_version, m) { m.def("quicksort", &quicksort, py::arg("a"), py::arg("lo"), py::arg("hi")); }
