"""ISTA for l1-regularized PageRank (prog-eval lgc/, Fountoulakis et al.'s
Algorithm 4): 50 proximal-gradient iterations per seed node, one PageRank
vector per seed; alpha 0.15, rho 1e-5.

full: the 5157-node jhu.mtx graph, seeds 0..499 (prog-eval's ISTA seed set:
10 x its 50 PR-Nibble seeds; Python ~5-15 s, pydd -O0 ~30x that).
small: a seeded random 300-node graph (a ring plus random edges, so every
degree is positive), 20 seeds.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from suite.graphs import check_scores, lgc_graph  # noqa: E402

ENTRY = "ista"
PFOR = True
TOLERANCE = "np.allclose(rtol=1e-9, atol=1e-12) on the nodes x seeds score matrix (shape exact)"

ALPHA = 0.15
RHO = 1e-5
ITERS = 50


def generate(size):
    seeds = np.arange(20 if size == "small" else 500, dtype=np.int64)
    return {"adj": lgc_graph(size, seed=20240608), "seeds": seeds}


def arguments(data, version):
    adj, seeds = data["adj"], data["seeds"].copy()
    if version in ("python", "pydd-O0", "pydd-O3"):
        return (seeds, adj, ALPHA, RHO, ITERS)
    return (seeds, adj.indptr, adj.indices, adj.data, ALPHA, RHO, ITERS)


def check(expected, got):
    check_scores(expected, got, rtol=1e-9, atol=1e-12)
