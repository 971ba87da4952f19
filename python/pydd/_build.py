"""Compiling a .pydd file with pyddc and importing the extension module."""

import hashlib
import importlib.util
import itertools
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
_TIMEOUT_S = 900

# Modules this process imported, by the resolved path of their file. Neither
# dlopen nor CPython loads a file path twice: importing a rebuilt file at a
# path already loaded would hand back the old module, so a rebuilt module is
# imported from a private copy instead.
_loaded = {}
_copies = itertools.count(1)


class CompileError(Exception):
    """pyddc failed (or could not be run); the message is its diagnostics."""


def find_pyddc():
    """The pyddc executable: $PYDDC, else the build of the checkout this
    package belongs to, else ``pyddc`` on PATH (which may be another
    checkout's build)."""
    exe = os.environ.get("PYDDC")
    if exe:
        return exe
    local = Path(__file__).resolve().parents[2] / "build" / "bin" / "pyddc"
    if local.is_file():
        return str(local)
    exe = shutil.which("pyddc")
    if exe:
        return exe
    raise CompileError(f"pyddc not found: set PYDDC, put pyddc on PATH or build {local}")


def _import(so, stem):
    path = so
    if so in _loaded:
        path = so.with_name(f"{stem}.{os.getpid()}-{next(_copies)}{EXT_SUFFIX}")
        shutil.copy2(so, path)
    # The last name component selects PyInit_<stem>; the prefix keeps
    # modules of the same stem from different directories apart.
    name = f"_pydd_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}.{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _loaded[so] = module
    _register(module, stem)
    return module


def _register(module, stem):
    """Makes ``import <stem>`` give ``module`` in this process, so that its
    functions pickle by reference (as ``stem.name``, which a Dask worker
    imports after ``client.upload_file(module.__file__)``). A name the
    import system finds otherwise (another module, a standard one) is never
    shadowed; one of our earlier builds is replaced."""
    current = sys.modules.get(stem)
    if current is None:
        try:
            taken = importlib.util.find_spec(stem) is not None
        except (ImportError, ValueError):
            taken = True
        if taken:
            return
    elif not any(current is m for m in _loaded.values()):
        return
    sys.modules[stem] = module
    module.__name__ = stem  # what cloudpickle records for a reference to the module


def _run(exe, args, rename=None):
    """Runs pyddc; returns its CompletedProcess or raises CompileError with
    its diagnostics, passed through ``rename`` (which points them at the
    user's own file) when given."""
    try:
        proc = subprocess.run([exe, *args], capture_output=True, text=True, timeout=_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CompileError(f"cannot run {exe}: {e}") from None
    stderr = rename(proc.stderr) if rename else proc.stderr
    if proc.returncode != 0:
        raise CompileError(stderr.rstrip() or proc.stdout.rstrip()
                           or f"{exe} exited with status {proc.returncode}")
    if stderr:
        sys.stderr.write(stderr)  # warnings, -v output
    return proc


def _import_from_cache(exe, src, args, rename=None):
    """Builds (or finds) ``src`` in pyddc's compile cache and imports it.
    Cache entries never change, so a module this process already imported
    from an entry is that entry's module."""
    proc = _run(exe, [str(src), "--in-cache", *args], rename)
    entry = Path(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else None
    so = entry / (src.stem + EXT_SUFFIX) if entry else None
    if so is None or not so.is_file():
        raise CompileError(f"{exe} succeeded but did not print a cache entry holding {src.stem + EXT_SUFFIX}")
    if so in _loaded:
        return _loaded[so]
    module = _import(so, src.stem)
    module.__pydd_build__ = (str(src), tuple(args))  # what pydd.grad rebuilds with --grad
    return module


def compile(path, out_dir=None, opt=3, host="python", extra_args=()):
    """Compiles the .pydd file at ``path`` with pyddc and imports the result.

    Without ``out_dir`` the module is built into (or found in) pyddc's
    compile cache (``$PYDD_CACHE_DIR``, else ``~/.cache/pydd``; see the
    README) and imported from there: a second call, in this process or
    another, does not rebuild. With ``out_dir`` the module is written there
    too. ``opt`` is the -O level, ``extra_args`` more pyddc options
    (``--bounds-check``, ``-v``, ``--no-cache``).

    Returns the extension module. With ``host`` other than "python" or an
    ``--emit`` option nothing is imported and the ``CompletedProcess`` is
    returned instead. Raises :class:`CompileError` with pyddc's stderr when
    it fails.
    """
    src = Path(path)
    exe = find_pyddc()
    args = [f"-O{opt}", f"--host={host}", *(str(a) for a in extra_args)]
    emits = host != "python" or any(a.startswith("--emit") for a in args)
    if out_dir is None and not emits and "--no-cache" not in args:
        return _import_from_cache(exe, src, args)
    if out_dir is None and not emits:
        out_dir = Path(tempfile.mkdtemp(prefix=f"pydd-{src.stem}-"))
    out_args = ["-o", str(out_dir)] if out_dir is not None else []
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    proc = _run(exe, [str(src), *out_args, *args])
    if emits:
        return proc
    so = (Path(out_dir) / (src.stem + EXT_SUFFIX)).resolve()
    if not so.is_file():
        raise CompileError(f"{exe} succeeded but did not write {so}")
    module = _import(so, src.stem)
    module.__pydd_build__ = (str(src), tuple(args))  # what pydd.grad rebuilds with --grad
    return module


def compile_source(source, name, opt=3, extra_args=(), rename=None):
    """Compiles pydd source text as the module ``name`` (through the compile
    cache) and imports it. ``rename(text)`` rewrites pyddc's diagnostics,
    which name a temporary file, to point at where the source came from.
    With an ``--emit`` option the CompletedProcess is returned instead."""
    exe = find_pyddc()
    args = [f"-O{opt}", *(str(a) for a in extra_args)]
    src = _source_file(source, name)
    fix = (lambda text: rename(text, str(src))) if rename else None
    if any(a.startswith("--emit") for a in args):
        return _run(exe, [str(src), *args], fix)
    return _import_from_cache(exe, src, args, fix)


def _source_file(source, name):
    """A file holding ``source``, at a path that depends only on it: the
    generated C++ names its source file, and a path that changed from one
    process to the next would defeat the compile cache."""
    digest = hashlib.sha256(f"{name}\0{source}".encode()).hexdigest()[:24]
    src = Path(tempfile.gettempdir()) / f"pydd-sources-{os.getuid()}" / digest / f"{name}.pydd"
    if not src.is_file() or src.read_text(encoding="utf-8") != source:
        src.parent.mkdir(parents=True, exist_ok=True)
        # Written whole under another name and renamed: another process may
        # be reading the same file.
        fd, tmp = tempfile.mkstemp(dir=src.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(source)
        os.replace(tmp, src)
    return src
