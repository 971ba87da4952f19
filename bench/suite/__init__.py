"""The benchmark suite: each kernel folder in bench/ that has a spec.py.

A kernel folder holds one algorithm written six ways, each exposing the same
entry function (spec.ENTRY):

    kernel.pydd          Intrepydd, compiled by pyddc at -O0 and -O3
    python_version.py    the Python/NumPy/SciPy original (the baseline)
    numba_version.py     @njit, same algorithm
    cython_version.pyx   boundscheck(False), wraparound(False)
    cpp_version.cpp      hand-written C++ behind a pybind11 module
    spec.py              data generator, argument adapters, validation

spec.py defines:

    ENTRY = "name"               the entry function of every version
    PFOR = True/False            whether kernel.pydd uses pfor
    TOLERANCE = "text"           how results are compared, for the report
    def generate(size)           size is "small" or "full"; seeded, returns
                                 any object (the data)
    def arguments(data, version) a fresh argument tuple for one call; runs
                                 outside the timed region before every call
                                 (copy what the kernel writes)
    def result(returned, args)   optional: the value to validate (default:
                                 what the entry returned)
    def check(expected, got)     raises AssertionError when got (any
                                 version) disagrees with expected (Python's)

See bench/README.md for the runner.
"""

from suite.kernels import Kernel, discover, VERSIONS  # noqa: F401
