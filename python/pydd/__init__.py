"""pydd: the Python side of the Intrepydd compiler (pyddc).

Two jobs:

* Kernels start with ``from pydd import *``. The names exported here make the
  very same ``.pydd`` file run as ordinary Python with NumPy, which is the
  correctness reference for compiled code: the scalar types (``int8``,
  ``int16``, ``int32``, ``int64``, ``uint8`` ... ``uint64``, ``float32``,
  ``float64``, ``double``, ``complex64``, ``complex128``), the annotations
  ``Array(dtype, ndim)``, ``SparseMat(dtype)``, ``List(T)``, ``Dict(K, V)``,
  ``Heap(T)``/``Heap(K, V)`` and ``Tuple(...)``, and the library functions (see
  ``pydd._lib``; sparse matrices are scipy.sparse's). Of the
  builtins, ``sum``, ``min``, ``max``, ``abs``, ``any``, ``all`` and ``pow``
  are shadowed by versions that are NumPy's on arrays and the builtins
  otherwise; importing pydd switches NumPy to NEP 50 promotion.

* :func:`load_python` runs a ``.pydd`` file as Python (after rewriting the
  Intrepydd-only syntax) and :func:`compile` builds it with ``pyddc`` and
  imports the extension module. Neither is exported by ``import *``:
  ``compile`` would shadow the builtin.

* :func:`kernel` (``@pydd.kernel``) compiles typed Python functions where
  they are written, and ``%load_ext pydd`` gives notebooks the ``%%pydd``
  cell magic (pydd._magic). All of these go through pyddc's compile cache.
"""

from pydd._lib import *  # noqa: F401,F403
from pydd._lib import __all__, ArrayType, DictType, HeapType, ListType, SparseMatType, TupleType
from pydd._lib import time  # noqa: F401  (pydd.time(); not in __all__, see _lib.KERNEL_ONLY)
from pydd._loader import rewrite_source, rewrite_tree, load_python
from pydd._build import CompileError, compile, find_pyddc
from pydd._kernel import FallbackWarning, Kernel, kernel
from pydd._magic import load_ipython_extension
from pydd._threads import get_num_threads, set_num_threads
from pydd._grad import grad, value_and_grad
# `grad(f, 0)(x)` in a kernel run as Python (``from pydd import *``).
__all__ = [*__all__, "grad", "value_and_grad"]
