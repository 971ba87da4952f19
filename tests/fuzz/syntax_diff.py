"""Accept/reject differential fuzzing of pyddc's front end against CPython.

Every `.pydd` file in the repository is a seed; each mutant is a seed with a
few random edits of the kinds that break Python's syntax in quiet ways
(indentation, tabs, line endings, brackets, colons, keywords as names,
number and string literals, deleted or duplicated lines). pyddc compiles
the mutant to C++ (`--emit=cpp`: front end, sema, passes, emitter) and
CPython compiles the same bytes after the Intrepydd keywords are rewritten
to Python (`pfor` -> `for`, `async:`/`finish:`/`isolated:` -> `if 1:`),
as pyddc does.

The property: pyddc never accepts a text that CPython rejects, never
crashes (exit status other than 0 or 1, or a timeout), and every rejection
starts with a located `file:line:col: error:`. pyddc may reject more (it
compiles a subset of Python).

    /usr/bin/python3 tests/fuzz/syntax_diff.py --count 100000 --seed 1 -j 2

prints the counts and the first disagreements; `--keep DIR` saves them.
"""

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

KEYWORDS = ("False None True and as assert async await break class continue def del elif else except "
            "finally for from global if import in is lambda nonlocal not or pass raise return try while "
            "with yield").split()
SNIPPETS = [" ", "    ", "\t", "\n", "\r", "\r\n", ":", "(", ")", "[", "]", "{", "}", ",", "=", "#", "\"",
            "'", "\"\"\"", "\\", "\\\n", "0", "07", "1_", "0x", "1e", ".", ";", "+", "-", "*", "**", "@",
            "not ", " in ", " if ", "else", "elif x:", "pass", "pfor", "async:", "lambda", "$", "!", "->",
            ":=", "1j", "r'", "b'", "u'", "f'", "\\x4", "\\N{DASH}", "\f", "\x00", "\xff", "é", "..."]
LOCATED = re.compile(r"^\S+\.pydd:\d+:\d+: error: ")
_PFOR = re.compile(rb"^([ \t\f]*)pfor(?![A-Za-z0-9_])", re.M)
_BLOCK = re.compile(rb"^([ \t\f]*)(async|finish|isolated)([ \t]*:)", re.M)


def seeds():
    files = sorted(p for p in ROOT.rglob("*.pydd") if "build" not in p.relative_to(ROOT).parts)
    return [p.read_bytes() for p in files]


def as_python(src: bytes) -> bytes:
    """The Intrepydd keywords at the start of a line, as Python of the same length."""
    src = src.replace(b"\r\n", b"\n").replace(b"\r", b"\n")  # as CPython reads lines
    src = _PFOR.sub(lambda m: m.group(1) + b"for ", src)
    return _BLOCK.sub(lambda m: m.group(1) + b"if 1".ljust(len(m.group(2)), b" ") + m.group(3), src)


def cpython_accepts(src: bytes) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(as_python(src), "mutant.py", "exec", dont_inherit=True)
            return True
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return False


def mutate(src: bytes, rng: random.Random) -> bytes:
    text = src.decode("utf-8", "surrogateescape")
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        lines = text.split("\n")
        kind = rng.randrange(9)
        i = rng.randrange(len(text) + 1)
        li = rng.randrange(len(lines))
        if kind == 0:  # insert a snippet
            text = text[:i] + rng.choice(SNIPPETS) + text[i:]
        elif kind == 1:  # delete a few characters
            text = text[:i] + text[i + rng.randint(1, 4):]
        elif kind == 2:  # re-indent a line
            body = lines[li].lstrip(" \t")
            lines[li] = rng.choice(("", " ", "  ", "    ", "\t", "        ", "\t    ", "     ")) + body
            text = "\n".join(lines)
        elif kind == 3:  # delete or duplicate a line
            if rng.random() < 0.5:
                del lines[li]
            else:
                lines.insert(li, lines[li])
            text = "\n".join(lines)
        elif kind == 4:  # a keyword where a name is
            names = [m for m in re.finditer(r"\b[a-z_][a-z0-9_]*\b", text)]
            if names:
                m = rng.choice(names)
                text = text[:m.start()] + rng.choice(KEYWORDS) + text[m.end():]
        elif kind == 5:  # line endings
            text = text.replace("\n", rng.choice(("\r", "\r\n", "\n\r")))
        elif kind == 6:  # swap two lines
            lj = rng.randrange(len(lines))
            lines[li], lines[lj] = lines[lj], lines[li]
            text = "\n".join(lines)
        elif kind == 7:  # drop a colon or bracket
            spots = [k for k, c in enumerate(text) if c in ":()[],"]
            if spots:
                k = rng.choice(spots)
                text = text[:k] + text[k + 1:]
        else:  # replace a character by a snippet
            text = text[:i] + rng.choice(SNIPPETS) + text[i + 1:]
    return text.encode("utf-8", "surrogateescape")


def pyddc_exe():
    exe = os.environ.get("PYDDC") or str(ROOT / "build" / "bin" / "pyddc")
    if not Path(exe).exists():
        raise SystemExit(f"no pyddc at {exe}: build first or set PYDDC")
    return exe


def pyddc_status(exe: str, src: bytes, workdir: str, n: int):
    path = Path(workdir) / f"m{n}.pydd"
    path.write_bytes(src)
    try:
        proc = subprocess.run([exe, "--emit=cpp", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=30)
        return proc.returncode, proc.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "timeout", ""
    finally:
        path.unlink()


def run(count: int, seed: int, jobs: int = 2, keep: str = None):
    """Returns {counts}, [disagreements], [crashes] for `count` mutants."""
    rng = random.Random(seed)
    pool = seeds()
    exe = pyddc_exe()
    mutants = [mutate(rng.choice(pool), rng) for _ in range(count)]
    counts = {"mutants": count, "pyddc_accepts": 0, "cpython_accepts": 0, "both_accept": 0,
              "pyddc_only": 0, "cpython_only": 0, "crashes": 0, "unlocated": 0}
    bad, crashes = [], []
    with tempfile.TemporaryDirectory() as workdir, ThreadPoolExecutor(jobs) as ex:
        results = ex.map(lambda nm: pyddc_status(exe, nm[1], workdir, nm[0]), enumerate(mutants))
        for src, (status, stderr) in zip(mutants, results):
            ours = status == 0
            theirs = cpython_accepts(src)
            counts["pyddc_accepts"] += ours
            counts["cpython_accepts"] += theirs
            counts["both_accept"] += ours and theirs
            counts["cpython_only"] += theirs and not ours
            if status not in (0, 1):
                counts["crashes"] += 1
                crashes.append((src, status, stderr))
            elif status == 1 and not LOCATED.match(stderr):
                counts["unlocated"] += 1
                crashes.append((src, status, stderr))
            elif ours and not theirs:
                counts["pyddc_only"] += 1
                bad.append(src)
    if keep:
        os.makedirs(keep, exist_ok=True)
        for k, src in enumerate(bad):
            Path(keep, f"accepted_{k}.pydd").write_bytes(src)
        for k, (src, _, _) in enumerate(crashes):
            Path(keep, f"crash_{k}.pydd").write_bytes(src)
    return counts, bad, crashes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--keep", help="save disagreements and crashes in this directory")
    args = ap.parse_args()
    counts, bad, crashes = run(args.count, args.seed, args.jobs, args.keep)
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    for src in bad[:5]:
        print("--- pyddc accepts, CPython rejects:\n" + src.decode("utf-8", "replace"))
    for src, status, stderr in crashes[:5]:
        print(f"--- pyddc status {status}:\n{stderr[-2000:]}\n" + src.decode("utf-8", "replace"))
    return 1 if bad or crashes else 0


if __name__ == "__main__":
    sys.exit(main())
