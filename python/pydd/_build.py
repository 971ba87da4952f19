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


def _cache_root():
    env = os.environ.get("PYDD_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    root = Path(base) / "pydd"
    try:
        root.mkdir(parents=True, exist_ok=True)
        if os.access(root, os.W_OK):
            return root
    except OSError:
        pass
    return Path(tempfile.gettempdir()) / f"pydd-{os.getuid()}"


_runtime_dirs = {}


def _runtime_stamp(exe):
    """The runtime headers' latest modification time: generated code
    includes them, so a header change must not reuse an older module."""
    if exe not in _runtime_dirs:
        try:
            flags = subprocess.run([exe, "--cxxflags"], capture_output=True, text=True, timeout=60).stdout.split()
        except (OSError, subprocess.SubprocessError):
            flags = []
        _runtime_dirs[exe] = [Path(f[2:]) for f in flags if f.startswith("-I")]
    newest = 0
    for d in _runtime_dirs[exe]:
        for header in d.rglob("*.h"):
            try:
                newest = max(newest, header.stat().st_mtime_ns)
            except OSError:
                pass
    return str(newest)


def _default_out_dir(src, exe, args):
    """A cache directory named by everything that determines the output."""
    h = hashlib.sha256()
    try:
        stamp = str(os.stat(shutil.which(exe) or exe).st_mtime_ns)
    except OSError:
        stamp = ""
    flags = os.environ.get("PYDD_KERNEL_CXXFLAGS", "")  # e.g. a sanitizer build: never mixed with a plain one
    for part in (str(src.resolve()), src.read_bytes(), exe, stamp, _runtime_stamp(exe), flags, *args):
        h.update(part if isinstance(part, bytes) else part.encode())
        h.update(b"\0")
    return _cache_root() / f"{src.stem}-{h.hexdigest()[:16]}"


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
    return module


def compile(path, out_dir=None, opt=3, host="python", extra_args=()):
    """Compiles the .pydd file at ``path`` with pyddc and imports the result.

    ``out_dir`` defaults to a per-user cache directory keyed by the source,
    the options and the pyddc binary (``$PYDD_CACHE_DIR``, else
    ``~/.cache/pydd``, else a temporary directory); a module this process
    already built there is returned without rebuilding. ``opt`` is the -O
    level, ``extra_args`` more pyddc options (``--bounds-check``, ``-v``).

    Returns the extension module. With ``host`` other than "python" or an
    ``--emit`` option nothing is imported and the ``CompletedProcess`` is
    returned instead. Raises :class:`CompileError` with pyddc's stderr when
    it fails.
    """
    src = Path(path)
    exe = find_pyddc()
    args = [f"-O{opt}", f"--host={host}", *(str(a) for a in extra_args)]
    cached = out_dir is None
    out_dir = Path(_default_out_dir(src, exe, args) if cached else out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    so = (out_dir / (src.stem + EXT_SUFFIX)).resolve()
    if cached and so in _loaded:
        return _loaded[so]
    try:
        proc = subprocess.run([exe, str(src), "-o", str(out_dir), *args],
                              capture_output=True, text=True, timeout=_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CompileError(f"cannot run {exe}: {e}") from None
    if proc.returncode != 0:
        raise CompileError(proc.stderr.rstrip() or proc.stdout.rstrip()
                           or f"{exe} exited with status {proc.returncode}")
    if proc.stderr:
        sys.stderr.write(proc.stderr)  # warnings, -v output
    if host != "python" or any(a.startswith("--emit") for a in args):
        return proc
    if not so.is_file():
        raise CompileError(f"{exe} succeeded but did not write {so}")
    return _import(so, src.stem)
