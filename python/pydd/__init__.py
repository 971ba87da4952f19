"""pydd: the Python side of the Intrepydd compiler (pyddc).

Two jobs:

* Kernels start with ``from pydd import *``. The names exported here make the
  very same ``.pydd`` file run as ordinary Python with NumPy, which is the
  correctness reference for compiled code: the scalar types (``int32``,
  ``int64``, ``float32``, ``float64``, ``double``), the ``Array(dtype, ndim)``
  annotation and the library functions ``zeros``, ``ones``, ``empty``,
  ``shape`` and ``ndim``. Builtins (``bool``, ``int``, ``float``, ``len``,
  ``print``, ``range``, ``abs``, ``min``, ``max``) are never shadowed.

* :func:`load_python` runs a ``.pydd`` file as Python (after rewriting the
  Intrepydd-only syntax) and :func:`compile` builds it with ``pyddc`` and
  imports the extension module. Neither is exported by ``import *``:
  ``compile`` would shadow the builtin.
"""

from pydd._lib import Array, ArrayType, double, empty, float32, float64, int32, int64, ndim, ones, shape, zeros
from pydd._loader import rewrite_source, load_python
from pydd._build import CompileError, compile, find_pyddc

__all__ = [
    "int32",
    "int64",
    "float32",
    "float64",
    "double",
    "Array",
    "zeros",
    "ones",
    "empty",
    "shape",
    "ndim",
]
