"""Rows above the thread: Paraver's task, application and workload levels (the process model)
and its CPU, node and system levels (the resource model), as the kernel builds them.

A window's rows at a level are computed from the rows one level below (IntervalNotThread):
the intervals of a task are cut at every boundary of any of its threads' intervals, and each
piece takes the level's function of its threads' values there, in thread order (Adding,
AddingSign, Average, Maximum, Minimum, Activity, In Activity, Mode, Thread i, Add Tasks;
semanticnotthreadfunctions.cpp, including its quirks: Maximum starts from 0, Minimum restarts
after a 0). Each level's compose function then applies (compose_task after the task function,
and so on up). A CPU's row is the value of the thread that runs on it (IntervalCPU with
Active Thd and its variants; popview evaluates it where each thread's records carry one CPU
and no two threads share one), a node's the function of its CPUs, the system's of its nodes.

A derived window combines its parents at the finer of their levels (a task-level parent
gives each of its threads its value: IntervalDerived::setChildren), then rises to its own
level with its own functions. Vectorised: the cuts are found with numpy, the functions over
each piece's values run in one numba kernel (no per-record Python loop).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from popview.jit import njit

# Paraver's TTraceLevel order: a derived window's rows are at the largest of its parents' levels
LEVEL_ORDER = {"workload": 1, "appl": 2, "task": 3, "thread": 4, "system": 5, "node": 6, "cpu": 7}
PROCESS_LEVELS = ("thread", "task", "appl", "workload")      # each level's rows come from the one before
RESOURCE_LEVELS = ("cpu", "node", "system")
COMPOSE_SLOT = {level: f"compose_{level}" for level in LEVEL_ORDER}

# semanticnotthreadfunctions.cpp, by the kernel's names
(ADDING, ADDING_SIGN, AVERAGE, MAXIMUM, MINIMUM, ACTIVITY, IN_ACTIVITY, MODE, OBJECT_I, ADD_OBJECTS) = range(10)
NOT_THREAD_FUNCTIONS = {"Adding": ADDING, "AddingSign": ADDING_SIGN, "Average": AVERAGE, "Maximum": MAXIMUM,
                        "Minimum": MINIMUM, "Activity": ACTIVITY, "In Activity": IN_ACTIVITY, "Mode": MODE,
                        "Thread i": OBJECT_I, "Add Tasks": ADD_OBJECTS}
# semanticcpufunctions.cpp: a CPU's value from the one thread running on it
CPU_FUNCTIONS = ("Active Thd", "Active Thd Sign", "Active Thd Val", "Active Thd Val Sign")


class LevelError(ValueError):
    """The trace lacks what a level needs (named in the message)."""


@dataclass
class Hierarchy:
    """Where each thread row sits: its task (global, 0-based, in Paraver's order), each task's
    application; for the resource model each thread's CPU (global, 0-based; -1 when its records
    carry several CPUs or none) and the number of CPUs of each node (None: not known)."""
    thread_task: np.ndarray
    task_appl: np.ndarray
    thread_cpu: np.ndarray | None = None
    node_cpus: tuple[int, ...] | None = None

    @classmethod
    def one_thread_per_task(cls, n_threads: int) -> "Hierarchy":
        return cls(np.arange(n_threads, dtype=np.int64), np.zeros(n_threads, np.int64))

    def n_rows(self, level: str) -> int:
        if level == "thread":
            return len(self.thread_task)
        if level == "task":
            return len(self.task_appl)
        if level == "appl":
            return int(self.task_appl.max()) + 1 if len(self.task_appl) else 0
        if level in ("workload", "system"):
            return 1
        node_cpus = self._node_cpus()
        return len(node_cpus) if level == "node" else int(sum(node_cpus))

    def parent_of(self, level: str) -> np.ndarray:
        """Each row of `level`'s the row one level up (task of a thread, appl of a task, ...)."""
        if level == "thread":
            return self.thread_task.astype(np.int64)
        if level == "task":
            return self.task_appl.astype(np.int64)
        if level in ("appl", "node"):
            return np.zeros(self.n_rows(level), np.int64)
        if level == "cpu":
            node_cpus = self._node_cpus()
            return np.repeat(np.arange(len(node_cpus)), node_cpus).astype(np.int64)
        raise LevelError(f"no level above {level}")

    def ancestor(self, rows: np.ndarray, level: str, up_to: str) -> np.ndarray:
        """The rows of `up_to` that `rows` of `level` (a finer level of the same model) belong to."""
        chain = PROCESS_LEVELS if level in PROCESS_LEVELS else RESOURCE_LEVELS
        rows = np.asarray(rows, np.int64)
        for here in chain[chain.index(level):chain.index(up_to)]:
            rows = self.parent_of(here)[rows]
        return rows

    def _node_cpus(self) -> tuple[int, ...]:
        if self.node_cpus is None:
            raise LevelError("the trace's CPUs per node are not known (reconvert the trace)")
        return self.node_cpus

    def cpu_threads(self) -> np.ndarray:
        """Each CPU's thread row (-1: none), where every thread runs on one CPU and no two threads
        share one (Paraver's CPU rows then follow that thread); else LevelError naming why."""
        n_cpus = self.n_rows("cpu")
        if self.thread_cpu is None:
            raise LevelError("the CPU of each thread is not known (reconvert the trace)")
        cpu = np.asarray(self.thread_cpu, np.int64)
        if (cpu < 0).any() or (cpu >= n_cpus).any():
            raise LevelError("threads whose records carry several CPUs (or none) are not evaluated at CPU level")
        if len(np.unique(cpu)) != len(cpu):
            raise LevelError("CPUs shared by several threads are not evaluated at CPU level")
        threads = np.full(n_cpus, -1, np.int64)
        threads[cpu] = np.arange(len(cpu))
        return threads


def not_thread_code(name: str) -> int | None:
    return NOT_THREAD_FUNCTIONS.get(name)


@njit(cache=True, nogil=True)
def _apply(code, cur, m, params):
    """One not-thread function of the m values in cur (in child order), as the kernel's execute."""
    if code == ADDING or code == ADDING_SIGN or code == AVERAGE:
        tmp = 0.0
        for j in range(m):
            tmp += cur[j]
        if code == ADDING_SIGN:
            return 1.0 if tmp > 0 else 0.0
        if code == AVERAGE:
            return tmp / m
        return tmp
    if code == MAXIMUM:
        tmp = 0.0
        for j in range(m):
            if cur[j] > tmp:
                tmp = cur[j]
        return tmp
    if code == MINIMUM:
        tmp = 0.0
        for j in range(m):
            if tmp == 0 or cur[j] < tmp:
                tmp = cur[j]
        return tmp
    if code == ACTIVITY or code == IN_ACTIVITY:
        tmp = 0.0
        for v in params:
            if cur[0] == v:
                tmp = cur[0]
                break
        if tmp == 0:
            return 0.0
        for j in range(1, m):
            if cur[j] != tmp:
                return 0.0
        return tmp if code == ACTIVITY else 1.0
    if code == MODE:                       # ParaverStatisticFunctions::mode: first to reach a higher count
        best, best_count = 0.0, 0
        for j in range(m):
            count = 0
            for i in range(j + 1):
                if cur[i] == cur[j]:
                    count += 1
            if count > best_count:
                best_count, best = count, cur[j]
        return best
    if code == OBJECT_I:
        i = np.int64(params[0]) if len(params) else 0
        if i != 0 and i <= m:
            return cur[i - 1]
        return 0.0
    tmp = 0.0                              # ADD_OBJECTS: the listed children (0-based), in order
    for v in params:
        tmp += cur[np.int64(v)]
    return tmp


@njit(cache=True, nogil=True)
def _reduce_kernel(starts, begin, end, value, kk, nk, t_end, code, params,
                   out_row, out_begin, out_end, out_value):
    """Per parent p, its children's intervals starts[p]:starts[p+1] (sorted by begin): the
    pieces between consecutive boundaries of any child, each with the function of the children's
    values there (0 where a child has no interval)."""
    n = 0
    cur = np.zeros(max(nk.max(), 1) if len(nk) else 1, np.float64)
    cend = np.zeros(len(cur), np.int64)
    for p in range(len(nk)):
        lo, hi = starts[p], starts[p + 1]
        m = nk[p]
        for j in range(m):
            cur[j] = 0.0
            cend[j] = 0
        t = np.int64(0)
        i = lo
        while t < t_end:
            while i < hi and begin[i] <= t:
                if end[i] > t:
                    cur[kk[i]] = value[i]
                    cend[kk[i]] = end[i]
                i += 1
            nxt = t_end
            if i < hi and begin[i] < nxt:
                nxt = begin[i]
            for j in range(m):
                if cend[j] <= t:
                    cur[j] = 0.0
                elif cend[j] < nxt:
                    nxt = cend[j]
            out_row[n] = p
            out_begin[n] = t
            out_end[n] = nxt
            out_value[n] = _apply(code, cur, m, params) if m > 0 else 0.0
            n += 1
            t = nxt
    return n


def reduce_rows(row: np.ndarray, begin: np.ndarray, end: np.ndarray, value: np.ndarray, parent_of: np.ndarray,
                n_parents: int, t_end: int, code: int, params: np.ndarray):
    """The rows one level up: (row, begin, end, value) of each parent's pieces, sorted by row then time."""
    parent_of = np.asarray(parent_of, np.int64)
    nk = np.bincount(parent_of, minlength=n_parents).astype(np.int64)
    # each child's index among its parent's children, in row order (the kernel's child order)
    first_child = np.r_[0, np.cumsum(nk)][:-1]
    order_of_child = np.argsort(parent_of, kind="stable")
    k_of_child = np.empty(len(parent_of), np.int64)
    k_of_child[order_of_child] = np.arange(len(parent_of)) - first_child[parent_of[order_of_child]]
    row = np.asarray(row, np.int64)
    p, k = parent_of[row], k_of_child[row]
    order = np.lexsort((k, begin, p))
    p, k = p[order], k[order]
    b, e, v = np.asarray(begin, np.int64)[order], np.asarray(end, np.int64)[order], \
        np.asarray(value, np.float64)[order]
    starts = np.searchsorted(p, np.arange(n_parents + 1)).astype(np.int64)
    size = 2 * len(b) + n_parents + 1
    out = (np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, np.float64))
    n = _reduce_kernel(starts, b, e, v, k, nk, np.int64(max(t_end, 1)), code, np.asarray(params, np.float64), *out)
    return out[0][:n], out[1][:n], out[2][:n], out[3][:n]


def broadcast_rows(row: np.ndarray, owner: np.ndarray):
    """Each fine row takes the intervals of its owner row (a thread its task's): the indices of
    the owner's intervals per fine row, and the fine row of each, sorted by fine row."""
    row = np.asarray(row, np.int64)
    owner = np.asarray(owner, np.int64)
    n_owner = int(max(owner.max(initial=-1), row.max(initial=-1))) + 1
    first = np.searchsorted(row, np.arange(n_owner + 1))
    count = (first[1:] - first[:-1])[owner]
    fine = np.repeat(np.arange(len(owner)), count)
    offset = np.arange(int(count.sum())) - np.repeat(np.r_[0, np.cumsum(count)][:-1], count)
    return first[owner][fine] + offset, fine


def thread_owner(hierarchy: Hierarchy, level: str) -> np.ndarray:
    """Each thread row's row at `level`: its task, application, workload; its CPU, node, system."""
    threads = np.arange(hierarchy.n_rows("thread"))
    if level in PROCESS_LEVELS:
        return hierarchy.ancestor(threads, "thread", level)
    cpus = hierarchy.cpu_threads()
    cpu_of = np.full(len(threads), -1, np.int64)
    cpu_of[cpus[cpus >= 0]] = np.flatnonzero(cpus >= 0)
    return hierarchy.ancestor(cpu_of, "cpu", level)


def on_thread_rows(row: np.ndarray, level: str, hierarchy: Hierarchy):
    """Rows of `level` drawn on the trace's thread rows (popview's timeline rows): each thread
    shows its task's (node's ...) values. The indices of the intervals per thread row, and the
    thread row of each."""
    return broadcast_rows(row, thread_owner(hierarchy, level))
