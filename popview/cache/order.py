"""Order check of appended records (numba; imported only when converting)."""
import numba


@numba.njit(cache=True, nogil=True)
def check_order(locs, times, prev):
    for i in range(len(locs)):
        loc = locs[i]
        if times[i] < prev[loc]:
            return False
        prev[loc] = times[i]
    return True
