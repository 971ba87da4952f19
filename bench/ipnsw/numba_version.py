"""IP-NSW search in Numba: the same greedy descent and two-heap best-first
search (heapq on lists of (distance, id) tuples, a set for visited nodes)."""

import heapq

import numpy as np
from numba import njit


@njit(cache=False)
def dist(a, b):
    # the negative inner product: smaller is more similar
    return -np.dot(a, b)


@njit(cache=False)
def single_search_knn(indptr, indices, data, q, v_entry, ef, out):
    num_calls = 0

    v_curr = v_entry
    d_curr = dist(q, data[v_curr])
    num_calls += 1

    # greedy walk on each upper level, from the top down
    for level in range(indptr.shape[0] - 1, 0, -1):
        changed = True
        while changed:
            changed = False
            for j in range(indptr[level, v_curr], indptr[level, v_curr + 1]):
                v = indices[j]
                d = dist(q, data[v])
                num_calls += 1
                if d < d_curr:
                    d_curr = d
                    v_curr = v
                    changed = True

    # best-first search of level 0
    visited = {v_curr}
    candidates = [(d_curr, v_curr)]
    results = [(-d_curr, v_curr)]
    while len(candidates) > 0:
        d_c, c = heapq.heappop(candidates)
        if d_c > -results[0][0]:
            break
        for j in range(indptr[0, c], indptr[0, c + 1]):
            e = indices[j]
            if e in visited:
                continue
            visited.add(e)
            d_e = dist(q, data[e])
            num_calls += 1
            if len(results) < ef or d_e < -results[0][0]:
                heapq.heappush(candidates, (d_e, e))
                heapq.heappush(results, (-d_e, e))
                if len(results) > ef:
                    heapq.heappop(results)

    # the results heap pops worst first: keep the last len(out), best first
    while len(results) > len(out):
        heapq.heappop(results)
    k = len(results)
    while len(results) > 0:
        nd, v = heapq.heappop(results)
        k -= 1
        out[k] = v
    return num_calls


@njit(cache=False)
def search_knn(indptr, indices, data, queries, v_entry, ef, n_results):
    n_queries = queries.shape[0]
    all_results = np.zeros((n_queries, n_results), dtype=np.int64)
    total_calls = 0
    for i in range(n_queries):
        total_calls += single_search_knn(indptr, indices, data, queries[i], v_entry, ef,
                                         all_results[i])
    return all_results, total_calls
