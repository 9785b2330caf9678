"""The .prv header line and the communicator lines after it.

    #Paraver (dd/mm/yy at hh:mm):END[_ns|_us|_ms]:NODES[(cpus,...)]:NAPPL:APPL[,APPL...][,NCOMMS]
    APPL := NTASKS(NTHREADS:NODE,...)
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from popview.readers.errors import InputError

_UNITS = {"ns": 1.0, "us": 1000.0, "ms": 1_000_000.0, "s": 1e9}
MAX_NS = (1 << 63) - 1             # times are int64 nanoseconds
MAX_LOCATIONS = 1 << 24            # threads of all tasks (each becomes a location)
MAX_NODES = 1 << 24


@dataclass
class Task:
    threads: int
    node: int  # 0-based


@dataclass
class Header:
    date: str
    end_time: int           # in source ticks
    unit_ns: float          # ns per tick
    cpus_per_node: list[int]
    applications: list[list[Task]]
    n_communicators: int
    communicators: list[dict] = field(default_factory=list)

    @property
    def n_locations(self) -> int:
        return sum(t.threads for app in self.applications for t in app)


def _split_top(text: str, seps: str) -> list[str]:
    """Split on any of `seps` outside parentheses."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if depth == 0 and ch in seps:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def _int(text: str, what: str, where: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise InputError(f"{where}: {what} is not an integer: {text!r}") from None


def parse_header(line: str, where: str) -> Header:
    """Parse the first line of a .prv; `where` names the file for messages."""
    if not line.startswith("#Paraver"):
        raise InputError(f"{where}: line 1: not a Paraver trace (header must start with '#Paraver')")
    m = re.match(r"#Paraver \((.*?)\):(.*)$", line.strip())
    if not m:
        raise InputError(f"{where}: line 1: malformed header (no '(date):')")
    date, rest = m.group(1), m.group(2)
    parts = _split_top(rest, ":")
    if len(parts) < 4:
        raise InputError(f"{where}: line 1: header has {len(parts)} fields, expected end time, nodes, applications")
    end_text = parts[0]
    unit = "us"
    if "_" in end_text:
        end_text, unit = end_text.split("_", 1)
    if unit not in _UNITS:
        raise InputError(f"{where}: line 1: unknown time unit {unit!r} after the end time "
                         f"(expected one of {', '.join('_' + u for u in _UNITS)} or none for microseconds)")
    unit_ns = _UNITS[unit]
    end_time = _int(end_text, "end time", f"{where}: line 1")
    if end_time < 0 or end_time * unit_ns > MAX_NS:
        raise InputError(f"{where}: line 1: end time {end_time} {unit} is out of range (0 to {MAX_NS:,} ns)")
    cpus = _parse_nodes(parts[1], where)
    n_appl = _int(parts[2], "application count", f"{where}: line 1")
    items = [s for s in _split_top(":".join(parts[3:]), ",:") if s.strip()]
    apps = [_parse_appl(s, where) for s in items if "(" in s]
    tail = [s for s in items if "(" not in s]
    n_comms = _int(tail[-1], "communicator count", f"{where}: line 1") if tail else 0
    if len(apps) != n_appl:
        raise InputError(f"{where}: line 1: header announces {n_appl} applications but describes {len(apps)}")
    n_threads = sum(t.threads for app in apps for t in app)
    if n_threads > MAX_LOCATIONS:
        raise InputError(f"{where}: line 1: header announces {n_threads:,} threads (popview reads at most "
                         f"{MAX_LOCATIONS:,})")
    n_nodes = max(len(cpus), 1)
    for app in apps:
        for task in app:
            if task.node >= n_nodes and cpus:
                raise InputError(f"{where}: line 1: a task is placed on node {task.node + 1} of {n_nodes}")
    return Header(date, end_time, unit_ns, cpus, apps, n_comms)


def _parse_nodes(text: str, where: str) -> list[int]:
    text = text.strip()
    if "(" in text:
        n, inner = text.split("(", 1)
        cpus = [_int(c, "CPU count", f"{where}: line 1") for c in inner.rstrip(")").split(",") if c.strip()]
        if _int(n, "node count", f"{where}: line 1") != len(cpus):
            raise InputError(f"{where}: line 1: node count {n} does not match its CPU list")
        return cpus
    n = _int(text, "node count", f"{where}: line 1")
    if not 0 <= n <= MAX_NODES:
        raise InputError(f"{where}: line 1: node count {n} is out of range (0 to {MAX_NODES:,})")
    return [1] * n  # old format: node count without CPU list


def _parse_appl(text: str, where: str) -> list[Task]:
    n, inner = text.strip().split("(", 1)
    tasks = []
    for item in inner.rstrip(")").split(","):
        threads, _, node = item.partition(":")
        count = _int(threads, "thread count", f"{where}: line 1")
        if not 0 <= count <= MAX_LOCATIONS:
            raise InputError(f"{where}: line 1: thread count {count} is out of range (0 to {MAX_LOCATIONS:,})")
        tasks.append(Task(count, max(_int(node or "1", "node", f"{where}: line 1") - 1, 0)))
    if _int(n, "task count", f"{where}: line 1") != len(tasks):
        raise InputError(f"{where}: line 1: task count {n} does not match its list of {len(tasks)}")
    return tasks


def parse_communicator(line: str) -> dict | None:
    """`c:appl:id:n:task...` -> {appl, id, tasks (0-based)}; None if malformed."""
    fields = line.strip().split(":")
    try:
        appl, cid, n = int(fields[1]), int(fields[2]), int(fields[3])
        tasks = [int(x) - 1 for x in fields[4:4 + n]]
    except (ValueError, IndexError):
        return None
    return {"appl": appl - 1, "id": cid, "tasks": tasks}
