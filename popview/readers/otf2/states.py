"""Thread states from a location's region stack (numba kernel): the state
of each instant is the class of the innermost open region."""
from __future__ import annotations

import numba
import numpy as np

from popview.model.states import NOT_CREATED

OP_ENTER, OP_LEAVE, OP_OFF, OP_ON = 0, 1, 2, 3
TRACING_DISABLED = 14


@numba.njit(cache=True)
def _states(time, op, region, region_state, idle_state, t_end):
    n = len(time)
    begin = np.empty(n + 2, np.int64)
    end = np.empty(n + 2, np.int64)
    state = np.empty(n + 2, np.int32)
    stack = np.empty(64, np.int32)
    depth = 0
    off = False
    m = 0
    t_prev = 0
    cur = NOT_CREATED
    for i in range(n + 1):
        t = time[i] if i < n else t_end
        if t < t_prev:
            t = t_prev
        if t > t_prev:
            if m > 0 and state[m - 1] == cur and end[m - 1] == t_prev:
                end[m - 1] = t
            else:
                begin[m] = t_prev
                end[m] = t
                state[m] = cur
                m += 1
            t_prev = t
        if i == n:
            break
        o = op[i]
        if o == OP_ENTER:
            if depth == len(stack):
                stack = np.concatenate((stack, np.empty(depth, np.int32)))
            stack[depth] = region[i]
            depth += 1
        elif o == OP_LEAVE:
            if depth > 0:
                depth -= 1
        elif o == OP_OFF:
            off = True
        else:
            off = False
        if off:
            cur = TRACING_DISABLED
        elif depth == 0:
            cur = idle_state
        else:
            s = region_state[stack[depth - 1]]
            cur = idle_state if s < 0 else s
    return begin[:m], end[:m], state[:m]


def location_states(time: np.ndarray, op: np.ndarray, region: np.ndarray, region_state: np.ndarray,
                    idle_state: int, t_end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(begin, end, state) intervals covering [0, t_end] for one location's time-ordered stream."""
    if len(time) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32)
    return _states(np.ascontiguousarray(time, np.int64), np.ascontiguousarray(op, np.int8),
                   np.ascontiguousarray(region, np.int32), np.ascontiguousarray(region_state, np.int32),
                   np.int32(idle_state), np.int64(max(t_end, int(time[-1]))))
