"""The kernel-facing names: scalar types, Array annotations, array library."""

import builtins

import numpy as np

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
        """True if ``value`` is what a compiled kernel takes for this parameter."""
        return (isinstance(value, np.ndarray) and value.dtype == self.dtype
                and value.ndim == self.ndim and value.flags.c_contiguous)


def Array(dtype, ndim=1):
    """``Array(float64, 2)``: the type annotation for a 2-D float64 array."""
    return ArrayType(dtype, ndim)


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


def shape(a, k):
    """The extent of array ``a`` along axis ``k``."""
    return a.shape[k]


def ndim(a):
    """The rank of array ``a``."""
    return a.ndim
