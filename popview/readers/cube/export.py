"""A popview Profile written as a Cube4 .cubex that the Cube tools read back.

Any profile: one read from a Cube file, a trace's profile, or an algebra
result (popview.analysis.algebra). The archive is an uncompressed tar of

- anchor.xml (Cube 4.4 dialect): attributes, the metric tree (ids in
  document order, names, units, descriptions), the regions, the call tree
  (cnode ids = popview's pre-order call path ids) and the system tree
  (machine > node > location group (process) > location from the
  definitions, or a flat list: one location group per location);
- N.index / N.data per metric: every metric is written EXCLUSIVE, DOUBLE
  (MINDOUBLE / MAXDOUBLE for the metrics that combine by min / max), rows
  for the call paths that hold values (sparse index, DFS pre-order tree
  positions), one column per location id, little-endian.

Metrics without values (CubePL-derived ones popview does not evaluate) are
left out, their sub-metrics moved to the nearest written ancestor; the
returned notes say so. Text in the XML is escaped, and characters XML 1.0
cannot hold become U+FFFD. The file is written beside the target and put in
place atomically (popview.atomic): the target is the old file or the new
one, never a part.
"""
from __future__ import annotations

import io
import os
import re
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np

from popview import atomic
from popview._version import __version__
from popview.model.definitions import Definitions
from popview.model.profile import MetricValues, Profile

INDEX_MAGIC = b"CUBEX.INDEX"
DATA_MAGIC = b"CUBEX.DATA"
CHUNK_CELLS = 1 << 21            # cells per block of dense rows converted at once (16 MiB of float64)
_DTYPE = {"sum": "DOUBLE", "min": "MINDOUBLE", "max": "MAXDOUBLE"}
_LOCATION_TYPE = {"gpu": "accelerator", "metric": "metric"}
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass
class Export:
    path: Path
    metrics: list[str]                       # ids written, in Cube id order
    n_callpaths: int
    n_locations: int
    system_tree: str                         # "definitions" | "flat"
    notes: list[str] = field(default_factory=list)


def write_cubex(path, profile: Profile, definitions: Definitions | None = None, *,
                attrs: dict[str, str] | None = None) -> Export:
    """Write `profile` to `path` as a Cube4 archive; the system tree comes from
    `definitions` when they describe the profile's locations, else it is flat."""
    path = Path(path)
    notes: list[str] = []
    metrics = _metric_tree(profile, notes)
    if not metrics or profile.n_callpaths == 0:
        raise ValueError("nothing to export: a Cube file needs at least one metric with values and one call path")
    order, system_xml, kind = _system(profile, definitions, notes)
    column = np.empty(profile.n_locations, np.int64)
    column[order] = np.arange(len(order))            # popview location -> Cube location id (data column)
    anchor = _anchor(profile, metrics, system_xml, _topologies(definitions, column) if kind == "definitions"
                     else "", attrs or {})
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
            _add(tar, "anchor.xml", anchor.encode("utf-8"))
            for cube_id, (m, _parent) in enumerate(metrics):
                rows, size, chunks = _metric_data(profile, m.id, m.aggregation, column)
                index = (INDEX_MAGIC + np.array([1], "<i4").tobytes() + np.array([0], "<i2").tobytes() + b"\x01"
                         + np.array([len(rows)], "<i4").tobytes() + rows.astype("<i4").tobytes())
                _add(tar, f"{cube_id}.index", index)
                _add_stream(tar, f"{cube_id}.data", len(DATA_MAGIC) + size, _prefixed(DATA_MAGIC, chunks))
        atomic.put_in_place(Path(tmp), path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Export(path, [m.id for m, _ in metrics], profile.n_callpaths, profile.n_locations, kind, notes)


# ------------------------------------------------------------------ metric tree
def _metric_tree(profile: Profile, notes: list[str]):
    """(MetricDef, Cube parent id or None) in document (pre-)order: the metrics that hold values."""
    by_id = {m.id: m for m in profile.metrics}
    written = [m for m in profile.metrics if m.id in profile.values]
    skipped = [m.id for m in profile.metrics if m.id not in profile.values]
    if skipped:
        notes.append(f"metrics without values left out (not evaluated by popview): {', '.join(skipped)}")
    keep = {m.id for m in written}

    def written_parent(m) -> str | None:
        seen = set()
        p = m.parent
        while p is not None and p not in keep and p not in seen:
            seen.add(p)
            p = by_id[p].parent if p in by_id else None
        return p if p in keep else None

    children: dict[str | None, list] = {}
    for m in written:
        children.setdefault(written_parent(m), []).append(m)
    out: list = []
    stack = [(m, None) for m in reversed(children.get(None, []))]
    while stack:
        m, parent = stack.pop()
        me = len(out)
        out.append((m, parent))
        stack.extend((c, me) for c in reversed(children.get(m.id, [])))
    return out


def _metric_data(profile: Profile, metric_id: str, aggregation: str, column: np.ndarray):
    """(tree positions of the stored rows, byte size, iterator of byte blocks) of one metric."""
    mv: MetricValues = profile.values[metric_id]
    counts = np.diff(mv.row_offsets)
    rows = np.flatnonzero(counts > 0)
    if len(rows) == 0:              # an all-zero metric: one zero row (Cube readers expect an index entry)
        rows = np.zeros(1, np.int64)
    n_loc = profile.n_locations
    per_block = max(1, CHUNK_CELLS // max(n_loc, 1))
    ufunc = {"min": np.minimum, "max": np.maximum}.get(aggregation)

    def blocks():
        for a in range(0, len(rows), per_block):
            block = rows[a:a + per_block]
            lo, hi = int(mv.row_offsets[block[0]]), int(mv.row_offsets[block[-1] + 1])
            where = np.repeat(np.arange(len(block), dtype=np.int64), counts[block]) * n_loc + column[mv.loc[lo:hi]]
            cells = len(block) * n_loc
            if ufunc is None:
                dense = np.bincount(where, weights=mv.value[lo:hi], minlength=cells)
            else:                   # a cell no location visited reads 0, as Cube stores it
                dense = np.full(cells, np.inf if ufunc is np.minimum else -np.inf)
                ufunc.at(dense, where, mv.value[lo:hi])
                touched = np.zeros(cells, bool)
                touched[where] = True
                dense[~touched] = 0.0
            yield dense.astype("<f8").tobytes()

    return rows, len(rows) * n_loc * 8, blocks()


# ------------------------------------------------------------------ system tree
def _system(profile: Profile, defs: Definitions | None, notes: list[str]):
    """(popview locations in system-tree order, <system> XML body, "definitions" | "flat")."""
    n = profile.n_locations
    if defs is None or len(defs.locations) != n or not defs.processes:
        if defs is not None and len(defs.locations) != n:
            notes.append(f"system tree written flat: the profile has {n} locations, the definitions "
                         f"{len(defs.locations)} (locations collapsed)")
        parts = ['<systemtreenode Id="0">\n<name>machine</name>\n<class>machine</class>\n'
                 '<systemtreenode Id="1">\n<name>node</name>\n<class>node</class>\n']
        for i in range(n):
            parts.append(f'<locationgroup Id="{i}">\n<name>location {i}</name>\n<rank>{i}</rank>\n'
                         f'<type>process</type>\n<location Id="{i}">\n<name>location {i}</name>\n<rank>0</rank>\n'
                         f'<type>thread</type>\n</location>\n</locationgroup>\n')
        parts.append("</systemtreenode>\n</systemtreenode>\n")
        return np.arange(n, dtype=np.int64), "".join(parts), "flat"
    n_proc = len(defs.processes)
    proc_of = np.array([loc.process for loc in defs.locations], np.int64)
    orphan = (proc_of < 0) | (proc_of >= n_proc)
    if orphan.any():
        notes.append(f"{int(orphan.sum())} locations of no known process placed in a process of their own")
    proc_of = np.where(orphan, n_proc, proc_of)
    node_names = list(defs.nodes)
    node_of = np.array([p.node for p in defs.processes] + [len(node_names)], np.int64)
    bad_node = (node_of < 0) | (node_of >= len(node_names))
    if bad_node.any():
        node_of[bad_node] = len(node_names)
        node_names = node_names + ["unknown node"]
    order = np.lexsort((np.arange(n), proc_of, node_of[proc_of]))
    parts = ['<systemtreenode Id="0">\n<name>machine</name>\n<class>machine</class>\n']
    stn, group, loc_id = 1, 0, 0
    by_proc: dict[int, list[int]] = {}
    for loc in order.tolist():
        by_proc.setdefault(int(proc_of[loc]), []).append(loc)
    for node, name in enumerate(node_names):
        # CubeLib refuses a location group without locations: processes without any are left out
        procs = [p for p in range(n_proc + 1) if node_of[p] == node and p in by_proc]
        if not procs:
            continue
        parts.append(f'<systemtreenode Id="{stn}">\n<name>{_text(name)}</name>\n<class>node</class>\n')
        stn += 1
        for p in procs:
            proc = defs.processes[p] if p < n_proc else None
            pname = proc.name if proc else "unknown process"
            parts.append(f'<locationgroup Id="{group}">\n<name>{_text(pname)}</name>\n'
                         f'<rank>{proc.rank if proc else group}</rank>\n<type>process</type>\n')
            group += 1
            for loc in by_proc.get(p, []):
                d = defs.locations[loc]
                parts.append(f'<location Id="{loc_id}">\n<name>{_text(d.name)}</name>\n<rank>{max(d.thread, 0)}'
                             f'</rank>\n<type>{_LOCATION_TYPE.get(d.kind, "thread")}</type>\n</location>\n')
                loc_id += 1
            parts.append("</locationgroup>\n")
        parts.append("</systemtreenode>\n")
    parts.append("</systemtreenode>\n")
    return order.astype(np.int64), "".join(parts), "definitions"


def _topologies(defs: Definitions, column: np.ndarray) -> str:
    """The Cartesian topologies; CubeLib refuses a coordinate out of its dimension's range, so
    such coordinates (and topologies without dimensions) are left out."""
    out = []
    for topo in defs.topologies or []:
        dims = [int(x) for x in topo.get("dims", [])]
        if not dims:
            continue
        names = list(topo.get("dim_names", [])) + [""] * len(dims)
        periodic = list(topo.get("periodic", [])) + [False] * len(dims)
        out.append(f'<cart name={_attr(topo.get("name", ""))} ndims="{len(dims)}">\n')
        out += [f'<dim name={_attr(nm or "")} size="{size}" periodic="{"true" if per else "false"}"/>\n'
                for size, nm, per in zip(dims, names, periodic)]
        for loc, coords in topo.get("coords", {}).items():
            inside = len(coords) == len(dims) and all(0 <= int(c) < d for c, d in zip(coords, dims))
            if inside and str(loc).isdigit() and int(loc) < len(column):
                out.append(f'<coord locId="{int(column[int(loc)])}">{" ".join(str(int(c)) for c in coords)}'
                           f'</coord>\n')
        out.append("</cart>\n")
    return f"<topologies>\n{''.join(out)}</topologies>\n" if out else ""


# ------------------------------------------------------------------ anchor.xml
def _anchor(profile: Profile, metrics, system_xml: str, topologies: str, attrs: dict[str, str]) -> str:
    head = {"CubePL Version": "1.1", "Cube Version": "4.4", "Creator": f"popview {__version__}",
            "CUBE_CT_AGGR": "SUM", **attrs}
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n\n<cube version="4.4">\n']
    parts += [f"<attr key={_attr(k)} value={_attr(v)}/>\n" for k, v in head.items()]
    parts.append("<metrics>\n")
    parts.append(_metrics_xml(metrics))
    parts.append("</metrics>\n<program>\n")
    for i, r in enumerate(profile.regions):
        begin = r.line if r.line > 0 else -1
        parts.append(f'<region id="{i}" mod={_attr(r.file or "")} begin="{begin}" end="-1">\n'
                     f"<name>{_text(r.name)}</name>\n<mangled_name>{_text(r.name)}</mangled_name>\n"
                     f"<paradigm>{_text(r.paradigm)}</paradigm>\n<role>{_text(r.role)}</role>\n"
                     "<url></url>\n<descr></descr>\n</region>\n")
    parts.append(_cnodes_xml(profile))
    parts.append("</program>\n<system>\n")
    parts.append(system_xml)
    parts.append(topologies)
    parts.append("</system>\n</cube>\n")
    return "".join(parts)


def _metrics_xml(metrics) -> str:
    out: list[str] = []
    open_stack: list[int] = []
    for cube_id, (m, parent) in enumerate(metrics):
        while open_stack and open_stack[-1] != parent:
            open_stack.pop()
            out.append("</metric>\n")
        out.append(f'<metric id="{cube_id}" type="EXCLUSIVE">\n<disp_name>{_text(m.name or m.id)}</disp_name>\n'
                   f"<uniq_name>{_text(m.id)}</uniq_name>\n<dtype>{_DTYPE.get(m.aggregation, 'DOUBLE')}</dtype>\n"
                   f"<uom>{_text(m.unit)}</uom>\n<url></url>\n<descr>{_text(m.description)}</descr>\n")
        open_stack.append(cube_id)
    out.append("</metric>\n" * len(open_stack))
    return "".join(out)


def _cnodes_xml(profile: Profile) -> str:
    """Nested <cnode> elements, ids = pre-order call path ids; closing tags from the depths."""
    n = profile.n_callpaths
    parent = profile.callpath_parent
    depth = np.zeros(n, np.int64)
    up = parent.astype(np.int64)
    while (up >= 0).any():                    # one step up the tree per pass, all call paths at once
        depth += up >= 0
        up = np.where(up >= 0, parent[np.maximum(up, 0)], -1)
    closes = np.append(depth[:-1] - depth[1:] + 1, depth[-1] + 1) if n else np.zeros(0, np.int64)
    region = profile.callpath_region.tolist()
    return "".join(f'<cnode id="{cp}" calleeId="{region[cp]}">\n' + "</cnode>\n" * int(closes[cp])
                   for cp in range(n))


def _text(s) -> str:
    return escape(_NOT_XML.sub("\ufffd", str(s)))


def _attr(s) -> str:
    """A double-quoted attribute value (CubeLib's scanner knows no single-quoted ones)."""
    return '"' + escape(_NOT_XML.sub("\ufffd", str(s)), {'"': "&quot;"}) + '"'


# ------------------------------------------------------------------ tar
def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    _add_stream(tar, name, len(data), iter([data]))


def _add_stream(tar: tarfile.TarFile, name: str, size: int, chunks) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = size, 0o644, int(time.time())
    tar.addfile(info, _ChunkReader(chunks))


def _prefixed(head: bytes, chunks):
    yield head
    yield from chunks


class _ChunkReader(io.RawIOBase):
    """A file-like view of an iterator of byte blocks (tarfile copies members by read(n));
    each block is handed out in slices, never copied as a whole again."""

    def __init__(self, chunks):
        self._chunks = iter(chunks)
        self._block = memoryview(b"")
        self._pos = 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        out = []
        want = n
        while want != 0:
            if self._pos >= len(self._block):
                nxt = next(self._chunks, None)
                if nxt is None:
                    break
                self._block, self._pos = memoryview(nxt), 0
                continue
            take = len(self._block) - self._pos if want < 0 else min(want, len(self._block) - self._pos)
            out.append(self._block[self._pos:self._pos + take])
            self._pos += take
            if want > 0:
                want -= take
        return b"".join(out)
