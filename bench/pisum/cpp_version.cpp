// pi_sum (the Julia microbenchmark), hand-written: the partial sum of 1/k^2,
// recomputed reps times.
#include <pybind11/pybind11.h>

#include <cstdint>

namespace py = pybind11;

static double pisum(int64_t reps, int64_t n) {
    py::gil_scoped_release release;
    double s = 0.0;
    for (int64_t j = 0; j < reps; ++j) {
        s = 0.0;
        for (int64_t k = 1; k <= n; ++k) s += 1.0 / static_cast<double>(k * k);
    }
    return s;
}

PYBIND11_MODULE(cpp_version, m) { m.def("pisum", &pisum, py::arg("reps"), py::arg("n")); }
