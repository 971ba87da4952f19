# cython: boundscheck=False, wraparound=False, language_level=3

cdef void qsort_c(double[::1] a, Py_ssize_t lo, Py_ssize_t hi) nogil:
    cdef Py_ssize_t i = lo, j = hi
    cdef double pivot, t
    while i < hi:
        pivot = a[(lo + hi) // 2]
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                t = a[i]
                a[i] = a[j]
                a[j] = t
                i += 1
                j -= 1
        if lo < j:
            qsort_c(a, lo, j)
        lo = i
        j = hi


def quicksort(a, Py_ssize_t lo, Py_ssize_t hi):
    cdef double[::1] v = a
    with nogil:
        qsort_c(v, lo, hi)
    return a
