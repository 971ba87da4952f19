"""The thread count of compiled kernels' ``pfor`` loops and tasks.

Kernels read one process-wide count (``pydd::Threads`` in the runtime's
``parallel.h``), shared by every kernel module through libpydd_python, the
library they all link. ``OMP_NUM_THREADS`` sets the default; these functions
change it for every kernel and every Python thread at once (OpenMP's own
``omp_set_num_threads`` would change it for the calling thread only).
"""

import ctypes
import threading
from pathlib import Path

_lock = threading.Lock()
_handle = None


def _library():
    """libpydd_python, found next to the pyddc that builds the kernels (its
    ``lib`` directory, in a build tree and in an installation alike)."""
    global _handle
    with _lock:
        if _handle is None:
            from pydd._build import find_pyddc
            import shutil

            exe = find_pyddc()
            exe = shutil.which(exe) or exe
            path = Path(exe).resolve().parents[1] / "lib" / "libpydd_python.so"
            if not path.is_file():
                raise RuntimeError(f"pydd: cannot find {path} (the runtime library of {exe})")
            lib = ctypes.CDLL(str(path))
            lib.pydd_set_num_threads.argtypes = [ctypes.c_int]
            lib.pydd_set_num_threads.restype = None
            lib.pydd_get_num_threads.argtypes = []
            lib.pydd_get_num_threads.restype = ctypes.c_int
            _handle = lib
        return _handle


def set_num_threads(n):
    """Run compiled ``pfor`` loops and tasks on ``n`` threads from now on (in
    every Python thread); ``n <= 0`` restores the default (``OMP_NUM_THREADS``,
    else one thread per core)."""
    n = int(n)
    _library().pydd_set_num_threads(n)


def get_num_threads():
    """The number of threads a compiled ``pfor`` loop started now would use."""
    return int(_library().pydd_get_num_threads())
