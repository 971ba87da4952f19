"""IP-NSW query (prog-eval ipnsw, the Intrepydd paper's ipnsw): approximate
maximum-inner-product search over a hierarchical navigable small-world graph.
For each query: a greedy walk from the entry node down the upper levels (move
to any neighbour with a larger inner product until none is), then a best-first
search of level 0 with a candidate min-heap and a bounded result heap of size
ef; returns the ids of the n_results best vectors (largest inner product
first) and the number of distance evaluations.

The data replaces the music100 set (10^6 x 100 float32, prebuilt graphs) with
a seeded one built here, untimed: continuous random float64 vectors (float64
so that no two distances tie or swap under another summation order), nested
levels (each level a random prefix 1/16 the size of the one below, as HNSW's
geometric level draw), and on each level every member's M nearest members by
inner product (M0 = 2M on level 0, as HNSW), the neighbour list sorted by
decreasing inner product. The entry node is the member of the top level.

Graph formats: Python gets the original's per-level dicts {node: neighbour
id array} (G0, and Gs from the top level down); the other versions get one
CSR structure for all levels: indptr[l, v]..indptr[l, v + 1] index the
neighbours of v on level l in indices (int64), level 0 first.
"""

import numpy as np

ENTRY = "search_knn"
PFOR = True
TOLERANCE = "exact: result ids (n_queries x n_results, int64) and the distance-evaluation count"

# n: vectors, dim, levels, M (M0 = 2M), queries, ef, n_results
SIZES = {
    "small": dict(n=2000, dim=32, levels=3, m=8, n_queries=20, ef=32, n_results=10),
    "full": dict(n=20000, dim=64, levels=4, m=16, n_queries=1000, ef=128, n_results=10),
}


def _knn_by_inner_product(X, members, k, block=1024):
    """For each member, the k other members with the largest inner product
    (global ids, sorted by decreasing inner product)."""
    Y = X[members]
    k = min(k, len(members) - 1)
    out = np.empty((len(members), k), dtype=np.int64)
    for s in range(0, len(members), block):
        ip = Y[s:s + block] @ Y.T
        rows = np.arange(ip.shape[0])
        ip[rows, s + rows] = -np.inf
        top = np.argpartition(ip, -k, axis=1)[:, -k:]
        order = np.argsort(-np.take_along_axis(ip, top, axis=1), axis=1, kind="stable")
        out[s:s + block] = members[np.take_along_axis(top, order, axis=1)]
    return out


def generate(size):
    p = SIZES[size]
    rng = np.random.default_rng(20190923)
    n, dim, levels, m = p["n"], p["dim"], p["levels"], p["m"]
    # Gaussian directions with norms spread over [0.5, 1.5]: inner product
    # differs from cosine, as in the music100 vectors.
    X = rng.standard_normal((n, dim))
    X *= (rng.uniform(0.5, 1.5, n) / np.linalg.norm(X, axis=1))[:, None]
    queries = rng.standard_normal((p["n_queries"], dim))
    perm = rng.permutation(n).astype(np.int64)

    indptr = np.zeros((levels, n + 1), dtype=np.int64)
    chunks = []
    offset = 0
    dicts = []
    for level in range(levels):
        members = np.sort(perm[:max(2, n // 16 ** level)])
        nbrs = _knn_by_inner_product(X, members, 2 * m if level == 0 else m)
        degree = np.zeros(n, dtype=np.int64)
        degree[members] = nbrs.shape[1]
        indptr[level, 1:] = offset + np.cumsum(degree)
        indptr[level, 0] = offset
        chunks.append(nbrs.ravel())  # members are sorted, so rows are in node order
        offset += nbrs.size
        dicts.append({int(v): nbrs[i] for i, v in enumerate(members)})
    indices = np.concatenate(chunks)
    v_entry = int(perm[0])  # in every level (the levels are prefixes of perm)

    return dict(X=X, queries=queries, indptr=indptr, indices=indices,
                G0=dicts[0], Gs=dicts[:0:-1], v_entry=v_entry,
                ef=p["ef"], n_results=p["n_results"])


def arguments(data, version):
    # Nothing is written by any version; the arrays are shared between calls.
    d = data
    if version == "python":
        return (d["G0"], d["Gs"], d["X"], d["queries"], d["v_entry"], d["ef"], d["n_results"])
    return (d["indptr"], d["indices"], d["X"], d["queries"], d["v_entry"], d["ef"], d["n_results"])


def result(returned, args):
    ids, calls = returned
    return np.asarray(ids, dtype=np.int64), int(calls)


def check(expected, got):
    e_ids, e_calls = expected
    g_ids, g_calls = got
    assert g_ids.shape == e_ids.shape, f"result shape {g_ids.shape}, expected {e_ids.shape}"
    bad = np.flatnonzero((g_ids != e_ids).any(axis=1))
    assert bad.size == 0, (f"{bad.size} of {e_ids.shape[0]} queries differ; query {bad[0]}: "
                           f"got {g_ids[bad[0]].tolist()}, expected {e_ids[bad[0]].tolist()}")
    assert g_calls == e_calls, f"{g_calls} distance evaluations, expected {e_calls}"
