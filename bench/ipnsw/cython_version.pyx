# cython: boundscheck=False, wraparound=False, language_level=3
"""IP-NSW search in Cython: the same greedy descent and two-heap best-first
search; the heaps are binary min-heaps of (key, id) pairs in typed arrays, and
visited nodes are marked in an array with the query's number."""

import numpy as np


cdef inline double dist(const double[:] a, const double[:, :] data, long v) nogil:
    # the negative inner product: smaller is more similar
    cdef double s = 0.0
    cdef Py_ssize_t k
    for k in range(a.shape[0]):
        s += a[k] * data[v, k]
    return -s


cdef inline bint less(double ka, long va, double kb, long vb) nogil:
    return ka < kb or (ka == kb and va < vb)


cdef inline void heap_push(double[:] keys, long[:] vals, long *size, double key, long val) nogil:
    cdef long i = size[0]
    cdef long parent
    size[0] += 1
    while i > 0:
        parent = (i - 1) >> 1
        if less(key, val, keys[parent], vals[parent]):
            keys[i] = keys[parent]
            vals[i] = vals[parent]
            i = parent
        else:
            break
    keys[i] = key
    vals[i] = val


cdef inline void heap_pop(double[:] keys, long[:] vals, long *size) nogil:
    # removes the smallest pair (keys[0], vals[0])
    cdef long n = size[0] - 1
    cdef double key = keys[n]
    cdef long val = vals[n]
    cdef long i = 0
    cdef long child
    size[0] = n
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and less(keys[child + 1], vals[child + 1], keys[child], vals[child]):
            child += 1
        if less(keys[child], vals[child], key, val):
            keys[i] = keys[child]
            vals[i] = vals[child]
            i = child
        else:
            break
    if n > 0:
        keys[i] = key
        vals[i] = val


cdef long single_search_knn(const long[:, :] indptr, const long[:] indices,
                            const double[:, :] data, const double[:] q, long v_entry, long ef,
                            long[:] out, long[:] visited, long stamp,
                            double[:] cand_keys, long[:] cand_vals,
                            double[:] res_keys, long[:] res_vals) nogil:
    cdef long num_calls = 0
    cdef long v_curr = v_entry
    cdef double d_curr = dist(q, data, v_curr)
    cdef long level, j, v, c, e, k
    cdef double d, d_c, d_e
    cdef bint changed
    cdef long n_cand = 0
    cdef long n_res = 0
    num_calls += 1

    # greedy walk on each upper level, from the top down
    for level in range(indptr.shape[0] - 1, 0, -1):
        changed = True
        while changed:
            changed = False
            for j in range(indptr[level, v_curr], indptr[level, v_curr + 1]):
                v = indices[j]
                d = dist(q, data, v)
                num_calls += 1
                if d < d_curr:
                    d_curr = d
                    v_curr = v
                    changed = True

    # best-first search of level 0
    visited[v_curr] = stamp
    heap_push(cand_keys, cand_vals, &n_cand, d_curr, v_curr)
    heap_push(res_keys, res_vals, &n_res, -d_curr, v_curr)
    while n_cand > 0:
        d_c = cand_keys[0]
        c = cand_vals[0]
        heap_pop(cand_keys, cand_vals, &n_cand)
        if d_c > -res_keys[0]:
            break
        for j in range(indptr[0, c], indptr[0, c + 1]):
            e = indices[j]
            if visited[e] == stamp:
                continue
            visited[e] = stamp
            d_e = dist(q, data, e)
            num_calls += 1
            if n_res < ef or d_e < -res_keys[0]:
                heap_push(cand_keys, cand_vals, &n_cand, d_e, e)
                heap_push(res_keys, res_vals, &n_res, -d_e, e)
                if n_res > ef:
                    heap_pop(res_keys, res_vals, &n_res)

    # the results heap pops worst first: keep the last out.shape[0], best first
    while n_res > out.shape[0]:
        heap_pop(res_keys, res_vals, &n_res)
    k = n_res
    while n_res > 0:
        k -= 1
        out[k] = res_vals[0]
        heap_pop(res_keys, res_vals, &n_res)
    return num_calls


def search_knn(const long[:, :] indptr, const long[:] indices, const double[:, :] data,
               const double[:, :] queries, long v_entry, long ef, long n_results):
    cdef long n_queries = queries.shape[0]
    cdef long n = data.shape[0]
    all_results_arr = np.zeros((n_queries, n_results), dtype=np.int64)
    cdef long[:, :] all_results = all_results_arr
    cdef long[:] visited = np.zeros(n, dtype=np.int64)
    # every node enters the candidate heap at most once; results hold ef + 1
    cdef double[:] cand_keys = np.empty(n + 1)
    cdef long[:] cand_vals = np.empty(n + 1, dtype=np.int64)
    cdef double[:] res_keys = np.empty(ef + 2)
    cdef long[:] res_vals = np.empty(ef + 2, dtype=np.int64)
    cdef long total_calls = 0
    cdef long i
    with nogil:
        for i in range(n_queries):
            total_calls += single_search_knn(indptr, indices, data, queries[i], v_entry, ef,
                                             all_results[i], visited, i + 1,
                                             cand_keys, cand_vals, res_keys, res_vals)
    return all_results_arr, total_calls
