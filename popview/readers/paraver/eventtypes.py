"""What Extrae's event types mean: regions (enter value / 0 = exit),
counters, call-site information, MPI parameters."""
from __future__ import annotations

import re

from popview.model.definitions import TASK_ID, TASKWAIT, EventType
from popview.readers.paraver.pcf import Pcf

MPI_TYPES = range(50000001, 50000006)
FLUSHING = 40000003
TRACING_MODE = 40000018
BURST_MODE_VALUE = 2

# type -> (paradigm, role) for types whose non-zero value enters a region and 0 leaves it.
REGION_TYPES: dict[int, tuple[str, str]] = {
    50000001: ("mpi", "point2point"),
    50000002: ("mpi", "collective"),
    50000003: ("mpi", "other"),
    50000004: ("mpi", "rma"),
    50000005: ("mpi", "io"),
    60000001: ("openmp", "parallel"),
    60000002: ("openmp", "worksharing"),
    60000005: ("openmp", "barrier"),
    60000018: ("user", "outlined"),
    60000019: ("user", "function"),
    60000020: ("pthread", "function"),
    60000023: ("openmp", "task"),
    61000000: ("pthread", "runtime"),
    63000001: ("cuda", "runtime"),
    FLUSHING: ("measurement", "flush"),
}

# region type -> the type of its source location (file and line), written in the same record
SOURCE_SITE_TYPES: dict[int, int] = {60000018: 60000118, 60000023: 60000123}

# Extrae's labels of the OpenMP constructs (60000001, 60000002) -> the names Score-P gives them
_CONSTRUCT_NAMES = {"region (open)": "!$omp parallel", "do (open)": "!$omp for", "sections (open)": "!$omp sections",
                    "single (open)": "!$omp single"}
_SITE = re.compile(r"^\s*([^\s\[]+?):(\d+)\b")

# type -> what its events mean to the analysis (model.definitions.EVENT_ROLES); other
# codes get a role from their .pcf label (ROLE_LABELS), so renumbered variants work too.
EVENT_ROLES: dict[int, str] = {60000028: TASK_ID, 60000022: TASKWAIT}
ROLE_LABELS = ((re.compile(r"\btask\s*id\b", re.I), TASK_ID), (re.compile(r"\btask\s*wait\b", re.I), TASKWAIT))

_KNOWN_COUNTERS = {42000050: "PAPI_TOT_INS", 42000059: "PAPI_TOT_CYC"}
# PAPI's own descriptions of the two presets: traces of older PAPI numberings (paraver-kernel's
# 2004 qsort_beo3: "42000060 Total cycles (Total cycles)") carry them under other codes
_PRESET_LABELS = {"total cycles": "PAPI_TOT_CYC", "instructions completed": "PAPI_TOT_INS"}
_PAPI = re.compile(r"\b(PAPI_[A-Z0-9_]+)")


def counter_name(code: int, label: str) -> str:
    if code in _KNOWN_COUNTERS:
        return _KNOWN_COUNTERS[code]
    m = _PAPI.search(label)
    if m:
        return m.group(1)
    alias = re.match(r"^\(([^)]+)\)", label.strip())
    if alias:
        return alias.group(1).strip()
    return label.split("[")[0].split("(")[0].strip() or f"counter {code}"


def is_counter(code: int) -> bool:
    return 42000000 <= code < 43000000 or 44000000 <= code < 45000000


def classify(code: int, label: str, values: dict[int, str]) -> tuple[str, str]:
    """(kind, paradigm) of an event type."""
    if code in REGION_TYPES:
        return "region", REGION_TYPES[code][0]
    if is_counter(code):
        return "counter", ""
    if 70000000 <= code < 90000000:
        return "caller", "mpi"
    if 50100000 <= code < 50200000:
        return "mpi-param", "mpi"
    if 63000000 <= code < 64000000 and values.get(0, "").lower().startswith("end"):
        return "region", "cuda"
    return "info", ""


def event_role(code: int, label: str, kind: str) -> str:
    """The neutral meaning of a point event type, by its code or else its label."""
    if code in EVENT_ROLES:
        return EVENT_ROLES[code]
    if kind != "info":
        return ""
    return next((role for pattern, role in ROLE_LABELS if pattern.search(label)), "")


def event_types(pcf: Pcf | None, seen: set[int]) -> dict[int, EventType]:
    """EventType per code: every .pcf type plus every code found in the body."""
    out: dict[int, EventType] = {}
    declared = pcf.event_types if pcf else {}
    for code in sorted(set(declared) | seen):
        p = declared.get(code)
        label = p.name if p else f"Event type {code}"
        values = dict(p.values) if p else {}
        kind, paradigm = classify(code, label, values)
        name = counter_name(code, label) if kind == "counter" else label
        out[code] = EventType(code=code, name=name, kind=kind, values=values,
                              gradient=p.gradient if p else 0, paradigm=paradigm, description=label,
                              role=event_role(code, label, kind),
                              region_role=REGION_TYPES[code][1] if kind == "region" and code in REGION_TYPES else "")
    _name_presets_by_label(out)
    return out


def _name_presets_by_label(types: dict[int, EventType]) -> None:
    """A counter labelled with PAPI's description of PAPI_TOT_CYC / PAPI_TOT_INS takes that name
    when no type has it and exactly one counter carries the label."""
    names = {et.name for et in types.values()}
    for label, preset in _PRESET_LABELS.items():
        if preset in names:
            continue
        found = [c for c, et in types.items() if et.kind == "counter"
                 and re.sub(r"\s*[(\[].*$", "", et.description).strip().lower() == label]
        if len(found) == 1:
            types[found[0]].name = preset


def readable_region(code: int, label: str, sites: list[str]) -> str:
    """A region's name as an analyst reads it: Extrae's OpenMP construct labels as Score-P
    names them ("REGION (open)" -> "!$omp parallel"), and an outlined function (or task)
    with the source line of its construct from the .pcf's line-and-file labels
    ("main._omp_fn.0" -> "main._omp_fn.0 @heat_hybrid.c:107"), several joined by commas;
    unknown locations ("??:0") are left out."""
    label = label.strip()
    if code in (60000001, 60000002):
        return _CONSTRUCT_NAMES.get(label.lower(), label)
    where = []
    for text in sites:
        m = _SITE.match(text)
        if not m or m.group(1) == "??" or m.group(2) == "0":
            continue
        site = f"{m.group(1).rsplit('/', 1)[-1]}:{m.group(2)}"       # no '/': a call path's separator
        if site not in where:
            where.append(site)
    return f"{label} @{', '.join(where)}" if where else label


_COLLECTIVE = re.compile(r"MPI_(I?(All)?(Reduce|Gather|Gatherv|Scatter|Scatterv|Bcast|Barrier|Alltoall|Alltoallv|"
                         r"Allgather|Allgatherv|Reduce_scatter|Scan|Exscan)\w*)", re.I)


def region_role(etype: int, label: str) -> str:
    """Role of one MPI call / construct, refined from its name."""
    base = REGION_TYPES.get(etype, ("user", "function"))[1]
    if etype in MPI_TYPES:
        if _COLLECTIVE.search(label):
            return "barrier" if "barrier" in label.lower() else "collective"
        low = label.lower()
        if any(w in low for w in ("wait", "test")):
            return "wait"
        if "send" in low or "recv" in low:
            return "point2point"
        if "file" in low:
            return "io"
    return base
