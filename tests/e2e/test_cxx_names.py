"""User names that are C or C++ names: modules, functions and variables named
after every <cmath> and <cstdlib> function, C++ keyword and a few C macros
build and run (generated C++ renames them away from the library's names).

  * one module holds a function per name, each with a local variable named
    after another name and an array parameter (so a call may look in the
    runtime's namespace too); every function is called and compared with
    the Python run;
  * a module per name: each module's C++ (its namespace is the module name)
    is checked in one compile of all of them together, and a few are built
    and imported in full.
"""

import keyword
import subprocess

import numpy as np
import pytest

from conftest import run_pyddc
import pydd

CMATH = """
abs fabs fmod remainder remquo fma fmax fmin fdim nan exp exp2 expm1 log log10 log2 log1p pow sqrt cbrt hypot
sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh erf erfc tgamma lgamma ceil floor trunc
round lround llround nearbyint rint lrint llrint frexp ldexp modf scalbn scalbln ilogb logb nextafter
nexttoward copysign fpclassify isfinite isinf isnan isnormal signbit isgreater isgreaterequal isless
islessequal islessgreater isunordered assoc_laguerre assoc_legendre beta comp_ellint_1 comp_ellint_2
comp_ellint_3 cyl_bessel_i cyl_bessel_j cyl_bessel_k cyl_neumann ellint_1 ellint_2 ellint_3 expint hermite
laguerre legendre riemann_zeta sph_bessel sph_legendre sph_neumann
""".split()
# float and long double variants: sqrtf, sqrtl, ...
CMATH_VARIANTS = [n + s for n in CMATH[1:45] for s in "fl"]
CSTDLIB = """
abort atexit at_quick_exit exit quick_exit getenv system malloc calloc realloc free aligned_alloc atof atoi
atol atoll strtol strtoll strtoul strtoull strtof strtod strtold mblen mbtowc wctomb mbstowcs wcstombs rand
srand qsort bsearch labs llabs div ldiv lldiv div_t ldiv_t lldiv_t size_t EXIT_SUCCESS EXIT_FAILURE
MB_CUR_MAX NULL RAND_MAX
""".split()
CXX_KEYWORDS = """
alignas alignof and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
int long mutable namespace new noexcept not_eq nullptr operator or_eq private protected public register
reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch
template this thread_local throw true try typedef typeid typename union unsigned using virtual void
volatile wchar_t while xor xor_eq
""".split()
# Other C names a kernel plausibly uses: <ctime>, <cstdio>, glibc's math
# extras, macros.
OTHERS = "time clock y0 y1 j0 j1 gamma index EOF errno stdout stdin stderr printf INT_MAX M_PI NAN INFINITY".split()

# Names a kernel cannot take for other reasons: Python keywords, and the
# conversions that pydd (like Python) gives a meaning.
PYDD_NAMES = {"int", "float", "bool", "double"}
NAMES = sorted({n for n in CMATH + CMATH_VARIANTS + CSTDLIB + CXX_KEYWORDS + OTHERS
                if n.isidentifier() and not keyword.iskeyword(n) and n not in PYDD_NAMES})


def names_kernel():
    """A function per name; each stores into a local named after the next
    name, and `call_all` calls every one."""
    lines = ["from pydd import *", ""]
    for i, name in enumerate(NAMES):
        local = NAMES[(i + 1) % len(NAMES)]
        lines += [f"def {name}(a: Array(float64), k: int64) -> float64:",
                  f"    {local} = a[k] * {i + 1}.0",
                  f"    return {local} + float64(k)", ""]
    lines += ["def call_all(a: Array(float64)) -> Array(float64):",
              f"    out = zeros({len(NAMES)})"]
    lines += [f"    out[{i}] = {name}(a, {i % 3})" for i, name in enumerate(NAMES)]
    lines += ["    return out", ""]
    return "\n".join(lines)


@pytest.mark.parametrize("opt", [0, 3], ids=["O0", "O3"])
def test_functions_and_variables_named_after_c_names(tmp_path, opt):
    src = tmp_path / f"names_O{opt}.pydd"
    src.write_text(names_kernel())
    mod = pydd.compile(src, out_dir=tmp_path, opt=opt)
    ref = pydd.load_python(src, "names_ref")
    a = np.array([1.5, -2.0, 4.25])
    np.testing.assert_array_equal(mod.call_all(a), ref.call_all(a))
    assert getattr(mod, "abs")(a, 2) == ref.abs(a, 2) == 4.25 * (NAMES.index("abs") + 1) + 2.0
    assert getattr(mod, "time")(a, 1) == ref.time(a, 1)


def module_kernel(name):
    return f"from pydd import *\n\ndef {name}(x: int64) -> int64:\n    {name} = x + 1\n    return {name}\n"


def test_every_module_name_compiles(tmp_path, pyddc):
    """Each module's C++ (namespace = module name, function and variable of
    the same name) for every name, compiled together in one translation unit."""
    bodies = []
    for name in NAMES:
        src = tmp_path / f"{name}.pydd"
        src.write_text(module_kernel(name))
        r = run_pyddc("--emit=cpp", "--host=cpp", src)
        assert r.returncode == 0, f"{name}: {r.stderr}"
        bodies.append("\n".join(l for l in r.stdout.splitlines() if not l.startswith("#include")))
    unit = tmp_path / "all_modules.cpp"
    unit.write_text('#include "pydd/runtime.h"\n#include <cstdint>\n#include <limits>\n#include <tuple>\n' +
                    "\n".join(bodies))
    flags = subprocess.run([pyddc, "--cxxflags"], capture_output=True, text=True, check=True).stdout.split()
    r = subprocess.run(["c++", *flags, "-fsyntax-only", str(unit)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:4000]


@pytest.mark.parametrize("name", ["abs", "pow", "time", "div", "acos", "exit", "new", "EOF"])
def test_module_named_after_c_name_builds_and_runs(tmp_path, name):
    src = tmp_path / f"{name}.pydd"
    src.write_text(module_kernel(name))
    mod = pydd.compile(src, out_dir=tmp_path, opt=0)
    assert getattr(mod, name)(41) == 42
