"""bigCLAM (RobRomijnders/bigclam main.py): fit community affiliations F to a
planted-community graph by per-node gradient ascent, a fixed number of
iterations (the original has no tolerance), with the log-likelihood after each
iteration.

Data as util/generate_data.py makes it, seeded: every node gets one community
drawn with probabilities w, a fraction `cross` a second one drawn uniformly;
two nodes sharing communities S are linked with probability 1 - prod_{c in S}(1 - p_c),
others with 0.02; A = upper + upper.T (int8 0/1, zero diagonal). The initial F,
uniform in [0, 1) as np.random.rand(N, C) in the original, is part of the data.
The step size is the original's 0.005 at its 40 nodes, scaled as 0.2 / N: the
non-neighbour term of the gradient grows with N, and with 0.005 at N = 400 the
ascent diverges (F entries ~1e2, log-likelihood ~-1e7, results that differ by
1e-4 relative after a 1e-13 change of F0); with 0.2 / N it converges.
Every version gets the int8 matrix.
"""

import numpy as np

ENTRY = "train"
PFOR = False
TOLERANCE = ("F and the per-iteration log-likelihoods: np.allclose(rtol=1e-8, atol=1e-10) "
             "(summation order and exp/log differ between versions)")

# nodes, community weights w, within-community edge probabilities p, cross, iterations
SIZES = {
    "small": (40, [.3, .3, .2, .2], [.2, .3, .3, .2], .1, 30),
    "full": (500, [.3, .3, .2, .2], [.2, .3, .3, .2], .1, 30),
}


def _planted_graph(rng, N, w, p, cross):
    W = len(w)
    initial = rng.choice(W, p=w, size=N)
    member = np.zeros((N, W), dtype=bool)
    member[np.arange(N), initial] = True
    second = rng.random(N) < cross
    member[np.nonzero(second)[0], rng.integers(0, W, size=N)[second]] = True

    p_nedge = np.ones((N, N))
    shared = np.zeros((N, N), dtype=bool)
    for c in range(W):
        both = np.outer(member[:, c], member[:, c])
        p_nedge[both] *= 1. - p[c]
        shared |= both
    p_nedge[~shared] = 0.98

    upper = np.triu(rng.random((N, N)) < 1. - p_nedge, k=1).astype(np.int8)
    return upper + upper.T


def generate(size):
    N, w, p, cross, iterations = SIZES[size]
    rng = np.random.default_rng(20130204)
    A = _planted_graph(rng, N, w, p, cross)
    F0 = rng.random((N, len(w)))
    return {"A": A, "F0": F0, "iterations": iterations, "lr": 0.2 / N}


def arguments(data, version):
    return (data["A"], data["F0"].copy(), data["iterations"], data["lr"])


def result(returned, args):
    F, lls = returned
    return np.array(F, dtype=np.float64), np.array(lls, dtype=np.float64)


def check(expected, got):
    for name, e, g in zip(("F", "log-likelihoods"), expected, got):
        assert e.shape == g.shape, f"{name}: shape {g.shape}, expected {e.shape}"
        if not np.allclose(g, e, rtol=1e-8, atol=1e-10):
            bad = np.argmax(np.abs(g - e) - 1e-8 * np.abs(e))
            raise AssertionError(
                f"{name} differs: at flat index {bad} got {g.flat[bad]!r}, expected {e.flat[bad]!r} "
                f"(max abs diff {np.max(np.abs(g - e)):.3g})")
