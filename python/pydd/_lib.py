"""The kernel-facing names: scalar types, type annotations, the array library.

Each library function here is the meaning of the pydd function of the same
name: compiled kernels must give what these give (dtypes, shapes, values,
exception kinds). They are thin layers over NumPy (SciPy for ``lu`` and
``ludcmp`` and for sparse matrices, ``heapq`` for heaps).

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
import fractions
import heapq
import math
import operator
import sys
import time as _time

import numpy as np

if hasattr(np, "_set_promotion_state"):  # NumPy 2 has NEP 50 built in
    np._set_promotion_state("weak")

boolean = np.bool_  # the original Intrepydd's name of bool: zeros(n, boolean())
int32 = np.int32
int64 = np.int64
float32 = np.float32
float64 = np.float64
double = np.float64
complex64 = np.complex64
complex128 = np.complex128
int8 = np.int8
int16 = np.int16
uint8 = np.uint8
uint16 = np.uint16
uint32 = np.uint32
uint64 = np.uint64


def _dtype(spec):
    """A NumPy dtype from a type (``float64``, ``int``) or a typed zero (``int32()``)."""
    if isinstance(spec, np.generic):
        return spec.dtype
    if isinstance(spec, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
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
    if isinstance(t, (ArrayType, SparseMatType, ListType, DictType, HeapType, TupleType)):
        return repr(t)
    try:
        return np.dtype(t).name
    except TypeError:
        return getattr(t, "__name__", repr(t))


# ---- type annotations ---------------------------------------------------------


class ArrayType:
    """The annotation ``Array(dtype, ndim)``: an ndarray of that element type
    and rank. ``Array(dtype)`` leaves the rank open (``ndim`` is None): pyddc
    compiles the kernel for the ranks its body supports."""

    __slots__ = ("dtype", "ndim")

    def __init__(self, dtype, ndim=None):
        if ndim is not None and (not isinstance(ndim, builtins.int) or isinstance(ndim, builtins.bool) or ndim < 1):
            raise TypeError(f"Array rank must be a positive int, not {ndim!r}")
        self.dtype = _dtype(dtype)
        self.ndim = ndim

    def __repr__(self):
        return f"Array({self.dtype.name})" if self.ndim is None else f"Array({self.dtype.name}, {self.ndim})"

    def __eq__(self, other):
        return isinstance(other, ArrayType) and (self.dtype, self.ndim) == (other.dtype, other.ndim)

    def __hash__(self):
        return hash((ArrayType, self.dtype, self.ndim))

    def accepts(self, value):
        """True if ``value`` is what a compiled kernel takes for this parameter:
        an ndarray of this dtype and rank (any rank for ``Array(dtype)``), any
        strides (views are taken as they are) as long as every stride is a
        whole number of elements."""
        return (isinstance(value, np.ndarray) and value.dtype == self.dtype
                and (self.ndim is None or value.ndim == self.ndim)
                and all(s % value.itemsize == 0 for s in value.strides))


def Array(dtype, ndim=None):
    """``Array(float64, 2)``: the type annotation for a 2-D float64 array;
    ``Array(float64)``: of any rank."""
    return ArrayType(dtype, ndim)


class SparseMatType:
    """The annotation ``SparseMat(dtype)``: a 2-D sparse matrix of that
    element type (CSR in compiled code; any ``scipy.sparse`` matrix from
    Python, converted to CSR)."""

    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = _dtype(dtype)

    def __repr__(self):
        return f"SparseMat({self.dtype.name})"

    def __eq__(self, other):
        return isinstance(other, SparseMatType) and self.dtype == other.dtype

    def __hash__(self):
        return hash((SparseMatType, self.dtype))

    def accepts(self, value):
        """True if ``value`` is what a compiled kernel takes for this
        parameter: a 2-D scipy.sparse matrix or array of this dtype."""
        return _is_sparse(value) and value.dtype == self.dtype and len(value.shape) == 2


def SparseMat(dtype):
    """``SparseMat(float64)``: the type annotation for a sparse float64 matrix."""
    return SparseMatType(dtype)


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


def ascontiguousarray(a):
    """Array ``a`` itself when it is C-contiguous, else a C-contiguous copy."""
    return np.ascontiguousarray(a)


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


def shape(a, axis=None):
    """The extent of array ``a`` along ``axis``, or its shape tuple."""
    return a.shape if axis is None else a.shape[axis]


may_share_memory = np.may_share_memory
broadcast_to = np.broadcast_to


def unit_stride(a):
    """Whether the last axis of array ``a`` is contiguous."""
    return a.ndim == 0 or a.strides[-1] == a.itemsize


def fused_mul_add(a, b, c):
    """a * b + c rounded once (C's fma), exactly, through rationals."""
    a, b, c = float(a), float(b), float(c)
    if not all(map(math.isfinite, (a, b, c))):
        return a * b + c
    return float(fractions.Fraction(a) * fractions.Fraction(b) + fractions.Fraction(c))


# How this process's OpenBLAS adds a short vector's products in ddot, as
# pydd::detail::blas_dot_order asks it: in index order fused, in index order
# rounded, or otherwise (its SSE2 kernel's interleaved lanes).
def _dot_step(a, b, c, fused):
    return fused_mul_add(a, b, c) if fused else float(c) + float(a) * float(b)


def _in_order_dot(x, y, fused):
    acc = 0.0
    for a, b in zip(y, x):
        acc = _dot_step(a, b, acc, fused)
    return acc


def _blas_dot_order():
    rng = np.random.default_rng(16)
    vectors = [(rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)) for n in range(1, 16) for _ in range(8)]
    for fused in (True, False):
        if all(_in_order_dot(x, y, fused) == float(np.dot(x, y)) for x, y in vectors):
            return "fused" if fused else "rounded"
    return "other"


_BLAS_DOT_ORDER = _blas_dot_order()


def blas_dot_inline_limit():
    """The length below which a loop of blas_dot_step is NumPy's dot of two
    contiguous float64 vectors: 16, or 0 where OpenBLAS orders it otherwise."""
    return 0 if _BLAS_DOT_ORDER == "other" else 16


def blas_dot_step(a, b, c):
    """c + a * b rounded as OpenBLAS's ddot rounds each step of a short
    vector's sum: once (fused_mul_add) or after the product and the sum."""
    return _dot_step(a, b, c, _BLAS_DOT_ORDER == "fused")


def _shape_text(shape):
    return "(" + ",".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def broadcast_shapes_for(op, *shapes):
    """The shape of element-wise operation ``op``'s result for operands of
    these shapes (a scalar stands for shape ()); the operation's ValueError
    when they do not broadcast."""
    shapes = [tuple(s) if isinstance(s, tuple) else () for s in shapes]
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"{op}: operands could not be broadcast together with shapes "
                         + "".join(_shape_text(s) + " " for s in shapes)) from None


def ndim(a):
    """The rank of array ``a``."""
    return a.ndim


def size(a):
    """The number of elements of array ``a``."""
    return a.size


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
cos = np.cos
sin = np.sin
tan = np.tan
acos = np.arccos
asin = np.arcsin
atan = np.arctan
tanh = np.tanh
sinh = np.sinh
cosh = np.cosh
log2 = np.log2
log10 = np.log10
exp2 = np.exp2
expm1 = np.expm1
log1p = np.log1p
square = np.square
sign = np.sign
arctan2 = np.arctan2
hypot = np.hypot
logical_xor = np.logical_xor
bitwise_and = np.bitwise_and
bitwise_or = np.bitwise_or
bitwise_xor = np.bitwise_xor
conj = np.conj
conjugate = np.conjugate
angle = np.angle


def real(x):
    """``x.real``: of an array, NumPy's view of the real parts."""
    return np.real(x)


def imag(x):
    """``x.imag``: of an array, NumPy's view of the imaginary parts."""
    return np.imag(x)


def complex_parts(re, im):
    """``complex(re, im)`` on two real scalars."""
    return builtins.complex(re, im)


def astype(a, dtype):
    """``a.astype(dtype)``: a new array of the converted elements (of a complex
    array to a real dtype, the real parts, without NumPy's ComplexWarning)."""
    a = np.asarray(a)
    to = _dtype(dtype)
    if a.dtype.kind == "c" and to.kind != "c":
        a = a.real
    return a.astype(to)


def log(x, base=None):
    """``numpy.log(x)``; ``log(x, base)`` is :func:`log_base`."""
    if base is None:
        return np.log(x)
    return log_base(x, base)


def log_base(x, base):
    """``log(x, base)``: Python's ``math.log(x, base)`` when both are scalars
    (a float; ValueError for a value <= 0, ZeroDivisionError for base 1),
    else ``numpy.log(x) / numpy.log(base)``."""
    if _is_array(x) or _is_array(base):
        return np.log(x) / np.log(base)
    return math.log(x, base)


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
    """(array, axis, keepdims) if ``args``/``kwargs`` are a NumPy reduction
    call, else None."""
    if not args or not _is_array(args[0]):
        return None
    if len(args) == 1 and set(kwargs) <= {"axis", "keepdims"}:
        return args[0], kwargs.get("axis"), kwargs.get("keepdims", False)
    if len(args) == 2 and set(kwargs) <= {"keepdims"} and (args[1] is None or (
            isinstance(args[1], (builtins.int, np.integer)) and not isinstance(args[1], (builtins.bool, np.bool_)))):
        return args[0], None if args[1] is None else builtins.int(args[1]), kwargs.get("keepdims", False)
    return None


def sum(*args, **kwargs):
    """``numpy.sum`` of an array (``sum(A, axis)``); of a sparse matrix, SciPy's
    sum (``sum(S, axis)`` is 1-D: SciPy's (1, n) or (n, 1) matrix raveled);
    the builtin otherwise."""
    if args and _is_sparse(args[0]):
        return _spm_sum(*args, **kwargs)
    form = _axis_form(args, kwargs)
    if form is not None:
        return np.sum(form[0], axis=form[1], keepdims=form[2])
    return builtins.sum(*args, **kwargs)


def prod(a, axis=None, keepdims=False):
    """``numpy.prod`` (``prod(A, axis)``)."""
    return np.prod(a, axis=axis, keepdims=keepdims)


def mean(a, axis=None, keepdims=False):
    """``numpy.mean`` (``mean(A, axis)``): float64 for integer arrays."""
    return np.mean(a, axis=axis, keepdims=keepdims)


def all_axes():
    """pydd's spelling of NumPy's ``axis=None``."""
    return None


def var(a, axis=None, ddof=0, keepdims=False):
    """``numpy.var(a, axis, ddof=ddof, keepdims=keepdims)``."""
    return np.var(a, axis=axis, ddof=ddof, keepdims=keepdims)


def std(a, axis=None, ddof=0, keepdims=False):
    """``numpy.std(a, axis, ddof=ddof, keepdims=keepdims)``."""
    return np.std(a, axis=axis, ddof=ddof, keepdims=keepdims)


count_nonzero = np.count_nonzero
trace = np.trace
cumsum = np.cumsum
cumprod = np.cumprod
diff = np.diff
linspace = np.linspace
eye = np.eye
identity = np.identity
outer = np.outer
isclose = np.isclose
clip = np.clip
expand_dims = np.expand_dims
extract = np.extract
take = np.take


def shape_from_list(l, ndim):
    """``tuple(l)``, a ValueError unless it has ``ndim`` entries (what pyddc
    passes for ``x: Array(T, ndim) = zeros(l)``)."""
    if len(l) != ndim:
        raise ValueError(f"a shape list of length {len(l)} for an array declared with rank {ndim}")
    return tuple(builtins.int(n) for n in l)


def unpack(a, n):
    """``tuple(a)`` for ``x, y = a`` with a 1-D array (what pyddc makes of
    that statement), Python's ValueError for another length."""
    if len(a) > n:
        raise ValueError(f"too many values to unpack (expected {n})")
    if len(a) < n:
        raise ValueError(f"not enough values to unpack (expected {n}, got {len(a)})")
    return tuple(a)


def mask_take(a, mask, axis):
    """``a[mask]`` for a mask of a lower rank, ``a[:, mask]`` for axis 1...
    (what pyddc makes of that read)."""
    return a[(slice(None),) * axis + (mask,)]


def mask_assign(a, mask, values, axis=0):
    """``a[mask] = values`` (what pyddc makes of that store), the mask on the
    axes from ``axis`` on."""
    a[(slice(None),) * axis + (mask,)] = values


def index_assign(a, indices, values, axis=0):
    """``a[indices] = values`` (what pyddc makes of that store), the indices on
    ``axis``."""
    a[(slice(None),) * axis + (indices,)] = values


sort = np.sort
searchsorted = np.searchsorted
tile = np.tile
repeat = np.repeat
roll = np.roll
around = np.around
nonzero = np.nonzero
unravel_index = np.unravel_index


def array(object, dtype=None):
    """``numpy.array`` of nested lists or of an array (a copy)."""
    return np.array(object, dtype=dtype)


det = np.linalg.det
inv = np.linalg.inv
solve = np.linalg.solve


def norm(x, ord=None, axis=None):
    """``numpy.linalg.norm`` (the default ord only)."""
    return np.linalg.norm(x, ord, axis)


median = np.median
unique = np.unique
concatenate = np.concatenate
stack = np.stack
vstack = np.vstack
hstack = np.hstack


def argsort(a, axis=-1):
    """``numpy.argsort(a, axis, kind="stable")``: ties keep their order."""
    return np.argsort(a, axis=axis, kind="stable")


def reshape(a, *shape):
    """``numpy.reshape``; also ``a.reshape(m, n)``, which load_python turns into ``reshape(a, m, n)``."""
    return np.reshape(a, shape[0] if len(shape) == 1 else shape)


def ravel(a):
    """``numpy.ravel``."""
    return np.ravel(a)


def flatten(a):
    """``ndarray.flatten``: a copy."""
    return np.array(a).flatten()


def min(*args, **kwargs):
    """``numpy.min`` of an array (NaN propagates; ``min(A, axis)``); the
    builtin on scalars and lists."""
    form = _axis_form(args, kwargs)
    if form is not None:
        return np.min(form[0], axis=form[1], keepdims=form[2])
    return builtins.min(*args, **kwargs)


def max(*args, **kwargs):
    """``numpy.max`` of an array (see :func:`min`); the builtin otherwise."""
    form = _axis_form(args, kwargs)
    if form is not None:
        return np.max(form[0], axis=form[1], keepdims=form[2])
    return builtins.max(*args, **kwargs)


def argmin(a, axis=None, keepdims=False):
    """The flat (C order) index of the first minimum, or the indices along
    ``axis`` (int64); NaN counts as the minimum."""
    return np.argmin(a, axis=axis, keepdims=keepdims)


def argmax(a, axis=None, keepdims=False):
    """The flat (C order) index of the first maximum, or the indices along
    ``axis`` (int64); NaN counts as the maximum."""
    return np.argmax(a, axis=axis, keepdims=keepdims)


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
    """The transposed view (axes reversed; a 1-D array is itself); of a
    sparse matrix, a new CSR matrix with sorted rows."""
    if _is_sparse(a):
        return _csr_result(_csr(a).transpose().tocsr())
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


# ---- sparse matrices (SciPy) ------------------------------------------------------------
#
# A SparseMat is CSR in compiled code; here it is a scipy.sparse matrix. Results
# are csr_matrix with sorted column indices, except where the user supplied the
# order (csr_to_spm keeps it; S.row(i), S.nonzeros() and spm_to_csr read the
# storage order). Any scipy.sparse format is accepted as an operand.


def _is_sparse(x):
    """True for a scipy.sparse matrix or array (without importing SciPy: if
    scipy.sparse was never imported, nothing can be one)."""
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and sp.issparse(x)


def _scipy_sparse():
    import scipy.sparse
    return scipy.sparse


def _need_sparse(name, x, what="argument"):
    if not _is_sparse(x):
        raise TypeError(f"{name}() expects a SparseMat {what}, got {type(x).__name__}")


_SparseMatrix = None


def _sparse_class():
    """The reference's SparseMat: a ``scipy.sparse.csr_matrix`` whose
    operators mean what pydd's mean (NumPy's, as SciPy's sparse arrays):
    ``S * x`` is :func:`spm_mul` (element-wise; SciPy's matrices would
    multiply matrices), ``S + x`` :func:`spm_add` (a dense result is an
    ndarray, not an np.matrix), ``S @ x`` :func:`spmv`, :func:`spmm` or
    :func:`spmm_dense`, ``S.T`` :func:`transpose`. Defined on first use, so
    that SciPy is imported only by kernels that use sparse matrices."""
    global _SparseMatrix
    if _SparseMatrix is None:
        sp = _scipy_sparse()

        class SparseMatrix(sp.csr_matrix):
            __slots__ = ()

            def __mul__(self, other):
                return spm_mul(self, other)

            def __rmul__(self, other):
                return spm_mul(other, self)

            def __add__(self, other):
                return spm_add(self, other)

            def __radd__(self, other):
                return spm_add(other, self)

            def __matmul__(self, other):
                return _spm_matmul(self, other)

            def __neg__(self):
                return spm_map(self, "minus")

            def __abs__(self):
                return spm_map(self, "abs")

            def __rmatmul__(self, other):
                return _spm_matmul(other, self)

            @property
            def T(self):
                return transpose(self)

        SparseMatrix.__module__ = __name__
        SparseMatrix.__qualname__ = "SparseMatrix"
        _SparseMatrix = SparseMatrix
    return _SparseMatrix


def _share(cls, S):
    """A ``cls`` (csr_matrix or the reference's SparseMatrix) sharing CSR
    matrix ``S``'s arrays and flags."""
    if type(S) is cls:
        return S
    out = cls.__new__(cls)
    out.__dict__.update(S.__dict__)
    return out


def _csr(S):
    """``S`` as a plain ``scipy.sparse.csr_matrix`` (sharing ``S``'s arrays
    when it is CSR), on which SciPy's operators are SciPy's."""
    sp = _scipy_sparse()
    if isinstance(S, sp.csr_matrix) and not isinstance(S, sp.csr_array):
        return _share(sp.csr_matrix, S)
    return sp.csr_matrix(S) if S.format == "csr" else sp.csr_matrix(S.tocsr())


def _pydd_sparse(S):
    """``S`` as the reference's SparseMatrix (sharing a CSR matrix's arrays)."""
    return _share(_sparse_class(), _csr(S))


def _csr_result(x, sort=True):
    """A library result ``x`` as the reference's SparseMatrix (sorted rows
    unless ``sort`` is false)."""
    x = _pydd_sparse(x)
    if sort and not x.has_sorted_indices:
        x.sort_indices()
    return x


def _spm_matmul(a, b):
    """``a @ b`` with a sparse operand: spmv, spmm or spmm_dense."""
    if _is_sparse(a) and _is_sparse(b):
        return spmm(a, b)
    if _is_sparse(a) and isinstance(b, np.ndarray) and b.ndim == 1:
        return spmv(a, b)
    if _is_sparse(b) and isinstance(a, np.ndarray) and a.ndim == 1:
        if a.shape[0] != b.shape[0]:
            raise ValueError(f"dimension mismatch, {a.shape} @ {b.shape}")
        return spmv(transpose(b), a)
    return spmm_dense(a, b)


def _mentions_sparse(t):
    if isinstance(t, SparseMatType):
        return True
    if isinstance(t, _ContainerType):
        return builtins.any(_mentions_sparse(a) for a in t.args)
    return False


def _to_python(x):
    """A kernel's result as the caller gets it: sparse matrices as plain
    ``csr_matrix`` (sharing the arrays), inside tuples and lists too."""
    if _SparseMatrix is not None and isinstance(x, _SparseMatrix):
        return _csr(x)
    if isinstance(x, tuple):
        return tuple(_to_python(v) for v in x)
    if isinstance(x, list) and builtins.any(_is_sparse(v) for v in x):
        return [_to_python(v) for v in x]
    return x


def _sparse_kernel(fn):
    """``fn`` (a kernel with SparseMat in its signature) taking sparse
    arguments as the reference's SparseMatrix (CSR, sharing a CSR matrix's
    arrays) and returning them as plain ``csr_matrix``."""
    import functools

    def arg(x):
        return _pydd_sparse(x) if _is_sparse(x) else x

    @functools.wraps(fn)
    def kernel(*args, **kwargs):
        return _to_python(fn(*[arg(a) for a in args], **{k: arg(v) for k, v in kwargs.items()}))
    return kernel


def _need_index_array(name, what, a):
    if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype.kind not in "iu":
        raise TypeError(f"{name}() expects {what} as a 1-D int32 or int64 array, got "
                        f"{a.dtype if isinstance(a, np.ndarray) else type(a).__name__}"
                        f"{'' if not isinstance(a, np.ndarray) else f' of rank {a.ndim}'}")


def _is_scalar(x):
    return isinstance(x, (builtins.bool, builtins.int, builtins.float, np.generic))


def csr_to_spm(values, columns, indexes, ncols):
    """A sparse matrix from CSR arrays: ``csr_matrix((values, columns,
    indexes), shape=(len(indexes) - 1, ncols))``. ``indexes`` are the row
    pointers, ``columns`` the column indices (int32 or int64, in the order
    given: rows need not be sorted). ValueError if the arrays do not describe
    a matrix (pointers not starting at 0 or decreasing, columns out of range,
    too few values)."""
    sp = _scipy_sparse()
    if not isinstance(values, np.ndarray) or values.ndim != 1:
        raise TypeError(f"csr_to_spm() expects the values as a 1-D array, got {type(values).__name__}")
    _need_index_array("csr_to_spm", "the columns", columns)
    _need_index_array("csr_to_spm", "the indexes (row pointers)", indexes)
    ncols = operator.index(ncols)
    if len(indexes) < 1:
        raise ValueError("csr_to_spm(): the indexes (row pointers) need at least one element")
    if ncols < 0:
        raise ValueError(f"csr_to_spm(): negative number of columns {ncols}")
    S = sp.csr_matrix((values, columns, indexes), shape=(len(indexes) - 1, ncols))
    S.check_format(full_check=True)
    return _pydd_sparse(S)


def spm_to_csr(S, values, columns, indexes):
    """Copies ``S``'s CSR arrays into the caller's: ``values[:nnz]``,
    ``columns[:nnz]``, ``indexes[:nrows + 1]`` (storage order). ValueError,
    before anything is written, if one is too small."""
    _need_sparse("spm_to_csr", S)
    S = _csr(S)
    if not isinstance(values, np.ndarray) or values.ndim != 1 or values.dtype != S.dtype:
        raise TypeError(f"spm_to_csr() needs 1-D {S.dtype.name} values")
    _need_index_array("spm_to_csr", "the columns", columns)
    _need_index_array("spm_to_csr", "the indexes (row pointers)", indexes)
    n, m = builtins.int(S.indptr[-1]), S.shape[0]
    for what, a, need in (("values", values, n), ("columns", columns, n), ("indexes", indexes, m + 1)):
        if len(a) < need:
            raise ValueError(f"spm_to_csr(): {what} has {len(a)} elements, the matrix needs {need}")
    values[:n] = S.data[:n]
    columns[:n] = S.indices[:n]
    indexes[:m + 1] = S.indptr


def empty_spm(nrows, ncols, dtype=float64):
    """A new ``nrows`` x ``ncols`` sparse matrix with no entries."""
    nrows, ncols = operator.index(nrows), operator.index(ncols)
    if nrows < 0 or ncols < 0:
        raise ValueError(f"empty_spm(): negative dimensions ({nrows}, {ncols})")
    return _pydd_sparse(_scipy_sparse().csr_matrix((nrows, ncols), dtype=_dtype(dtype)))


def spm_set_item(S, value, r, c):
    """``S[r, c] = value``: overwrites the entry or inserts it (negative
    indices wrap; IndexError out of range)."""
    _need_sparse("spm_set_item", S)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _scipy_sparse().SparseEfficiencyWarning)
        S[r, c] = value


def spm_set_item_unsafe(S, value, r, c):
    """:func:`spm_set_item` for entries stored in row-major order (compiled
    code appends; the caller promises the order)."""
    spm_set_item(S, value, r, c)


def spm_diags(v):
    """The ``n`` x ``n`` sparse matrix with the 1-D ``v`` on its diagonal, as
    ``scipy.sparse.diags(v)`` in CSR (zeros not stored; float64 unless ``v``
    is float32)."""
    v = np.asarray(v)
    if v.ndim != 1:
        raise TypeError(f"spm_diags() expects a 1-D array, got rank {v.ndim}")
    v = v.astype(np.float32 if v.dtype == np.float32 else np.float64)
    return _csr_result(_scipy_sparse().csr_matrix(_scipy_sparse().diags(v, shape=(len(v), len(v)))))


sparse_diags = spm_diags


def get_row(A, i):
    """Row ``i`` of a 2-D array (a view, ``A[i, :]``) or of a sparse matrix
    (a new dense 1-D array of its dtype, repeated entries summed)."""
    if _is_sparse(A):
        S = _csr(A)
        return S[_row_index(S.shape[0], i)].toarray().ravel()
    _need_rank("get_row", A, 2)
    return A[i, :]


def get_col(A, j):
    """Column ``j`` of a 2-D array (a view, ``A[:, j]``) or of a sparse
    matrix (a new dense 1-D array of its dtype, repeated entries summed)."""
    if _is_sparse(A):
        S = _csr(A)
        return S[:, _row_index(S.shape[1], j)].toarray().ravel()
    _need_rank("get_col", A, 2)
    return A[:, j]


def _row_index(n, i):
    i = operator.index(i)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for size {n}")
    return i + n if i < 0 else i


def nnz(S):
    """The number of stored entries of sparse ``S``."""
    _need_sparse("nnz", S)
    return builtins.int(S.nnz)


def spm_with_values(S, values):
    """Sparse ``S``'s shape and structure (row pointers and column indices,
    in its order) holding ``values``, one per stored entry."""
    _need_sparse("spm_with_values", S)
    S = _csr(S)
    n = builtins.int(S.indptr[-1])
    if len(values) != n:
        raise ValueError("spm_with_values: one value per stored entry is needed")
    import scipy.sparse
    return _csr_result(scipy.sparse.csr_matrix((np.asarray(values), S.indices[:n], S.indptr), shape=S.shape),
                       sort=False)


def sampled_matmul(S, a, b):
    """The entries of ``a @ b`` at sparse ``S``'s stored positions, one per
    entry in S's order (a sampled dense-dense product)."""
    _need_sparse("sampled_matmul", S)
    _need_rank("sampled_matmul", a, 2)
    _need_rank("sampled_matmul", b, 2)
    S = _csr(S)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"sampled_matmul: mismatched product operands {a.shape} and {b.shape}")
    if (a.shape[0], b.shape[1]) != S.shape:
        raise ValueError(f"sampled_matmul: inconsistent shapes {S.shape} and {(a.shape[0], b.shape[1])}")
    n = builtins.int(S.indptr[-1])
    rows = np.repeat(np.arange(S.shape[0]), np.diff(S.indptr))
    return np.einsum("ij,ji->i", a[rows, :], b[:, S.indices[:n]])


def spmm_dense_t(Dt, S):
    """``Dt.T @ S``: ``spmm_dense(D, S)`` given ``D.T`` (what the compiled
    code's sparse layout pass calls, with ``D.T`` made contiguous once)."""
    _need_rank("spmm_dense_t", Dt, 2)
    return spmm_dense(np.transpose(Dt), S)


def masked_spmm(M, a, b, mask_first):
    """``spm_mul(M, spmm(a, b))`` (``spm_mul(spmm(a, b), M)`` when
    ``mask_first`` is false): the compiled code computes only the entries of
    ``a @ b`` at M's stored positions."""
    return spm_mul(M, spmm(a, b)) if mask_first else spm_mul(spmm(a, b), M)


def row(S, i):
    """The (column, value) pairs of row ``i`` of sparse ``S`` in storage
    order (``for j, v in S.row(i)``); columns are int64, values of S's
    dtype. Negative ``i`` wraps; IndexError out of range."""
    _need_sparse("row", S)
    S = _csr(S)
    m = S.shape[0]
    i = operator.index(i)
    if not -m <= i < m:
        raise IndexError(f"row {i} is out of range for a sparse matrix of {m} rows")
    if i < 0:
        i += m
    p, q = builtins.int(S.indptr[i]), builtins.int(S.indptr[i + 1])
    return list(zip(S.indices[p:q].astype(np.int64), S.data[p:q]))


def nonzeros(S):
    """The (row, column, value) triples of sparse ``S`` in CSR storage order
    (``for r, c, v in S.nonzeros()``); rows and columns are int64."""
    _need_sparse("nonzeros", S)
    S = _csr(S)
    n = builtins.int(S.indptr[-1])
    rows = np.repeat(np.arange(S.shape[0], dtype=np.int64), np.diff(S.indptr))
    return list(zip(rows, S.indices[:n].astype(np.int64), S.data[:n]))


def spm_add(a, b):
    """``a + b`` with a sparse operand, as SciPy: two sparse matrices of one
    shape give a sparse matrix (the union of their entries, exact zeros
    dropped); a sparse matrix and a dense array (broadcast to its shape) a
    dense 2-D array. ValueError for shapes that do not match."""
    if not _is_sparse(a) and not _is_sparse(b):
        raise TypeError("spm_add() needs a SparseMat operand")
    for x in (a, b):
        if not _is_sparse(x) and not _is_scalar(x) and not (isinstance(x, np.ndarray) and x.ndim in (1, 2)):
            raise TypeError(f"spm_add() adds a SparseMat and a SparseMat, a 1-D/2-D array or a scalar, got "
                            f"{type(x).__name__}")
    if _is_sparse(a) and _is_sparse(b):
        if a.shape != b.shape:
            raise ValueError(f"spm_add(): inconsistent shapes {a.shape} and {b.shape}")
        return _csr_result(_csr(a) + _csr(b))
    S, D = (a, b) if _is_sparse(a) else (b, a)
    if _is_scalar(D):
        return toarray(S) + D
    if np.broadcast_shapes(D.shape, S.shape) != S.shape:
        raise ValueError(f"spm_add(): a dense {D.shape} operand does not broadcast to the sparse {S.shape}")
    return np.ascontiguousarray(np.asarray(_csr(S) + D))


def spm_mul(a, b):
    """The element-wise product with a sparse operand, as SciPy's
    ``multiply``: two sparse matrices of one shape give their intersection
    (exact zeros dropped); a sparse matrix and a dense array broadcast to its
    shape (1-D is a row), or a scalar, give a sparse matrix with the sparse
    operand's structure (zeros kept). ValueError for shapes that do not match."""
    if not _is_sparse(a):
        a, b = b, a
    if not _is_sparse(a):
        raise TypeError("spm_mul() needs a SparseMat operand")
    S = _csr(a)
    if _is_sparse(b):
        if S.shape != b.shape:
            raise ValueError(f"spm_mul(): inconsistent shapes {S.shape} and {b.shape}")
        return _csr_result(S.multiply(_csr(b)))
    if _is_scalar(b):
        return _csr_result(S.multiply(b))
    if not isinstance(b, np.ndarray) or b.ndim not in (1, 2):
        raise TypeError(f"spm_mul() multiplies a SparseMat by a SparseMat, a 1-D/2-D array or a scalar, got "
                        f"{type(b).__name__}")
    try:
        ok = np.broadcast_shapes(b.shape, S.shape) == S.shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"spm_mul(): a dense {b.shape} operand does not broadcast to the sparse {S.shape}")
    return _csr_result(S.multiply(b))


def spm_scale(S, x):
    """``S * x`` for sparse ``S`` and a scalar ``x`` (S's structure)."""
    _need_sparse("spm_scale", S)
    if not _is_scalar(x):
        raise TypeError(f"spm_scale() scales by a scalar, got {type(x).__name__}")
    return _csr_result(_csr(S).multiply(x))


def spmv(S, x):
    """``S @ x``: sparse matrix times a dense 1-D array, a 1-D array.
    ValueError if ``x``'s length is not S's number of columns."""
    _need_sparse("spmv", S)
    if not isinstance(x, np.ndarray) or x.ndim != 1:
        raise TypeError(f"spmv() multiplies by a 1-D array, got {type(x).__name__}")
    if x.shape[0] != S.shape[1]:
        raise ValueError(f"spmv(): dimension mismatch, {S.shape} @ {x.shape}")
    return np.asarray(_csr(S) @ x)


def spmm(A, B):
    """``A @ B`` for two sparse matrices: a sparse matrix (sorted rows).
    ValueError if the inner dimensions differ."""
    _need_sparse("spmm", A)
    _need_sparse("spmm", B)
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"spmm(): dimension mismatch, {A.shape} @ {B.shape}")
    return _csr_result(_csr(A) @ _csr(B))


def spmm_dense(a, b):
    """``a @ b`` where one operand is sparse and the other a dense 2-D
    array: a dense 2-D array. ValueError if the inner dimensions differ."""
    if _is_sparse(a) == _is_sparse(b):
        raise TypeError("spmm_dense() multiplies a SparseMat and a dense 2-D array")
    D = b if _is_sparse(a) else a
    if not isinstance(D, np.ndarray) or D.ndim != 2:
        raise TypeError(f"spmm_dense() needs a dense 2-D array, got "
                        f"{f'rank {D.ndim}' if isinstance(D, np.ndarray) else type(D).__name__}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"spmm_dense(): dimension mismatch, {a.shape} @ {b.shape}")
    if _is_sparse(a):
        return np.ascontiguousarray(_csr(a) @ b)
    return np.ascontiguousarray(a @ _csr(b))


def _spm_sum(S, axis=None):
    """sum(S): SciPy's sum (a scalar of NumPy's sum dtype); sum(S, axis): the
    column (axis 0) or row (axis 1) sums as a 1-D array."""
    if axis is None:
        return _csr(S).sum()
    if not isinstance(axis, (builtins.int, np.integer)) or isinstance(axis, (builtins.bool, np.bool_)):
        raise TypeError(f"sum() axis must be an int, got {type(axis).__name__}")
    axis = builtins.int(axis)
    if not -2 <= axis < 2:
        raise ValueError(f"axis {axis} is out of bounds for a sparse matrix (2 dimensions)")
    return np.asarray(_csr(S).sum(axis=axis)).ravel()


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


def time():
    """Intrepydd's ``time()``: the wall clock in seconds, as ``time.time()``.

    Not exported by ``from pydd import *`` (it would hide the ``time``
    module of a script or notebook that imports both); load_python gives it
    to kernels (KERNEL_ONLY)."""
    return _time.time()


# Library functions a kernel file sees without importing them by name.
KERNEL_ONLY = {"time": time}


def assertion_error(message=None):
    """What a failed ``assert cond, message`` raises (``--emit=ir`` shows the call)."""
    raise AssertionError() if message is None else AssertionError(message)


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
# ---- element-wise functions of a SparseMat -----------------------------------
# f(S): a function with f(0) == 0 maps S's stored values (spm_map, SciPy's
# S.sqrt()); any other is NumPy's f of S.toarray(). The compiler decides the
# same from its catalog (ElementRule::preservesZero).

_ZERO_PRESERVING = ("minus", "abs", "sqrt", "sin", "tan", "asin", "atan", "floor", "ceil", "tanh", "sinh",
                    "expm1", "log1p", "square", "sign")
_DENSE_ON_SPARSE = ("isnan", "isinf", "logical_not", "elemwise_not", "exp", "log", "cos", "acos", "cosh",
                    "log2", "log10", "exp2")
# The functions themselves, which spm_map applies to the stored values.
_VALUE_MAPS = {name: globals()[name] for name in _ZERO_PRESERVING}


def _on_sparse(name, f, zero_preserving):
    """``f``, and on a SparseMat what pydd's ``f(S)`` is."""
    def g(x, *args, **kwargs):
        if not isinstance(x, (np.ndarray, builtins.float, builtins.int)) and _is_sparse(x):
            return spm_map(x, name) if zero_preserving else f(toarray(x), *args, **kwargs)
        return f(x, *args, **kwargs)
    g.__name__, g.__qualname__, g.__doc__ = name, name, f.__doc__
    return g


for _name in _ZERO_PRESERVING + _DENSE_ON_SPARSE:
    globals()[_name] = _on_sparse(_name, globals()[_name], _name in _ZERO_PRESERVING)
del _name


def spm_map(S, f):
    """``S`` with the one-operand element-wise function named ``f`` (one with
    f(0) == 0: "sqrt", "abs", "minus", ...) applied to its stored values,
    keeping its structure and its stored zeros, as SciPy's ``S.sqrt()``:
    duplicate entries are summed first (and the rows then sorted)."""
    _need_sparse("spm_map", S)
    fn = _VALUE_MAPS.get(f) if isinstance(f, str) else None
    if fn is None:
        raise TypeError(f"spm_map() expects the name of an element-wise function f with f(0) == 0, got {f!r}")
    S = _csr(S)
    if not S.has_canonical_format:
        S = S.copy()
        S.sum_duplicates()
    return _csr_result(S._with_data(np.asarray(fn(S.data))), sort=False)


def toarray(S):
    """``S.toarray()``: the dense matrix (duplicate entries summed)."""
    _need_sparse("toarray", S)
    return np.ascontiguousarray(_csr(S).toarray())


__all__ = [
    "boolean", "int32", "int64", "float32", "float64", "double", "complex64", "complex128",
    "int8", "int16", "uint8", "uint16", "uint32", "uint64",
    "real", "imag", "conj", "conjugate", "angle", "complex_parts", "astype",
    "Array", "List", "Dict", "Heap", "Tuple",
    "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "copy", "ascontiguousarray", "arange", "fill",
    "shape", "ndim", "size",
    "add", "sub", "mul", "div", "floordiv", "mod", "pow", "maximum", "minimum",
    "eq", "neq", "lt", "gt", "le", "ge", "logical_and", "logical_or",
    "abs", "minus", "isnan", "isinf", "logical_not", "elemwise_not",
    "sqrt", "exp", "log", "cos", "sin", "tan", "acos", "asin", "atan", "floor", "ceil",
    "tanh", "sinh", "cosh", "log2", "log10", "exp2", "expm1", "log1p", "square", "sign", "log_base",
    "arctan2", "hypot", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "all_axes", "var", "std", "count_nonzero", "trace", "cumsum", "cumprod", "diff", "linspace", "eye",
    "identity", "outer", "isclose", "clip", "expand_dims", "extract", "take", "mask_take", "mask_assign", "index_assign", "shape_from_list", "unpack",
    "searchsorted", "tile", "repeat", "roll", "around", "array", "nonzero", "unravel_index", "det", "inv", "solve", "norm", "sort", "argsort", "median", "unique", "reshape", "ravel", "flatten", "concatenate", "stack", "vstack", "hstack",
    "sum", "prod", "mean", "min", "max", "argmin", "argmax", "any", "all", "allclose", "where",
    "transpose", "matmult", "innerprod", "matvect", "vectmat", "matmat",
    "syrk", "syr2k", "symm", "trmm", "lu", "ludcmp",
    "heapinit", "heappush", "heappop", "heappeek", "assertion_error", "broadcast_to", "broadcast_shapes_for",
    "unit_stride", "fused_mul_add", "blas_dot_step", "blas_dot_inline_limit",
    "SparseMat", "csr_to_spm", "spm_to_csr", "empty_spm", "spm_set_item", "spm_set_item_unsafe", "nnz",
    "row", "nonzeros", "spm_with_values", "spm_map", "toarray", "sampled_matmul", "masked_spmm", "spmm_dense_t", "spm_add", "spm_mul", "spm_scale", "spmv", "spmm", "spmm_dense",
    "spm_diags", "sparse_diags", "get_row", "get_col",
]

# Library functions, i.e. the names whose method spelling is rewritten.
LIBRARY_FUNCTIONS = frozenset(n for n in __all__ if n not in {
    "boolean", "int32", "int64", "float32", "float64", "double", "complex64", "complex128", "int8", "int16", "uint8",
    "uint16", "uint32", "uint64", "Array", "List", "Dict", "Heap", "Tuple", "SparseMat"})
