"""Ctrl-C during a kernel call raises KeyboardInterrupt promptly and leaves
the process and the arguments usable (issue 15). Each case runs in a child
Python, so the signal never reaches pytest itself."""

import subprocess
import sys
import textwrap

from conftest import REPO

KERNEL = """
def nested(x: Array(float64), n: int) -> float64:
    s = 0.0
    for k in range(n):
        for i in range(len(x)):
            x[i] = x[i] + 1.0
            s += x[i]
    return s


def parallel_nested(x: Array(float64, 2), n: int) -> float64:
    # Each thread of the OpenMP loop sees the request at its own back edges.
    pfor r in range(shape(x, 0)):
        for k in range(n):
            for i in range(shape(x, 1)):
                x[r, i] = x[r, i] + 1.0
    return x[0, 0]


def spin(n: int) -> int:
    i = 0
    while i >= 0:
        i = (i + n) % 1000
    return i


def short_rows(n: int) -> float64:
    # Short iterations: checked every pydd::kInterruptPeriod of them.
    s = 0.0
    for k in range(n):
        for i in range(3):
            s += 1.0
    return s


def long_inner(n: int, m: int) -> float64:
    # Periodic checks, but each inner loop runs ~50 ms: it checks before it
    # starts, so the period does not multiply the wait.
    s = 0.0
    for k in range(n):
        for i in range(m):
            s += 1.0
    return s


def sparse_rows(S: SparseMat(float64), n: int) -> float64:
    # The rows' arrays are fetched once for the whole loop (one copy per
    # index width); the loop still sees Ctrl-C, counting each row's work.
    s = 0.0
    for k in range(n):
        for j, v in S.row(k % shape(S, 0)):
            s += v
    return s
"""

SCRIPT = """
import os, signal, sys, threading, time
import numpy as np
import pydd
# Python leaves SIGINT ignored when it starts ignored (a background job):
# handle it as an interactive Python does, before the module loads.
signal.signal(signal.SIGINT, signal.default_int_handler)
mod = pydd.compile(sys.argv[1], out_dir=sys.argv[2])

def interrupt_after(delay, sent):
    def fire():
        time.sleep(delay)
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=fire).start()

x = np.zeros(1000)
X = np.zeros((8, 100))
import scipy.sparse
S = scipy.sparse.random(50, 50, density=0.2, format="csr", random_state=1)
# Rows with no entries (each counts as kInterruptRowWork entries of work),
# and one row so long that every iteration checks before it runs.
empty = scipy.sparse.csr_matrix((50, 50))
long_row = scipy.sparse.csr_matrix(np.ones((1, 10**5)))
pydd.set_num_threads(2)
for call in (lambda: mod.nested(x, 10**12), lambda: mod.spin(7), lambda: mod.parallel_nested(X, 10**12),
             lambda: mod.short_rows(10**15), lambda: mod.long_inner(10**6, 10**8),
             lambda: mod.sparse_rows(S, 10**15), lambda: mod.sparse_rows(empty, 10**15),
             lambda: mod.sparse_rows(long_row, 10**15)):
    sent = []
    interrupt_after(0.2, sent)
    try:
        call()
        print("not interrupted")
    except KeyboardInterrupt:
        print("latency", time.perf_counter() - sent[0])
    time.sleep(0.05)

# The arguments and the module are still usable.
assert x[0] > 0 and np.all(x == x[0]), x
print("after", mod.nested(np.zeros(3), 2))

# A Ctrl-C while no kernel runs is Python's alone: the next call completes.
# (Inside the try: the signal may arrive while the thread is still starting.)
sent = []
try:
    interrupt_after(0.0, sent)
    time.sleep(1)
except KeyboardInterrupt:
    pass
print("later", mod.nested(np.zeros(3), 2))
"""


def test_sigint_raises_keyboard_interrupt(tmp_path, pyddc):
    src = tmp_path / "intr.pydd"
    src.write_text(KERNEL)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, src, tmp_path / "out"], capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(REPO / "python"), "PYDDC": pyddc, "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    latencies = [float(l.split()[1]) for l in lines if l.startswith("latency")]
    assert len(latencies) == 8, proc.stdout
    assert max(latencies) < 0.5, latencies
    assert "after 9.0" in proc.stdout and "later 9.0" in proc.stdout, proc.stdout
