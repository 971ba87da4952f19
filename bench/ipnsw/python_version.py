"""IP-NSW search: greedy descent through the upper levels, then a best-first
search of level 0 with heapq (candidates: a min-heap on distance; results: a
min-heap on negated distance holding the ef best seen)."""

import heapq

import numpy as np


def dist(a, b):
    # the negative inner product: smaller is more similar
    return -np.dot(a, b)


def single_search_knn(G0, Gs, data, q, v_entry, ef, n_results):
    num_calls = 0

    v_curr = v_entry
    d_curr = dist(q, data[v_curr])
    num_calls += 1

    # greedy walk on each upper level, from the top down
    for G in Gs:
        changed = True
        while changed:
            changed = False
            for v in G[v_curr]:
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
    while candidates:
        d_c, c = heapq.heappop(candidates)
        if d_c > -results[0][0]:
            break
        for e in G0[c]:
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

    best = sorted(results, reverse=True)[:n_results]
    return np.array([v for _, v in best]), num_calls


def search_knn(G0, Gs, data, queries, v_entry, ef, n_results):
    all_results = []
    total_calls = 0
    for q in queries:
        results, num_calls = single_search_knn(G0, Gs, data, q, v_entry, ef, n_results)
        all_results.append(results)
        total_calls += num_calls
    return np.stack(all_results), total_calls
