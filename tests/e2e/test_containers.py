"""List, Dict and Heap kernels (kernels/containers.pydd) compiled vs Python:
lists built, popped, indexed and returned; dicts as histograms and group-by
tables (insertion order, get, +=, items, KeyError); heaps with heapq's exact
order, key-value heaps ordered as tuples, Dijkstra and a best-first graph
search as ipnsw does it."""

import heapq

import numpy as np
import pytest

from same import same

RNG = np.random.default_rng(77)


def test_list_building(build, opt):
    comp, ref = build("containers", opt)
    x = RNG.normal(size=30)
    for t in (-10.0, 0.0, 0.5, 10.0):
        got, _ = same(comp.indices_above, ref.indices_above, x, t)
        assert got == [i for i in range(30) if x[i] > t]
    got, _ = same(comp.literal_list, ref.literal_list, 7)
    assert got == [3, 1, 4, 1, 5, 9, 2, 6, 7]
    same(comp.compact_nonzero, ref.compact_nonzero, np.array([0.0, 1.5, -0.0, 2.0, 0.0, -3.0]))
    same(comp.compact_nonzero, ref.compact_nonzero, np.zeros(4))
    same(comp.rows_above, ref.rows_above, RNG.normal(size=(6, 3)), 0.8)
    same(comp.rows_above, ref.rows_above, RNG.normal(size=(6, 3)), 100.0)
    for n in (0, 1, 10, 100):
        same(comp.list_of_lists_total, ref.list_of_lists_total, n)


def test_list_operations(build, opt):
    comp, ref = build("containers", opt)
    for xs, k in (([5, 8, 13, 21], 13), ([5, 8, 13, 21], 21), ([1], 1), ([], 0), ([2, 2], 102)):
        got, _ = same(comp.list_ops, ref.list_ops, xs, k)
    caller = [1, 2, 3]
    comp.list_ops(caller, 0)
    assert caller == [1, 2, 3]  # lists cross the boundary by value
    xs = [0.5, -1.0, 2.5, 4.0]
    for i in (0, 2, -1, -4):
        same(comp.pop_at, ref.pop_at, xs, i)
        same(comp.list_index, ref.list_index, xs, i)
    for i in (4, -5, 100):
        same(comp.pop_at, ref.pop_at, xs, i)  # IndexError
        same(comp.list_index, ref.list_index, xs, i)  # IndexError
    with pytest.raises(IndexError):
        comp.pop_at([], 0)
    got, _ = same(comp.reverse_list, ref.reverse_list, xs)
    assert got == xs[::-1]
    same(comp.reverse_list, ref.reverse_list, [])


def test_builtins_on_lists(build, opt):
    comp, ref = build("containers", opt)
    same(comp.list_min_max_sum, ref.list_min_max_sum, [3.0, -1.5, 2.25])
    same(comp.list_min_max_sum, ref.list_min_max_sum, [7.0])
    same(comp.list_min_max_sum, ref.list_min_max_sum, [])  # ValueError: min() of an empty sequence
    for xs in ([], [True], [False], [True, True], [True, False, True]):
        same(comp.list_any_all, ref.list_any_all, xs)


def test_histograms(build, opt):
    comp, ref = build("containers", opt)
    labels = RNG.integers(-3, 6, size=200)
    got, _ = same(comp.histogram, ref.histogram, labels)
    counts = {}
    for v in labels:
        counts[int(v)] = counts.get(int(v), 0) + 1
    assert got == counts and list(got) == list(counts)  # insertion order
    same(comp.histogram, ref.histogram, np.zeros(0, np.int64))
    same(comp.most_common, ref.most_common, labels)
    same(comp.most_common, ref.most_common, np.array([4, 4, 9, 9, 9, 4, 4], np.int64))


def test_group_by(build, opt):
    comp, ref = build("containers", opt)
    labels = RNG.integers(0, 7, size=100)
    values = RNG.normal(size=100)
    got, _ = same(comp.group_sum, ref.group_sum, labels.astype(np.int32), values, rtol=1e-12)
    assert all(isinstance(k, int) for k in got)
    same(comp.group_mean, ref.group_mean, labels, values, rtol=1e-12)
    same(comp.group_mean, ref.group_mean, labels[:0], values[:0])


def test_dict_keys_of_every_kind(build, opt):
    comp, ref = build("containers", opt)
    x = np.array([1.5, -0.0, 2.0, 1.5, 0.0, -7.25, 2.0, np.inf, -np.inf, np.inf])
    got, _ = same(comp.float_keys, ref.float_keys, x)
    assert len(got) == 6  # -0.0 and 0.0 are one key
    got, _ = same(comp.bool_keys, ref.bool_keys, RNG.integers(-10, 10, size=25))
    assert list(got) == [True, False] and all(isinstance(k, bool) for k in got)
    got, _ = same(comp.overwrite_keeps_order, ref.overwrite_keeps_order, 12)
    assert list(got) == [0, 2, 4, 1, 3]  # overwriting a key keeps its place
    for k in (1, 2, 3, 4, -5):
        same(comp.dict_literal, ref.dict_literal, k)


def test_dict_lookups_and_errors(build, opt):
    comp, ref = build("containers", opt)
    d = {3: 1.5, -1: 2.5, 10: -0.5}
    for k in (3, -1, 10):
        same(comp.dict_lookup, ref.dict_lookup, d, k)
        same(comp.dict_get, ref.dict_get, d, k)
    same(comp.dict_get, ref.dict_get, d, 4)
    same(comp.dict_lookup, ref.dict_lookup, d, 4)  # KeyError
    with pytest.raises(KeyError) as e:
        comp.dict_lookup(d, 42)
    assert "42" in str(e.value)
    same(comp.dict_increment_missing, ref.dict_increment_missing, {1: 1, 2: 2}, 2)
    same(comp.dict_increment_missing, ref.dict_increment_missing, {1: 1, 2: 2}, 5)  # KeyError


def test_heaps(build, opt):
    comp, ref = build("containers", opt)
    x = RNG.normal(size=40)
    x[[3, 17, 30]] = 0.25  # equal keys
    got, _ = same(comp.heap_sort, ref.heap_sort, x)
    assert got == sorted(x.tolist())
    same(comp.heap_sort, ref.heap_sort, np.zeros(0))
    xi = RNG.integers(-100, 100, size=50)
    for k in (1, 5, 50):
        got, _ = same(comp.heap_peek_pop, ref.heap_peek_pop, xi, k)
        assert got == [sorted(xi.tolist())[-k], k]
    same(comp.pop_empty_heap, ref.pop_empty_heap, 3)  # IndexError on the 4th pop
    with pytest.raises(IndexError):
        comp.pop_empty_heap(0)
    same(comp.peek_empty_heap, ref.peek_empty_heap)


def test_containers_in_and_or(build, opt):
    comp, ref = build("containers", opt)
    x = RNG.integers(-20, 20, size=30)
    for t in (-100, 0, 100):  # drains nothing, some, everything (then `h` is empty)
        same(comp.drain_below, ref.drain_below, x, t)
    same(comp.drain_below, ref.drain_below, np.zeros(0, np.int64), 0)


def test_key_value_heaps(build, opt):
    comp, ref = build("containers", opt)
    x = np.round(RNG.normal(size=30), 1)  # many ties: broken by the index
    for k in (0, 3, 30, 40):
        got, _ = same(comp.k_smallest, ref.k_smallest, x, k)
        assert got == sorted(range(30), key=lambda i: (x[i], i))[:k]
    keys = RNG.integers(0, 4, size=20)
    vals = RNG.integers(0, 9, size=20)
    got, _ = same(comp.kv_ties, ref.kv_ties, keys, vals)
    assert got[::2] == got[1::2] == sorted(1000 * keys + vals)


def _random_graph(n, degree, rng):
    indptr = [0]
    indices = []
    for u in range(n):
        nbrs = rng.choice(n, size=degree, replace=False)
        indices.extend(int(v) for v in nbrs if v != u)
        indptr.append(len(indices))
    return np.array(indptr, np.int64), np.array(indices, np.int64)


def test_dijkstra(build, opt):
    comp, ref = build("containers", opt)
    rng = np.random.default_rng(5)
    indptr, indices = _random_graph(60, 4, rng)
    w = rng.uniform(0.1, 2.0, size=len(indices))
    for src in (0, 17, 59):
        got, _ = same(comp.dijkstra, ref.dijkstra, indptr, indices, w, src, rtol=1e-12)
        # independent check: a plain heapq Dijkstra
        dist = {src: 0.0}
        h = [(0.0, src)]
        while h:
            d, u = heapq.heappop(h)
            if d > dist.get(u, np.inf):
                continue
            for e in range(indptr[u], indptr[u + 1]):
                v, nd = indices[e], d + w[e]
                if nd < dist.get(v, np.inf):
                    dist[v] = nd
                    heapq.heappush(h, (nd, v))
        for v in range(60):
            assert got[v] == pytest.approx(dist.get(v, 1e300), rel=1e-12)


def test_best_first_search(build, opt):
    comp, ref = build("containers", opt)
    rng = np.random.default_rng(6)
    n, d = 300, 8
    X = rng.normal(size=(n, d))
    indptr, indices = _random_graph(n, 12, rng)
    for trial in range(5):
        q = rng.normal(size=d)
        for ef, k in ((10, 5), (40, 10), (1, 1)):
            got, _ = same(comp.best_first_search, ref.best_first_search, indptr, indices, X, q, trial, ef, k)
            assert len(got) == min(k, ef) and len(set(got)) == len(got)
            dist = ((X[got] - q) ** 2).sum(1)
            assert list(dist) == sorted(dist)  # nearest first
    # with ef = n the search reaches the true nearest neighbours of a connected graph
    q = rng.normal(size=d)
    got = comp.best_first_search(indptr, indices, X, q, 0, n, 5)
    assert got == list(np.argsort(((X - q) ** 2).sum(1))[:5])
