"""The kernel-facing names: scalar types, type annotations, the array library.

Each library function here is the meaning of the pydd function of the same
name: compiled kernels must give what these give (dtypes, shapes, values,
exception kinds). They are thin layers over NumPy (SciPy for ``lu`` and
``ludcmp``, ``heapq`` for heaps).

Importing this module switches NumPy to NumPy 2's promotion rules (NEP 50,
``np._set_promotion_state("weak")``), which pydd follows: a Python scalar is
weak (``int32_array + 1`` stays int32, ``float32_array * 2.5`` stays
float32), a NumPy scalar or array is not.

``sum``, ``min``, ``max``, ``abs``, ``any``, ``all`` and ``pow`` shadow the
builtins of the same name in a kernel (``from pydd import *``): on a NumPy
array they are NumPy's reductions (``min(A)`` propagates NaN, ``sum(A)`` of
an int32 array is int64, ``min(A, 1)`` reduces axis 1); on anything else
(scalars, lists) they are exactly the builtins.
"""

import builtins
import heapq

import numpy as np

if hasattr(np, "_set_promotion_state"):  # NumPy 2 has NEP 50 built in
    np._set_promotion_state("weak")

int32 = np.int32
int64 = np.int64
float32 = np.float32
float64 = np.float64
double = np.float64


def _dtype(spec):
    """A NumPy dtype from a type (``float64``, ``int``) or a typed zero (``int32()``)."""
    if isinstance(spec, np.generic):
        return spec.dtype
    if isinstance(spec, (builtins.bool, builtins.int, builtins.float)):
        return np.dtype(type(spec))
    try:
        return np.dtype(spec)
    except TypeError:
        raise TypeError(f"not a pydd element type: {spec!r}") from None


def _shape(spec):
    """An int, list or tuple of ints as a NumPy shape tuple."""
    if isinstance(spec, (builtins.int, np.integer)):
        return (builtins.int(spec),)
    if isinstance(spec, (list, tuple)):
        return tuple(builtins.int(n) for n in spec)
    raise TypeError(f"shape must be an int, list or tuple, not {type(spec).__name__}")


def _type_name(t):
    if isinstance(t, (ArrayType, ListType, DictType, HeapType, TupleType)):
        return repr(t)
    try:
        return np.dtype(t).name
    except TypeError:
        return getattr(t, "__name__", repr(t))


# ---- type annotations ---------------------------------------------------------


class ArrayType:
    """The annotation ``Array(dtype, ndim)``: a C-contiguous ndarray of that
    element type and rank."""

    __slots__ = ("dtype", "ndim")

    def __init__(self, dtype, ndim=1):
        if not isinstance(ndim, builtins.int) or isinstance(ndim, builtins.bool) or ndim < 1:
            raise TypeError(f"Array rank must be a positive int, not {ndim!r}")
        self.dtype = _dtype(dtype)
        self.ndim = ndim

    def __repr__(self):
        return f"Array({self.dtype.name}, {self.ndim})"

    def __eq__(self, other):
        return isinstance(other, ArrayType) and (self.dtype, self.ndim) == (other.dtype, other.ndim)

    def __hash__(self):
        return hash((ArrayType, self.dtype, self.ndim))

    def accepts(self, value):
        """True if ``value`` is what a compiled kernel takes for this parameter:
        an ndarray of this dtype and rank, any strides (views are taken as they
        are) as long as every stride is a whole number of elements."""
        return (isinstance(value, np.ndarray) and value.dtype == self.dtype and value.ndim == self.ndim
                and all(s % value.itemsize == 0 for s in value.strides))


def Array(dtype, ndim=1):
    """``Array(float64, 2)``: the type annotation for a 2-D float64 array."""
    return ArrayType(dtype, ndim)


class _ContainerType:
    """Base of the container annotations: equal when the kind and the member
    types are equal."""

    __slots__ = ("args",)
    _name = "?"

    def __init__(self, *args):
        self.args = args

    def __repr__(self):
        return f"{self._name}({', '.join(_type_name(a) for a in self.args)})"

    def __eq__(self, other):
        return type(other) is type(self) and self.args == other.args

    def __hash__(self):
        return hash((type(self), self.args))


class ListType(_ContainerType):
    """``List(T)``: a Python list of T (a scalar type or an Array type)."""

    _name = "List"

    @property
    def elem(self):
        return self.args[0]


class DictType(_ContainerType):
    """``Dict(K, V)``: a Python dict (bool/numeric keys)."""

    _name = "Dict"

    @property
    def key(self):
        return self.args[0]

    @property
    def value(self):
        return self.args[1]


class HeapType(_ContainerType):
    """``Heap(T)`` or ``Heap(K, V)``: a min-heap, as Python a list kept by
    ``heapq`` (of T, or of ``(key, value)`` tuples)."""

    _name = "Heap"

    @property
    def key_value(self):
        return len(self.args) == 2


class TupleType(_ContainerType):
    """``Tuple(T1, T2, ...)``: the type of several return values."""

    _name = "Tuple"


def List(elem):
    """``List(int64)``: the annotation for a list of int64."""
    return ListType(elem)


def Dict(key, value):
    """``Dict(int64, float64)``: the annotation for a dict."""
    return DictType(key, value)


def Heap(key, value=None):
    """``Heap(float64)`` (a min-heap of floats) or ``Heap(float64, int64)``
    (a min-heap of (key, value) pairs)."""
    return HeapType(key) if value is None else HeapType(key, value)


def Tuple(*elems):
    """``Tuple(int64, float64)``: the annotation for two return values."""
    return TupleType(*elems)


# ---- allocation -------------------------------------------------------------------


def zeros(shape, dtype=float64):
    """A new array of zeros; ``shape`` is an int, list or tuple, ``dtype`` a
    type (``int32``) or a typed zero (``int32()``)."""
    return np.zeros(_shape(shape), _dtype(dtype))


def ones(shape, dtype=float64):
    """A new array of ones (see :func:`zeros`)."""
    return np.ones(_shape(shape), _dtype(dtype))


def empty(shape, dtype=float64):
    """A new uninitialized array (see :func:`zeros`)."""
    return np.empty(_shape(shape), _dtype(dtype))


def full(shape, value, dtype=None):
    """A new array filled with ``value``; the dtype defaults to the value's
    (a Python float gives float64, an int int64, a bool bool)."""
    return np.full(_shape(shape), value, None if dtype is None else _dtype(dtype))


def _like(fn, a, dtype):
    return fn(a, dtype=None if dtype is None else _dtype(dtype), order="C")


def zeros_like(a, dtype=None):
    """A new C-contiguous array of zeros with ``a``'s shape (and dtype)."""
    return _like(np.zeros_like, a, dtype)


def ones_like(a, dtype=None):
    """A new C-contiguous array of ones with ``a``'s shape (and dtype)."""
    return _like(np.ones_like, a, dtype)


def empty_like(a, dtype=None):
    """A new uninitialized C-contiguous array with ``a``'s shape (and dtype)."""
    return _like(np.empty_like, a, dtype)


def copy(a):
    """A new C-contiguous copy of array ``a`` (a list or dict: a shallow copy)."""
    if isinstance(a, np.ndarray):
        return np.array(a, order="C", copy=True)
    if isinstance(a, (list, dict)):
        return a.copy()
    return a


def arange(start, stop=None, step=None, dtype=None):
    """``numpy.arange``: ``arange(n)``, ``arange(a, b)``, ``arange(a, b, s)``."""
    dt = None if dtype is None else _dtype(dtype)
    if stop is None:
        return np.arange(start, dtype=dt)
    if step is None:
        return np.arange(start, stop, dtype=dt)
    return np.arange(start, stop, step, dtype=dt)


def fill(a, value):
    """Sets every element of ``a`` to ``value`` (in place, through views too)."""
    a.fill(value)


# ---- queries ------------------------------------------------------------------------


def shape(a, k):
    """The extent of array ``a`` along axis ``k``."""
    return a.shape[k]


def ndim(a):
    """The rank of array ``a``."""
    return a.ndim


# ---- element-wise -------------------------------------------------------------------

add = np.add
sub = np.subtract
mul = np.multiply
div = np.true_divide
floordiv = np.floor_divide
mod = np.remainder
maximum = np.maximum
minimum = np.minimum
eq = np.equal
neq = np.not_equal
lt = np.less
gt = np.greater
le = np.less_equal
ge = np.greater_equal
logical_and = np.logical_and
logical_or = np.logical_or

minus = np.negative
isnan = np.isnan
isinf = np.isinf
logical_not = np.logical_not
elemwise_not = np.logical_not
sqrt = np.sqrt
exp = np.exp
log = np.log
cos = np.cos
sin = np.sin
tan = np.tan
acos = np.arccos
asin = np.arcsin
atan = np.arctan


def _keeps_integers(ufunc, x):
    # NumPy 2.3 semantics: floor/ceil of integers and bools return them unchanged
    # (NumPy 1.24 would compute in float64).
    if isinstance(x, np.ndarray):
        return x.copy() if x.dtype.kind in "biu" else ufunc(x)
    if isinstance(x, (builtins.bool, builtins.int, np.integer, np.bool_)):
        return x
    return ufunc(x)


def floor(x):
    """``numpy.floor``; integers and bools are returned unchanged (NumPy 2.3)."""
    return _keeps_integers(np.floor, x)


def ceil(x):
    """``numpy.ceil``; integers and bools are returned unchanged (NumPy 2.3)."""
    return _keeps_integers(np.ceil, x)


def where(cond, a=None, b=None):
    """``where(c)``: the flat indices of the true elements of ``c`` (int64);
    ``where(c, a, b)``: ``a`` where ``c`` is true, else ``b``, broadcast, in
    the promoted dtype of ``a`` and ``b`` (a Python scalar is weak)."""
    if a is None and b is None:
        return np.flatnonzero(cond)
    if a is None or b is None:
        raise TypeError("where() takes one or three arguments")
    rt = np.result_type(a, b)  # NEP 50 (np.where itself ignores weak scalars in 1.24)
    return np.where(cond, np.asarray(a).astype(rt, copy=False), np.asarray(b).astype(rt, copy=False))[()]


# ---- reductions ---------------------------------------------------------------------


def _is_array(x):
    return isinstance(x, np.ndarray)


def _axis_form(args, kwargs):
    """(array, axis) if ``args``/``kwargs`` are a NumPy reduction call, else None."""
    if not args or not _is_array(args[0]):
        return None
    if len(args) == 1 and set(kwargs) <= {"axis"}:
        return args[0], kwargs.get("axis")
    if len(args) == 2 and not kwargs and isinstance(args[1], (builtins.int, np.integer)) \
            and not isinstance(args[1], (builtins.bool, np.bool_)):
        return args[0], builtins.int(args[1])
    return None


def sum(*args, **kwargs):
    """``numpy.sum`` of an array (``sum(A, axis)``); the builtin otherwise."""
    form = _axis_form(args, kwargs)
    if form is not None:
        return np.sum(form[0], axis=form[1])
    return builtins.sum(*args, **kwargs)


def prod(a, axis=None):
    """``numpy.prod`` (``prod(A, axis)``)."""
    return np.prod(a, axis=axis)


def mean(a, axis=None):
    """``numpy.mean`` (``mean(A, axis)``): float64 for integer arrays."""
    return np.mean(a, axis=axis)


def min(*args, **kwargs):
    """``numpy.min`` of an array (NaN propagates; ``min(A, axis)``); the
    builtin on scalars and lists."""
    form = _axis_form(args, kwargs)
    if form is not None:
        return np.min(form[0], axis=form[1])
    return builtins.min(*args, **kwargs)


def max(*args, **kwargs):
    """``numpy.max`` of an array (see :func:`min`); the builtin otherwise."""
    form = _axis_form(args, kwargs)
    if form is not None:
        return np.max(form[0], axis=form[1])
    return builtins.max(*args, **kwargs)


def argmin(a):
    """The flat (C order) index of the first minimum; NaN counts as the minimum."""
    return np.argmin(a)


def argmax(a):
    """The flat (C order) index of the first maximum; NaN counts as the maximum."""
    return np.argmax(a)


def any(a, *args, **kwargs):
    """``numpy.any`` of an array; the builtin otherwise."""
    if _is_array(a):
        return np.any(a, *args, **kwargs)
    return builtins.any(a, *args, **kwargs)


def all(a, *args, **kwargs):
    """``numpy.all`` of an array; the builtin otherwise."""
    if _is_array(a):
        return np.all(a, *args, **kwargs)
    return builtins.all(a, *args, **kwargs)


def abs(x):
    """``numpy.abs`` of an array; the builtin otherwise."""
    if _is_array(x):
        return np.abs(x)
    return builtins.abs(x)


def pow(a, b, *mod):
    """``numpy.power`` when an operand is an array; the builtin otherwise."""
    if not mod and (_is_array(a) or _is_array(b)):
        return np.power(a, b)
    return builtins.pow(a, b, *mod)


def allclose(a, b, rtol=1e-05, atol=1e-08):
    """``numpy.allclose`` (NaN is never close), as a Python bool."""
    return builtins.bool(np.allclose(a, b, rtol=rtol, atol=atol))


# ---- linear algebra -------------------------------------------------------------------


def _need_rank(name, x, *ranks):
    nd = np.ndim(x)
    if nd not in ranks:
        raise TypeError(f"{name}() expects an array of rank {' or '.join(map(str, ranks))}, got rank {nd}")


def transpose(a):
    """The transposed view (axes reversed; a 1-D array is itself)."""
    return np.transpose(a)


def matmult(a, b):
    """``numpy.matmul`` (the ``@`` operator) of 1-D and 2-D arrays."""
    _need_rank("matmult", a, 1, 2)
    _need_rank("matmult", b, 1, 2)
    return np.matmul(a, b)


def innerprod(a, b):
    """The inner product of two 1-D arrays (``a @ b``)."""
    _need_rank("innerprod", a, 1)
    _need_rank("innerprod", b, 1)
    return np.matmul(a, b)


def matvect(A, x):
    """``A @ x`` for a 2-D ``A`` and a 1-D ``x``."""
    _need_rank("matvect", A, 2)
    _need_rank("matvect", x, 1)
    return np.matmul(A, x)


def vectmat(x, A):
    """``x @ A`` for a 1-D ``x`` and a 2-D ``A``."""
    _need_rank("vectmat", x, 1)
    _need_rank("vectmat", A, 2)
    return np.matmul(x, A)


def matmat(A, B):
    """``A @ B`` for 2-D arrays."""
    _need_rank("matmat", A, 2)
    _need_rank("matmat", B, 2)
    return np.matmul(A, B)


def syrk(A):
    """``A @ A.T`` (BLAS syrk)."""
    _need_rank("syrk", A, 2)
    return np.matmul(A, A.T)


def syr2k(A, B):
    """``A @ B.T + B @ A.T`` (BLAS syr2k)."""
    _need_rank("syr2k", A, 2)
    _need_rank("syr2k", B, 2)
    return np.matmul(A, B.T) + np.matmul(B, A.T)


def symm(A, B):
    """``S @ B`` for the symmetric ``S`` whose lower triangle is ``A``'s (BLAS symm)."""
    _need_rank("symm", A, 2)
    _need_rank("symm", B, 2)
    return np.matmul(np.tril(A) + np.tril(A, -1).T, B)


def trmm(A, B):
    """``tril(A) @ B`` (BLAS trmm, lower triangle, non-unit diagonal)."""
    _need_rank("trmm", A, 2)
    _need_rank("trmm", B, 2)
    return np.matmul(np.tril(A), B)


def lu(A):
    """``scipy.linalg.lu(A)``: (P, L, U) with ``A = P @ L @ U``."""
    import scipy.linalg
    _need_rank("lu", A, 2)
    return scipy.linalg.lu(A)


def ludcmp(A):
    """``scipy.linalg.lu_factor(A)``: (LU, piv) of a square ``A``; piv is int32."""
    import scipy.linalg
    _need_rank("ludcmp", A, 2)
    return scipy.linalg.lu_factor(A)


# ---- heaps ------------------------------------------------------------------------------


def heapinit():
    """A new empty heap (as Python, a list kept in heap order by heapq)."""
    return []


def heappush(h, key, *value):
    """Pushes ``key`` onto the heap, or the pair ``(key, value)`` onto a
    key-value heap."""
    if len(value) > 1:
        raise TypeError("heappush() takes a heap and a key, or a heap, a key and a value")
    heapq.heappush(h, (key, value[0]) if value else key)


def heappop(h):
    """Removes and returns the smallest entry (IndexError when empty)."""
    return heapq.heappop(h)


def heappeek(h):
    """The smallest entry without removing it (IndexError when empty)."""
    return h[0]


# ---- element-wise and/or/not (load_python rewrites the operators to these) -------------


def _and(first, *rest):
    """``a and b and ...``: element-wise logical_and once an operand is an
    array; Python's short-circuit ``and`` on scalars."""
    v = first
    for thunk in rest:
        if _is_array(v):
            v = np.logical_and(v, thunk())
            continue
        if not v:
            return v
        w = thunk()
        v = np.logical_and(v, w) if _is_array(w) else w
    return v


def _or(first, *rest):
    """``a or b or ...``: element-wise logical_or once an operand is an array."""
    v = first
    for thunk in rest:
        if _is_array(v):
            v = np.logical_or(v, thunk())
            continue
        if v:
            return v
        w = thunk()
        v = np.logical_or(v, w) if _is_array(w) else w
    return v


def _eq(a, b):
    """``a == b``: ``numpy.equal`` when an operand is an array."""
    if _is_array(a) or _is_array(b):
        return np.equal(a, b)
    return a == b


def _ne(a, b):
    """``a != b``: ``numpy.not_equal`` when an operand is an array."""
    if _is_array(a) or _is_array(b):
        return np.not_equal(a, b)
    return a != b


def _not(x):
    """``not x``: element-wise logical_not of an array."""
    if _is_array(x):
        return np.logical_not(x)
    return not x


# The names `from pydd import *` gives a kernel; also the names whose method
# spelling (`x.sqrt()`) load_python rewrites into calls.
__all__ = [
    "int32", "int64", "float32", "float64", "double",
    "Array", "List", "Dict", "Heap", "Tuple",
    "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "copy", "arange", "fill",
    "shape", "ndim",
    "add", "sub", "mul", "div", "floordiv", "mod", "pow", "maximum", "minimum",
    "eq", "neq", "lt", "gt", "le", "ge", "logical_and", "logical_or",
    "abs", "minus", "isnan", "isinf", "logical_not", "elemwise_not",
    "sqrt", "exp", "log", "cos", "sin", "tan", "acos", "asin", "atan", "floor", "ceil",
    "sum", "prod", "mean", "min", "max", "argmin", "argmax", "any", "all", "allclose", "where",
    "transpose", "matmult", "innerprod", "matvect", "vectmat", "matmat",
    "syrk", "syr2k", "symm", "trmm", "lu", "ludcmp",
    "heapinit", "heappush", "heappop", "heappeek",
]

# Library functions, i.e. the names whose method spelling is rewritten.
LIBRARY_FUNCTIONS = frozenset(n for n in __all__ if n not in {
    "int32", "int64", "float32", "float64", "double", "Array", "List", "Dict", "Heap", "Tuple"})
