"""Cube4 profiles (.cubex, written by Score-P, Scalasca and CubeLib).

A profile has no records: conversion fills the definitions (system tree,
regions, call tree, topologies) and stores the metric x call path x location
values as a popview Profile in the cache group "profile". Everything is read
in memory; nothing from the archive is ever written to disk.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from popview.readers.errors import InputError
from popview.readers.format import Format

# The rest is imported when a profile is read: detecting one imports no numpy. (No submodule
# may be named as a function here: its first import would replace the function, as anchor.xml's
# parser, anchor_xml.py, once named anchor.py would have replaced anchor().)
if TYPE_CHECKING:
    from popview.model.definitions import Definitions
    from popview.model.profile import Profile
    from popview.readers.cube.anchor_xml import Anchor

# Preferred report when given a Score-P / Scalasca experiment directory.
REPORTS = ("scout.cubex", "summary.cubex", "profile.cubex")
_RUNTIMES = ("mpi", "openmp", "pthread", "shmem", "cuda", "hip", "opencl", "openacc", "io")


FORMAT = Format("cube", "Cube profile", ("*.cubex",), "a Cube profile (.cubex or its experiment folder)",
                has_records=False, name_suffixes=(".cubex",), generic_names=("profile", "summary", "scout"),
                profile_suffix=".cubex")


def export_profile(path, profile: Profile, definitions: Definitions | None = None, attrs=None):
    """A popview profile as a Cube4 .cubex (export.py); returns its Export summary."""
    from popview.readers.cube.export import write_cubex
    return write_cubex(path, profile, definitions, attrs=attrs or {})


def source_files(anchor: Path) -> list[Path]:
    return [Path(anchor)]


def detect(path) -> bool:
    path = Path(path)
    if path.is_dir():
        return any((path / name).is_file() for name in REPORTS)
    return path.name.endswith(".cubex")


def anchor(path) -> Path:
    path = Path(path)
    if path.is_dir():
        return next(path / name for name in REPORTS if (path / name).is_file())
    return path


def load(path) -> tuple[Anchor, Profile, list[str]]:
    """Parse a .cubex into its anchor and Profile, with the warnings raised."""
    from popview.readers.cube import hierarchy
    from popview.readers.cube.anchor_xml import parse_anchor
    from popview.readers.cube.archive import gunzip_member, read_members
    from popview.readers.cube.build import build_profile

    path = Path(path)
    members, warnings = read_members(path)
    if "anchor.xml" not in members:
        raise InputError(f"{path}: member anchor.xml is missing (not a Cube4 archive?)")
    xml = bytes(members["anchor.xml"])
    if xml[:2] == b"\x1f\x8b":
        xml = gunzip_member(path, "anchor.xml", xml)
    try:
        parsed = parse_anchor(path, xml)
    except RecursionError:        # the call tree or metric tree is walked recursively
        raise InputError(f"{path}: anchor.xml: metric or call tree nested too deeply") from None
    warnings += parsed.warnings
    profile = build_profile(path, parsed, members, warnings)
    if hierarchy.applies(profile):
        hierarchy.derive(profile, parsed.locations)
    return parsed, profile, warnings


def convert(path, writer, progress) -> Definitions:
    from popview.cache.profile_store import write_profile

    path = Path(path)
    progress(0.0, f"reading {path.name}")
    parsed, profile, warnings = load(path)
    progress(0.8, "definitions")
    defs = definitions(parsed, profile)
    for w in warnings:
        defs.warn(w)
    writer.set_definitions(defs)
    writer.extra_writers.append(lambda out: write_profile(out.create_group("profile"), profile))
    progress(1.0, "profile read")
    return defs


def definitions(parsed: Anchor, profile: Profile) -> Definitions:
    import numpy as np

    from popview.model.definitions import Definitions

    used = np.unique(profile.callpath_region)
    paradigms = {parsed.regions[i].paradigm for i in used}
    return Definitions(
        source_format="cube",
        tool=(parsed.attrs.get("Creator") or parsed.attrs.get("CUBE Library version")
              or f"Cube {parsed.attrs.get('Cube Version') or parsed.version}"),
        nodes=parsed.nodes, processes=parsed.processes, locations=parsed.locations,
        regions=parsed.regions, callpath_parent=profile.callpath_parent, callpath_region=profile.callpath_region,
        topologies=parsed.topologies,
        paradigms=[p for p in _RUNTIMES if p in paradigms],
        counters=[m.id for m in profile.metrics if _is_counter(m.id, m.unit)],
        flags={"profile": True, "derived_time_hierarchy": any(m.kind == "derived" for m in profile.metrics),
               **_algebra_flags(parsed.attrs)},
    )


def _algebra_flags(attrs: dict[str, str]) -> dict:
    """What a profile popview wrote from runs is the result of (popview.combined writes the
    popview:: attributes): {"algebra": {operation, runs, sources, collapse}}, or nothing."""
    op = attrs.get("popview::operation")
    if not op:
        return {}
    import json
    try:
        sources = json.loads(attrs.get("popview::sources") or "[]")
    except ValueError:
        sources = []
    runs = [r for r in (attrs.get("popview::runs") or "").split(" | ") if r]
    return {"algebra": {"operation": op, "runs": runs, "collapse": attrs.get("popview::collapse") or "none",
                        "sources": [str(x) for x in sources if isinstance(x, str)]}}


def _is_counter(metric_id: str, unit: str) -> bool:
    return metric_id.startswith(("PAPI_", "PEVT_")) or unit == "#"
