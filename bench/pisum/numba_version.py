from numba import njit


@njit(cache=False)
def pisum(reps, n):
    s = 0.0
    for j in range(reps):
        s = 0.0
        for k in range(1, n + 1):
            s += 1.0 / (k * k)
    return s
