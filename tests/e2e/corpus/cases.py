"""Inputs for the NumPy-style corpus (tests/e2e/test_corpus.py, bench/corpus.py).

ARGS[name](rng, size) -> the argument tuple of kernel `name` (the function
of that name in corpus/name.pydd); `size` scales the problem ("test": small
and quick, "bench": large enough to time).
"""

import numpy as np

CORPUS = __import__("pathlib").Path(__file__).resolve().parent

# Kernels pyddc does not compile yet, and why (the test checks that they
# still fail, so this list stays true).
UNSUPPORTED = {}


def _n(size, test, bench):
    return test if size == "test" else bench


ARGS = {
    "arc_distance": lambda rng, s: tuple(rng.uniform(-3, 3, _n(s, 50, 1_000_000)) for _ in range(4)),
    "rosen": lambda rng, s: (rng.uniform(-1, 1, _n(s, 50, 1_000_000)),),
    "cronbach": lambda rng, s: (rng.normal(3, 1, (_n(s, 6, 50), _n(s, 40, 20_000))),),
    "l2norm": lambda rng, s: (rng.normal(size=(_n(s, 7, 1000), _n(s, 5, 1000))),),
    "log_likelihood": lambda rng, s: (rng.normal(size=_n(s, 60, 1_000_000)), 0.3, 1.7),
    "go_fast": lambda rng, s: (rng.normal(size=(_n(s, 6, 1000), _n(s, 6, 1000))),),
    "diffusion": lambda rng, s: (rng.uniform(size=(_n(s, 12, 300), _n(s, 10, 300))), _n(s, 3, 50), 0.1),
    "normalize": lambda rng, s: (rng.standard_t(3, _n(s, 80, 1_000_000)),),
    "trapezoid": lambda rng, s: (0.0, 10.0, _n(s, 33, 1_000_000)),
    "softmax": lambda rng, s: (rng.normal(size=(_n(s, 4, 1000), _n(s, 9, 1000))),),
    "gram": lambda rng, s: (rng.normal(size=(_n(s, 5, 500), _n(s, 3, 200))),),
    "pairwise": lambda rng, s: (rng.normal(size=(_n(s, 9, 400), _n(s, 3, 3))),),
    "pairwise_broadcast": lambda rng, s: (rng.normal(size=(_n(s, 9, 400), _n(s, 3, 3))),),
    "relu_inplace": lambda rng, s: (rng.normal(size=(_n(s, 5, 1000), _n(s, 4, 1000))),),
    "mandelbrot": lambda rng, s: (-2.0, 0.6, -1.3, 1.3, _n(s, 12, 200), _n(s, 30, 100)),
    "ewma": lambda rng, s: (rng.normal(size=_n(s, 40, 1_000_000)), 0.2, 5),
    "hist_count": lambda rng, s: (rng.normal(size=_n(s, 100, 1_000_000)), 10),
    "masked_mean": lambda rng, s: (rng.normal(size=_n(s, 30, 1_000_000)),),
    "wave_energy": lambda rng, s: (np.linspace(0.0, 4.0, _n(s, 40, 1_000_000)), 0.7),
    "robust_zscore": lambda rng, s: (rng.standard_t(2, _n(s, 51, 1_000_001)),),
    "polyfit": lambda rng, s: (lambda x: (x, np.sin(3 * x) + 0.1 * rng.normal(size=x.size)))(
        rng.uniform(-1, 1, _n(s, 40, 1_000_000))),
    "top_k": lambda rng, s: (rng.normal(size=_n(s, 30, 1_000_000)), rng.normal(size=(_n(s, 4, 1000), _n(s, 5, 1000)))),
    "kmeans_step": lambda rng, s: (rng.normal(size=(_n(s, 40, 200_000), 3)), rng.normal(size=(_n(s, 4, 8), 3))),
}
