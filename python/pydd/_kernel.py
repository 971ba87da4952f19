"""``@pydd.kernel``: compiling typed Python functions where they are written.

A decorated function is compiled at its first call (Numba's habit), not at
decoration, because it may call kernels defined further down. All kernels
of one global namespace (a module, or a notebook's cells) built with the
same options are compiled together as one pydd module, so they can call
each other; the build goes through pyddc's compile cache like everything
else, so a second process only imports it.

The source handed to pyddc is each function's own text, found with
``inspect`` (decorator lines blanked, indentation removed), and a line map
from that text back to the user's file: diagnostics name the user's file (or
notebook cell) with its line and column numbers and show its own line.

With ``fallback=True`` a kernel that cannot be compiled runs as the plain
Python function, with a :class:`FallbackWarning` quoting the diagnostic;
the other kernels of its namespace are compiled without it.
"""

import ast
import functools
import inspect
import re
import textwrap
import threading
import warnings

from pydd._build import CompileError, compile_source


class FallbackWarning(RuntimeWarning):
    """A ``@pydd.kernel(fallback=True)`` function runs as Python: pyddc
    could not compile it (the message quotes why)."""


_lock = threading.RLock()
# By id of the global namespace kernels were defined in: that namespace
# (held, so that the id is never reused) and its kernels by name (a notebook
# cell run again replaces its kernels).
_units = {}


def _unit(namespace):
    return _units.setdefault(id(namespace), (namespace, {}))[1]

_DIAGNOSTIC = re.compile(r"^(?P<path>.*?):(?P<line>\d+):(?P<col>\d+): (?P<rest>.*)$")


def display_name(filename):
    """How a source file is named in diagnostics: a notebook cell as
    ``In[3]``, a file by its path."""
    try:
        from IPython import get_ipython
    except ImportError:
        return filename
    ip = get_ipython()
    # IPython 8's cell compiler records which cell each generated file name
    # holds (its tracebacks say "Cell In[3]" from the same map).
    cells = getattr(getattr(ip, "compile", None), "_filename_map", None)
    number = cells.get(filename) if isinstance(cells, dict) else None
    return f"In[{number}]" if number is not None else filename


class _Source:
    """A function's source as pydd text, and where each of its lines came from."""

    def __init__(self, func):
        try:
            lines, first = inspect.getsourcelines(func)
            filename = inspect.getsourcefile(func) or func.__code__.co_filename
        except (OSError, TypeError) as e:
            raise CompileError(f"pydd.kernel: cannot find the source of {func.__qualname__}: {e}") from None
        self.indent = len(lines[0]) - len(lines[0].lstrip())
        text = textwrap.dedent("".join(lines))
        tree = ast.parse(text)
        defn = tree.body[0]
        # Decorators (ours and any other) are Python's business, not pydd's;
        # blank lines keep the numbering.
        body = text.splitlines(keepends=True)
        for i in range(defn.lineno - 1):
            body[i] = "\n"
        self.lines = body
        self.first = first
        self.file = display_name(filename)


class _Group:
    """The text of several kernels as one pydd module, with the map back."""

    def __init__(self, kernels):
        self.kernels = kernels
        self.origin = {}  # generated line -> (kernel, user line)
        text = []
        for k in kernels:
            for i, line in enumerate(k._source.lines):
                self.origin[len(text) + 1] = (k, k._source.first + i)
                text.append(line if line.endswith("\n") else line + "\n")
            text.append("\n")
        self.text = "".join(text)
        self.culprits = []

    def rename(self, message, tmp_path):
        """pyddc's diagnostics, pointed at the user's files and lines."""
        out = []
        shift = 0  # indentation to restore on a diagnostic's source and caret lines
        pending = 0
        for line in message.splitlines(keepends=True):
            m = _DIAGNOSTIC.match(line)
            if m and m.group("path") == tmp_path and int(m.group("line")) in self.origin:
                k, user_line = self.origin[int(m.group("line"))]
                if k not in self.culprits:
                    self.culprits.append(k)
                shift = k._source.indent
                col = int(m.group("col")) + shift
                out.append(f"{k._source.file}:{user_line}:{col}: {m.group('rest')}\n")
                pending = 2
            elif pending:
                out.append(" " * shift + line)
                pending -= 1
            else:
                out.append(line.replace(tmp_path, "<pydd.kernel source>"))
        return "".join(out)


class Kernel:
    """A ``@pydd.kernel`` function: calls the compiled function (compiling
    its namespace's kernels at the first call), or the Python function when
    it fell back. ``py_func`` is the original function."""

    def __init__(self, func, opt, fallback, extra_args):
        functools.update_wrapper(self, func)
        self.py_func = func
        self._opt = opt
        self._fallback = fallback
        self._args = tuple(str(a) for a in extra_args)
        self._impl = None
        self._source = None
        try:
            self._source = _Source(func)
        except CompileError as e:
            if not fallback:
                raise
            self._fall_back(str(e))
        with _lock:
            _unit(func.__globals__)[func.__name__] = self

    def __call__(self, *args, **kwargs):
        impl = self._impl
        if impl is None:
            impl = self.compile()
        return impl(*args, **kwargs)

    def __reduce__(self):
        # Pickled by reference, like a function: a worker imports the
        # defining module and finds (and compiles) the kernel there.
        return self.__qualname__

    def __repr__(self):
        state = "compiled" if self._impl not in (None, self.py_func) else "Python" if self._impl else "not compiled"
        return f"<pydd.kernel {self.__qualname__} ({state})>"

    @property
    def compiled(self):
        """Whether calls run compiled code (compiling first if needed)."""
        return self.compile() is not self.py_func

    def _fall_back(self, diagnostic):
        # Reported at the function's definition, whichever call compiled it.
        code = self.py_func.__code__
        warnings.warn_explicit(f"pydd.kernel: {self.__qualname__} runs as Python; it cannot be compiled:\n"
                               f"{diagnostic}", FallbackWarning, display_name(code.co_filename), code.co_firstlineno,
                               module=self.py_func.__module__)
        self._impl = self.py_func

    def compile(self):
        """Compiles this kernel with the others of its namespace (same
        options) now; returns what calls will run."""
        with _lock:
            if self._impl is not None:
                return self._impl
            group = [k for k in _unit(self.py_func.__globals__).values()
                     if (k._opt, k._args) == (self._opt, self._args) and k._impl is not k.py_func]
            if self not in group:
                group.append(self)
            _compile_group(group, self)
            return self._impl


def _compile_group(kernels, caller):
    """Compiles ``kernels`` as one module and binds each to its compiled
    function. When an error points into a kernel's own lines, that kernel
    falls back if it allows it, the error is raised if it is ``caller``,
    and otherwise the kernel is left out (it raises when it is called); the
    rest are compiled again without it."""
    name = "pydd_" + (re.sub(r"\W", "_", caller.py_func.__module__).strip("_") or "main")
    while caller in kernels:
        group = _Group(kernels)
        try:
            module = compile_source(group.text, name, opt=caller._opt, extra_args=caller._args,
                                    rename=group.rename)
        except CompileError as e:
            culprits = group.culprits or kernels
            if caller in culprits and not caller._fallback:
                raise CompileError(str(e)) from None
            for k in culprits:
                if k._fallback:
                    k._fall_back(str(e))
            kernels = [k for k in kernels if k not in culprits]
            continue
        for k in kernels:
            k._impl = getattr(module, k.__name__)
        return


def kernel(func=None, *, opt=3, fallback=False, extra_args=()):
    """Compiles a typed Python function with pyddc ahead of its first call.

    ``@pydd.kernel`` or ``@pydd.kernel(opt=0, fallback=True,
    extra_args=["--bounds-check"])``. The function must be a pydd kernel
    (typed parameters and result, the pydd library through ``from pydd
    import *``); kernels of the same module can call each other. A function
    that cannot be compiled raises :class:`pydd.CompileError` at its first
    call, with diagnostics pointing into its source, or with
    ``fallback=True`` runs as Python with a :class:`FallbackWarning`.
    """
    if opt not in (0, 1, 2, 3):
        raise ValueError(f"pydd.kernel: opt must be 0, 1, 2 or 3, not {opt!r}")
    if isinstance(extra_args, str):
        raise TypeError("pydd.kernel: extra_args must be a list of options, not a string")

    def wrap(f):
        if not inspect.isfunction(f):
            raise TypeError(f"pydd.kernel: expected a function, not {type(f).__name__}")
        return Kernel(f, opt, fallback, extra_args)

    return wrap(func) if func is not None else wrap
