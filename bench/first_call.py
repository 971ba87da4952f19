"""How long a notebook user waits before a kernel's first result: pydd's
%%pydd magic and @pydd.kernel decorator cold (empty compile cache) and in a
second Python process (cache hit), next to Numba's first call (JIT) and
%%cython's build, on the benchmark kernels (not a test: nothing is
asserted; each figure is the median of --runs runs).

    /usr/bin/python3 bench/first_call.py [--runs N] [kernel ...]

Every figure is measured inside a fresh Python process, from just before
the compile (the magic, the decorated function's first call, the jitted
function's first call, %%cython) to the first result on the kernel's "small"
input; interpreter start-up and imports (NumPy, IPython, Numba) are not
counted. Cold runs get an empty pydd cache and %%cython cache each; the
cache-hit run reuses the cache a cold run just filled. The decorator needs
a kernel that is valid Python, so kernels using pfor show "-" there.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO / "python"))

import pydd  # noqa: E402

# Runs in the child: sets up, then prints the seconds from compile to result.
CHILD = r"""
import json, sys, time, importlib.util
sys.path[:0] = [{bench!r}, {python!r}]
spec_path, folder, how = {spec!r}, {folder!r}, {how!r}
spec = importlib.util.spec_from_file_location("spec", spec_path)
S = importlib.util.module_from_spec(spec); spec.loader.exec_module(S)
data = S.generate("small")
version = {{"numba": "numba", "cython": "cython"}}.get(how, "pydd-O3")
args = S.arguments(data, version)
if how in ("magic", "cython"):
    from IPython.testing.globalipapp import start_ipython
    ip = start_ipython()
    ip.run_line_magic("load_ext", "pydd" if how == "magic" else "Cython")
    source = open(folder + ("/kernel.pydd" if how == "magic" else "/cython_version.pyx")).read()
    start = time.perf_counter()
    ip.run_cell_magic("pydd" if how == "magic" else "cython", "", source)
    f = ip.user_ns[S.ENTRY]
    f(*args)
elif how == "decorator":
    import pydd
    path = {decorated!r}
    m_spec = importlib.util.spec_from_file_location("decorated_kernel", path)
    m = importlib.util.module_from_spec(m_spec); m_spec.loader.exec_module(m)
    start = time.perf_counter()
    getattr(m, S.ENTRY)(*args)
else:
    m_spec = importlib.util.spec_from_file_location("numba_version", folder + "/numba_version.py")
    m = importlib.util.module_from_spec(m_spec); sys.modules["numba_version"] = m
    m_spec.loader.exec_module(m)
    start = time.perf_counter()
    getattr(m, S.ENTRY)(*args)
print("RESULT", json.dumps(time.perf_counter() - start))
"""


def decorated_source(pydd_source):
    """The kernel as a Python module whose functions are @pydd.kernel."""
    lines = ["import pydd", "from pydd import *"]
    for line in pydd_source.splitlines():
        if line.startswith("def "):
            lines.append("@pydd.kernel")
        lines.append(line)
    return "\n".join(lines) + "\n"


def measure(folder, how, env, decorated=None):
    code = CHILD.format(bench=str(BENCH), python=str(REPO / "python"), spec=str(folder / "spec.py"),
                        folder=str(folder), how=how, decorated=str(decorated))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"{folder.name} / {how} failed:\n{proc.stderr[-3000:]}")
    # IPython may write terminal escapes before it on the same line.
    return json.loads(next(l for l in proc.stdout.splitlines() if "RESULT " in l).split("RESULT ")[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("kernels", nargs="*")
    args = parser.parse_args()
    folders = [p.parent for p in sorted(BENCH.glob("*/spec.py"))
               if (p.parent / "numba_version.py").exists() and (p.parent / "cython_version.pyx").exists()]
    if args.kernels:
        folders = [f for f in folders if f.name in args.kernels]
    env = {**os.environ, "PYDDC": pydd.find_pyddc()}
    print(f"pyddc: {env['PYDDC']}; median of {args.runs} runs; seconds from compile to first result\n")
    print("| kernel | %%pydd cold | %%pydd cache hit | @pydd.kernel cold | @pydd.kernel cache hit "
          "| Numba first call | %%cython build |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    columns = {k: [] for k in ("magic", "magic_hit", "deco", "deco_hit", "numba", "cython")}
    with tempfile.TemporaryDirectory() as tmp:
        for folder in folders:
            source = (folder / "kernel.pydd").read_text()
            python_valid = pydd.rewrite_source(source) == source
            decorated = Path(tmp) / f"{folder.name}_decorated.py"
            decorated.write_text(decorated_source(source))
            row = {k: [] for k in columns}
            for run in range(args.runs):
                # %%cython caches its builds under $XDG_CACHE_HOME/ipython.
                cold = {**env, "PYDD_CACHE_DIR": f"{tmp}/cache-{folder.name}-{run}",
                        "IPYTHONDIR": f"{tmp}/ipython-{folder.name}-{run}",
                        "XDG_CACHE_HOME": f"{tmp}/xdg-{folder.name}-{run}"}
                row["magic"].append(measure(folder, "magic", cold))
                row["magic_hit"].append(measure(folder, "magic", cold))
                if python_valid:
                    deco = {**cold, "PYDD_CACHE_DIR": cold["PYDD_CACHE_DIR"] + "-decorator"}
                    row["deco"].append(measure(folder, "decorator", deco, decorated))
                    row["deco_hit"].append(measure(folder, "decorator", deco, decorated))
                row["numba"].append(measure(folder, "numba", cold))
                row["cython"].append(measure(folder, "cython", cold))
            cells = []
            for k in columns:
                if row[k]:
                    value = statistics.median(row[k])
                    columns[k].append(value)
                    cells.append(f"{value * 1e3:.0f} ms" if value < 0.1 else f"{value:.2f} s")
                else:
                    cells.append("-")
            print(f"| {folder.name} | " + " | ".join(cells) + " |", flush=True)
    cells = [f"{statistics.median(v) * 1e3:.0f} ms" if statistics.median(v) < 0.1 else f"{statistics.median(v):.2f} s"
             for v in columns.values()]
    print("| **median** | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
