"""anchor.xml: the metric tree, regions, call tree (cnodes), system tree and
Cartesian topologies of a Cube4 file, parsed with defusedxml so that entity
expansion and external references are refused.

Both system-tree dialects are understood: Cube >= 4.1
(systemtreenode > locationgroup > location) and Cube 4.0
(machine > node > process > thread), which older Score-P versions wrote.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as StdET
from dataclasses import dataclass, field
from pathlib import Path

import defusedxml
import defusedxml.ElementTree as ET
import numpy as np

from popview.model.definitions import Location, Process, Region
from popview.readers.cube.regions import PARADIGM_SPELLINGS, infer_paradigm_role
from popview.readers.errors import InputError


@dataclass
class CubeMetric:
    cube_id: int | None          # None for metrics without an id (derived-only)
    uniq_name: str
    disp_name: str
    dtype: str
    uom: str
    descr: str
    type: str                    # EXCLUSIVE | INCLUSIVE | SIMPLE | PREDERIVED_* | POSTDERIVED
    parent: str | None
    cubepl: str = ""


@dataclass
class Anchor:
    version: str
    attrs: dict[str, str]
    metrics: list[CubeMetric]
    regions: list[Region]
    cnode_ids: np.ndarray        # Cube cnode id of each cnode, in document (pre-)order
    cnode_parent: np.ndarray     # index into cnode_ids, -1 for roots
    cnode_region: np.ndarray     # index into regions
    nodes: list[str]
    processes: list[Process]
    locations: list[Location]
    location_ids: np.ndarray     # Cube location id (data column) of each location
    topologies: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def parse_anchor(path: Path, data: bytes) -> Anchor:
    """Parse anchor.xml bytes; InputError naming `path` for anything malformed."""
    try:
        root = ET.fromstring(data, forbid_dtd=True)
    except defusedxml.DefusedXmlException as exc:
        raise InputError(f"{path}: anchor.xml refused: {type(exc).__name__} "
                         "(DTDs, entity declarations and external references are not allowed)") from None
    except StdET.ParseError as exc:
        raise InputError(f"{path}: anchor.xml is not well-formed XML: {exc}") from None
    except (LookupError, ValueError) as exc:       # an unknown encoding in the XML declaration
        raise InputError(f"{path}: anchor.xml cannot be decoded: {exc}") from None
    if root.tag != "cube":
        raise InputError(f"{path}: anchor.xml: root element is <{root.tag}>, not <cube>")
    attrs = {a.get("key", ""): a.get("value", "") for a in root.findall("attr")}
    metrics_el, program, system = root.find("metrics"), root.find("program"), root.find("system")
    for name, el in (("metrics", metrics_el), ("program", program), ("system", system)):
        if el is None:
            raise InputError(f"{path}: anchor.xml has no <{name}> section")
    warnings: list[str] = []
    regions, region_index = _regions(path, program)
    ids, parent, region = _cnodes(path, program, region_index)
    nodes, processes, locations, loc_ids = _system(path, system)
    return Anchor(
        version=root.get("version", ""), attrs=attrs, metrics=_metrics(path, metrics_el),
        regions=regions, cnode_ids=ids, cnode_parent=parent, cnode_region=region,
        nodes=nodes, processes=processes, locations=locations, location_ids=loc_ids,
        topologies=_topologies(path, system, loc_ids, processes, locations, warnings), warnings=warnings,
    )


INT32 = (-(1 << 31), (1 << 31) - 1)
MAX_DIMENSION = 1 << 24


def _int(path: Path, el, attr: str, what: str, bounds: tuple[int, int] = INT32) -> int:
    """An integer attribute within `bounds` (Cube ids are 32-bit), else InputError naming it."""
    value = el.get(attr)
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InputError(f"{path}: anchor.xml: <{el.tag}> has an invalid {what} {attr}={value!r:.40}") from None
    if not bounds[0] <= number <= bounds[1]:
        raise InputError(f"{path}: anchor.xml: <{el.tag}> {what} {attr}={value!r:.40} is out of range "
                         f"({bounds[0]} to {bounds[1]})")
    return number


def _small(text: str, default: int) -> int:
    """A number of the file (a rank, a line) as int32, `default` when it is not one."""
    text = text.strip()
    if not text.lstrip("-").isdigit() or len(text) > 11:
        return default
    number = int(text)
    return number if INT32[0] <= number <= INT32[1] else default


def _text(el, tag: str) -> str:
    return (el.findtext(tag) or "").strip()


def _metrics(path: Path, metrics_el) -> list[CubeMetric]:
    out: list[CubeMetric] = []

    def walk(el, parent: str | None) -> None:
        for m in el.findall("metric"):
            uniq = _text(m, "uniq_name")
            if not uniq:
                raise InputError(f"{path}: anchor.xml: a <metric> has no uniq_name")
            cube_id = _int(path, m, "id", "metric") if m.get("id") is not None else None
            out.append(CubeMetric(cube_id, uniq, _text(m, "disp_name") or uniq, _text(m, "dtype").upper(),
                                  _text(m, "uom"), _text(m, "descr"), (m.get("type") or "EXCLUSIVE").upper(),
                                  parent, _text(m, "cubepl")))
            walk(m, uniq)

    walk(metrics_el, None)
    return out


def _regions(path: Path, program) -> tuple[list[Region], dict[int, int]]:
    regions, index = [], {}
    for r in program.findall("region"):
        name = _text(r, "name")
        paradigm, role = _text(r, "paradigm").lower(), _text(r, "role").lower()
        if not paradigm:                            # Cube 4.0: no paradigm/role elements
            paradigm, role = infer_paradigm_role(name, r.get("mod", ""), _text(r, "descr"))
        paradigm = PARADIGM_SPELLINGS.get(paradigm, paradigm)
        index[_int(path, r, "id", "region")] = len(regions)
        regions.append(Region(name=name, paradigm=paradigm, role=role or "function", file=r.get("mod", ""),
                              line=max(_small(r.get("begin", "-1"), 0), 0)))
    return regions, index


def _cnodes(path: Path, program, region_index: dict[int, int]):
    ids, parent, region = [], [], []

    def walk(el, p: int) -> None:
        for c in el.findall("cnode"):
            callee = _int(path, c, "calleeId", "region reference")
            if callee not in region_index:
                raise InputError(f"{path}: anchor.xml: cnode {c.get('id')} calls undefined region {callee}")
            me = len(ids)
            ids.append(_int(path, c, "id", "cnode"))
            parent.append(p)
            region.append(region_index[callee])
            walk(c, me)

    walk(program, -1)
    if not ids:
        raise InputError(f"{path}: anchor.xml has no call tree (no <cnode>)")
    if len(set(ids)) != len(ids):
        raise InputError(f"{path}: anchor.xml: duplicate cnode ids")
    return np.array(ids, np.int64), np.array(parent, np.int32), np.array(region, np.int32)


def _location_kind(type_text: str) -> str:
    t = type_text.lower()
    if "accelerator" in t or "gpu" in t:
        return "gpu"
    return "metric" if "metric" in t else "thread"


def _system(path: Path, system):
    nodes: list[str] = []
    processes: list[Process] = []
    locations: list[Location] = []
    loc_ids: list[int] = []

    def add_group(group, node: int, loc_tag: str, type_tag_default: str) -> None:
        rank_text = _text(group, "rank")
        p = len(processes)
        processes.append(Process(name=_text(group, "name") or f"process {p}", node=node,
                                 rank=_small(rank_text, p)))
        # The position in the process, not <rank>: Cube 4.0 and CubeLib's examples number ranks globally.
        for thread, loc in enumerate(group.findall(loc_tag)):
            loc_ids.append(_int(path, loc, "Id", "location"))
            locations.append(Location(name=_text(loc, "name") or f"thread {thread}", process=p, thread=thread,
                                      kind=_location_kind(_text(loc, "type") or type_tag_default)))

    def walk_stn(el) -> None:
        for stn in el.findall("systemtreenode"):
            groups = stn.findall("locationgroup")
            if groups:
                nodes.append(_text(stn, "name") or f"node {len(nodes)}")
                for group in groups:
                    add_group(group, len(nodes) - 1, "location", "thread")
            walk_stn(stn)

    walk_stn(system)
    for machine in system.findall("machine"):                 # Cube 4.0
        for node in machine.findall("node"):
            nodes.append(_text(node, "name") or f"node {len(nodes)}")
            for group in node.findall("process"):
                add_group(group, len(nodes) - 1, "thread", "thread")
    if not locations:
        raise InputError(f"{path}: anchor.xml: the system tree has no locations")
    ids = np.array(loc_ids, np.int64)
    if len(set(loc_ids)) != len(loc_ids) or ids.min() < 0 or ids.max() >= len(ids):
        raise InputError(f"{path}: anchor.xml: location ids are not a permutation of 0..{len(ids) - 1}")
    return nodes, processes, locations, ids


_NUM = re.compile(r"-?\d+")


def _topologies(path: Path, system, loc_ids: np.ndarray, processes, locations, warnings: list[str]) -> list[dict]:
    index_of_id = np.empty(len(loc_ids), np.int64)
    index_of_id[loc_ids] = np.arange(len(loc_ids))
    first_loc = {}
    for i, loc in enumerate(locations):
        first_loc.setdefault(loc.process, i)
    out = []
    for topo in system.iter("cart"):
        dims = topo.findall("dim")
        coords: dict[str, list[int]] = {}
        for c in topo.findall("coord"):
            loc = _coord_location(c, index_of_id, first_loc)
            if loc is None:
                msg = f"{path}: topology {topo.get('name', '')!r}: coordinates without a known location skipped"
                if msg not in warnings:
                    warnings.append(msg)
                continue
            coords[str(loc)] = [_small(v, -1) for v in _NUM.findall(c.text or "")]
        out.append({"name": topo.get("name") or f"topology {len(out)}",
                    "dims": [_int(path, d, "size", "topology dimension", (0, MAX_DIMENSION)) for d in dims],
                    "periodic": [d.get("periodic", "false").lower() == "true" for d in dims],
                    "dim_names": [d.get("name", "") for d in dims], "coords": coords})
    return out


def _coord_location(c, index_of_id: np.ndarray, first_loc: dict[int, int]) -> int | None:
    for attr in ("locId", "thrdId"):
        v = c.get(attr)
        if v is not None and v.isdigit() and int(v) < len(index_of_id):
            return int(index_of_id[int(v)])
    v = c.get("procId")
    if v is not None and v.isdigit():
        return first_loc.get(int(v))
    return None
