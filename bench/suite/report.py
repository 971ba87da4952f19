"""The suite's outputs: a Markdown table, a JSON file and a bar chart."""

import json
import math
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone

from suite.kernels import VERSIONS

LABELS = {"python": "Python", "numba": "Numba", "cython": "Cython", "cpp": "hand C++",
          "pydd-O0": "pydd -O0", "pydd-O3": "pydd -O3"}


def machine():
    """What the numbers were measured on."""
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    versions = {"python": platform.python_version()}
    for mod in ("numpy", "scipy", "numba", "Cython"):
        try:
            versions[mod] = __import__(mod).__version__
        except ImportError:
            versions[mod] = None
    gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()
    versions["compiler"] = gxx[0] if gxx else None
    return {"cpu": cpu, "cores": os.cpu_count(), "os": platform.platform(),
            "versions": versions, "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


# The versions run again at each further thread count (on the pfor kernels):
# pydd's OpenMP build and the hand-written C++, which uses OpenMP where the
# kernel has a pfor.
THREADED = ("pydd-O3", "cpp")


def column(version, threads, base_threads):
    return version if threads == base_threads else f"{version}@{threads}t"


def _seconds(rec, runs):
    if rec is None:
        return "—"
    if "error" in rec:
        return "FAILED" if "disagrees" not in rec["error"] else "MISMATCH"
    n = len(rec["times_s"])
    return f"{rec['median_s']:.4g}" + ("" if n >= runs else f" ({n} run{'s' if n > 1 else ''})")


def _ratio(num, den):
    if not num or not den or "median_s" not in num or "median_s" not in den:
        return None
    return num["median_s"] / den["median_s"]


def _fmt_ratio(r, suffix="×"):
    return "—" if r is None else f"{r:.3g}{suffix}"


def _geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _scaling(results):
    """The pfor kernels' speed-up over the first thread count, pydd's and the
    hand C++'s side by side."""
    threads = results["threads"]
    if len(threads) < 2:
        return []
    t0 = threads[0]
    head = [f"{LABELS[v]} {t} over {t0} thr" for t in threads[1:] for v in THREADED]
    lines = ["", f"Speed-up of the pfor kernels over {t0} thread(s):", "",
             "| kernel | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
    for name, recs in results["kernels"].items():
        if not results.get("pfor", {}).get(name):
            continue
        cells = [_fmt_ratio(_ratio(recs.get(v), recs.get(column(v, t, t0)))) for t in threads[1:] for v in THREADED]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def markdown(results):
    kernels = results["kernels"]
    threads = results["threads"]
    extra = [column(v, t, threads[0]) for t in threads[1:] for v in THREADED]
    head = [LABELS[v] for v in VERSIONS] + [f"{LABELS[v]} {t} thr" for t in threads[1:] for v in THREADED]
    lines = [f"Size `{results['size']}`, median of {results['runs']} runs after a warm-up, seconds "
             f"per call at the Python call site; {threads[0]} thread(s) unless stated. A version "
             f"slower than the time budget ({results['budget']:g} s) gets fewer runs, as marked "
             "(one run: no warm-up).", "",
             "| kernel | " + " | ".join(head) +
             " | -O3 over Python | -O3 over Numba | -O3 / hand C++ |",
             "|---" * (len(head) + 4) + "|"]
    over_py, over_nb, over_cpp = [], [], []
    for name, recs in kernels.items():
        o3 = recs.get("pydd-O3")
        r_py, r_nb, r_cpp = _ratio(recs.get("python"), o3), _ratio(recs.get("numba"), o3), _ratio(o3, recs.get("cpp"))
        over_py.append(r_py), over_nb.append(r_nb), over_cpp.append(r_cpp)
        cells = [_seconds(recs.get(v), results["runs"]) for v in VERSIONS] + \
            [_seconds(recs.get(c), results["runs"]) for c in extra]
        lines.append(f"| {name} | " + " | ".join(cells) +
                     f" | {_fmt_ratio(r_py)} | {_fmt_ratio(r_nb)} | {_fmt_ratio(r_cpp)} |")
    lines.append("| **geomean** | " + " | ".join([""] * len(head)) +
                 f" | {_fmt_ratio(_geomean(over_py))} | {_fmt_ratio(_geomean(over_nb))}"
                 f" | {_fmt_ratio(_geomean(over_cpp))} |")
    lines += _scaling(results)
    lines += ["", "Compile latency (seconds): pyddc's translation (`--emit=cpp`) and `.pydd` → "
              "importable module, Numba's first call minus a steady call, Cython's and the hand "
              "C++ module's build.", "",
              "| kernel | pyddc -O0 translate | pydd -O0 module | pyddc -O3 translate | pydd -O3 module "
              "| Numba JIT | Cython build | hand C++ build |", "|---" * 8 + "|"]

    def get(rec, key):
        return f"{rec[key]:.3g}" if rec and key in rec else "—"

    for name, recs in kernels.items():
        o0, o3 = recs.get("pydd-O0"), recs.get("pydd-O3")
        lines.append(f"| {name} | {get(o0, 'translate_s')} | {get(o0, 'build_s')} | "
                     f"{get(o3, 'translate_s')} | {get(o3, 'build_s')} | {get(recs.get('numba'), 'jit_s')} | "
                     f"{get(recs.get('cython'), 'build_s')} | {get(recs.get('cpp'), 'build_s')} |")
    m = results["machine"]
    lines += ["", f"Measured {m['date']} on {m['cpu']} ({m['cores']} cores), {m['os']}; "
              + ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v) + ".",
              f"Command: `{results['command']}`"]
    tolerances = [f"- {name}: {results['tolerances'][name]}" for name in kernels]
    lines += ["", "Validation against the Python version (every version, before timing):", *tolerances]
    return "\n".join(lines) + "\n"


def chart(results, path):
    """Speed-up over Python per kernel and version, log scale (the paper's Figure 4)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kernels = list(results["kernels"])
    shown = [v for v in VERSIONS if v != "python"]
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(kernels)), 4.5))
    width = 0.8 / len(shown)
    for i, version in enumerate(shown):
        ys = [_ratio(results["kernels"][k].get("python"), results["kernels"][k].get(version)) or 0
              for k in kernels]
        xs = [j + (i - (len(shown) - 1) / 2) * width for j in range(len(kernels))]
        ax.bar(xs, ys, width, label=LABELS[version])
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(kernels)), kernels)
    ax.set_ylabel("speed-up over Python (log)")
    ax.set_title(f"pydd benchmark suite, size {results['size']}, {results['threads'][0]} thread(s)")
    ax.legend(ncol=len(shown), fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.08), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(results, out_dir, stem):
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n")
    (out_dir / f"{stem}.md").write_text(markdown(results))
    chart(results, out_dir / f"{stem}.png")
    return [out_dir / f"{stem}.{ext}" for ext in ("md", "json", "png")]
