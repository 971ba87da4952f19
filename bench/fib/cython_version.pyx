# cython: boundscheck=False, wraparound=False, language_level=3

cdef long fib_c(long n) nogil:
    if n < 2:
        return n
    return fib_c(n - 1) + fib_c(n - 2)


def fib(long n):
    return fib_c(n)
