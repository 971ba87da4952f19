"""The optimizer's ablation (the Intrepydd paper's Table 5): each suite kernel
built with pydd -O3, and -O3 with each pass disabled in turn, validated
against the Python original and timed in one process. A column's ratio to
-O3 above 1 is what that pass contributes.

    /usr/bin/python3 bench/ablation.py [--size small|full] [--runs N] [-k KERNEL ...]

Writes the Markdown table to stdout and bench/results/ablation-<size>.md.
"""
import argparse
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "python"))

from suite.kernels import discover  # noqa: E402
from suite.measure import measure_kernel  # noqa: E402



def pass_names():
    import subprocess

    import pydd
    # `pyddc --disable-pass=?` lists the passes in its error message.
    out = subprocess.run([pydd.find_pyddc(), "--disable-pass=?", "--emit=ir", str(BENCH / "fib" / "kernel.pydd")],
                         capture_output=True, text=True).stderr
    listed = out.split("(passes: ", 1)[1].split(")", 1)[0]
    return [p.strip() for p in listed.split(",") if p.strip() != "sema"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=("small", "full"), default="full")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-k", "--kernel", action="append")
    args = ap.parse_args(argv)

    passes = pass_names()
    versions = ["pydd-O3"] + [f"pydd-O3-no-{p}" for p in passes]
    rows = []
    for kernel in discover(args.kernel):
        records = measure_kernel(kernel, args.size, versions, args.runs, budget=60.0,
                                 log=lambda *a: print(*a, file=sys.stderr))
        rows.append((kernel.name, records))

    head = ["kernel", "-O3"] + [f"no {p}" for p in passes]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, recs in rows:
        o3 = recs.get("pydd-O3", {}).get("median_s")
        cells = [name]
        for v in versions:
            rec = recs.get(v, {})
            t = rec.get("median_s")
            if t is None:
                cells.append(rec.get("error", "—")[:40])
            elif v == "pydd-O3" or not o3:
                cells.append(f"{t:.3f} s")
            else:
                cells.append(f"{t:.3f} s ({t / o3:.2f}×)")
        lines.append("| " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print(f"pydd ablation, size {args.size}, median of {args.runs} calls; (×) = time / -O3 time\n")
    print(table)
    out = BENCH / "results" / f"ablation-{args.size}.md"
    out.write_text(f"# pydd ablation ({args.size})\n\n`/usr/bin/python3 bench/ablation.py --size {args.size}`\n\n"
                   + table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
