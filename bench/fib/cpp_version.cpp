// Recursive Fibonacci, hand-written.
#include <pybind11/pybind11.h>

#include <cstdint>

static int64_t fib(int64_t n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

PYBIND11_MODULE(cpp_version, m) { m.def("fib", &fib); }
