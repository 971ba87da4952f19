# cython: boundscheck=False, wraparound=False, language_level=3

def pisum(long reps, long n):
    cdef double s = 0.0
    cdef long j, k
    with nogil:
        for j in range(reps):
            s = 0.0
            for k in range(1, n + 1):
                s += 1.0 / (k * k)
    return s
