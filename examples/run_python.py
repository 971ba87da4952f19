"""Compiles the examples with pyddc and runs them from Python, printing each
result next to what NumPy (or plain Python) computes for the same inputs."""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import pydd  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def compiled(name):
    start = time.perf_counter()
    module = pydd.compile(os.path.join(HERE, name + ".pydd"))
    print(f"[{name}.pydd compiled and imported in {time.perf_counter() - start:.2f} s]")
    return module


def row(label, ours, reference):
    same = np.allclose(ours, reference) if isinstance(ours, np.ndarray) else ours == reference or np.isclose(ours, reference)
    print(f"  {label:<32} pyddc: {ours!s:<22} reference: {reference!s:<22} {'ok' if same else 'MISMATCH'}")
    return bool(same)


def main():
    ok = True
    numeric = compiled("numeric")
    ok &= row("fib(25)", numeric.fib(25), 75025)
    ok &= row("gcd(1071, 462)", numeric.gcd(1071, 462), int(np.gcd(1071, 462)))
    ok &= row("pisum(1)", numeric.pisum(1), float(np.sum(1.0 / np.arange(1, 10001, dtype=np.float64) ** 2)))

    kmeans = compiled("kmeans")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    C = X[:4].copy()
    labels = np.zeros(len(X), dtype=np.int64)
    for it in range(5):
        D = kmeans.pairwise_sqdist(X, C)
        D_np = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
        changed = kmeans.assign_labels(D, labels)  # writes into `labels`
        C_np = np.array([X[labels == c].mean(axis=0) for c in range(4)])
        C = kmeans.update_centers(X, labels, 4)
        ok &= row(f"iteration {it}: distances", D.round(3)[0], D_np.round(3)[0])
        ok &= row(f"iteration {it}: labels == argmin", bool((labels == D_np.argmin(axis=1)).all()), True)
        ok &= row(f"iteration {it}: centers", C.round(3)[0], C_np.round(3)[0])
        print(f"  {'':<32} ({changed} points changed label)")

    arrays = compiled("arrays")
    X = rng.normal(loc=3.0, scale=2.0, size=(500, 4))
    Z = arrays.standardize(X)
    ok &= row("standardize: column means", Z.mean(axis=0).round(12) + 0.0, np.zeros(4))
    ok &= row("standardize: column stds", Z.std(axis=0).round(12), np.ones(4))
    A = rng.random((3, 5))
    ok &= row("row_normalize: row 0", arrays.row_normalize(A)[0].round(6), (A[0] / A[0].sum()).round(6))
    x = rng.random(1000)
    ok &= row("top_k(x, 3)", arrays.top_k(x, 3), [int(i) for i in np.argsort(x)[-3:]])

    import scipy.sparse as sp
    graph = compiled("graph")
    G = sp.random(300, 300, density=0.03, random_state=4, format="csr")
    G = ((G + G.T) > 0).astype(np.float64).tocsr()
    G = (G - sp.diags(G.diagonal())).tocsr()  # no self-loops
    G.eliminate_zeros()
    ok &= row("triangles(G)", graph.triangles(G), int(round((G @ G).multiply(G).sum() / 6)))
    d = np.asarray(G.sum(axis=1)).ravel()
    r = np.full(300, 1 / 300)
    for _ in range(20):
        r = 0.15 / 300 + 0.85 * (G.T @ np.where(d > 0, r / np.maximum(d, 1), 0.0))
    ok &= row("pagerank(G)[:3]", graph.pagerank(G, 20, 0.85)[:3].round(8), r[:3].round(8))
    if not ok:
        sys.exit("some results differ from the reference")


if __name__ == "__main__":
    main()
