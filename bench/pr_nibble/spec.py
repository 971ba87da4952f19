"""PR-Nibble (prog-eval lgc/, Shun et al.'s optimized parallel PR-Nibble):
approximate personalized PageRank by frontier-based residual pushes, one
PageRank vector per seed node; alpha 0.15, epsilon 1e-6.

full: the 5157-node jhu.mtx graph, seeds 0..199 (prog-eval runs the first 50
nodes; 200 puts the Python baseline at ~5-20 s). small: a seeded random
300-node graph (a ring plus random edges, so no node is isolated), 10 seeds.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from suite.graphs import check_scores, lgc_graph  # noqa: E402

ENTRY = "pr_nibble"
PFOR = True
TOLERANCE = "np.allclose(rtol=1e-9, atol=1e-12) on the nodes x seeds score matrix (shape exact)"

ALPHA = 0.15
EPSILON = 1e-6


def generate(size):
    seeds = np.arange(10 if size == "small" else 200, dtype=np.int64)
    return {"adj": lgc_graph(size, seed=20240607), "seeds": seeds}


def arguments(data, version):
    adj, seeds = data["adj"], data["seeds"].copy()
    if version in ("python", "pydd-O0", "pydd-O3"):
        return (seeds, adj, ALPHA, EPSILON)
    return (seeds, adj.indptr, adj.indices, adj.data, ALPHA, EPSILON)


def check(expected, got):
    check_scores(expected, got, rtol=1e-9, atol=1e-12)
