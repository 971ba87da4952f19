"""pyddc's accept/reject decision against CPython's on mutated kernels.

A bounded run for CI (PYDD_SYNTAX_MUTANTS, default 1500, ~5 s); the
campaign is `/usr/bin/python3 tests/fuzz/syntax_diff.py --count 100000`.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import syntax_diff  # noqa: E402

COUNT = int(os.environ.get("PYDD_SYNTAX_MUTANTS", "1500"))


def test_pyddc_accepts_nothing_cpython_rejects():
    counts, bad, crashes = syntax_diff.run(COUNT, seed=7)
    shown = [b.decode("utf-8", "replace") for b in bad[:3]]
    assert not bad, f"{counts}\npyddc accepts, CPython rejects:\n" + "\n----\n".join(shown)
    assert not crashes, f"{counts}\n" + "\n----\n".join(f"status {s}: {e[-1500:]}" for _, s, e in crashes[:3])
    # The mutants exercise both sides: many are still valid, many are not.
    assert counts["both_accept"] > COUNT // 10 and counts["cpython_accepts"] < COUNT * 9 // 10, counts


def test_cpython_side_rewrites_intrepydd_keywords():
    src = b"def f(n: int):\n    pfor i in range(n):\n        pass\n    finish:\n        async :\n            pass\n"
    assert syntax_diff.cpython_accepts(src)
    assert syntax_diff.cpython_accepts(src.replace(b"\n", b"\r"))
    assert not syntax_diff.cpython_accepts(src.replace(b"    pass", b"pass", 1))
