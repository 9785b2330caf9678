"""A cache's stored summary: what `popview info` shows, kept in the cache's HDF5
user block after its seal (integrity.py), so that answering `info` on a
converted trace reads a few kilobytes at the file's start: no HDF5, numpy or
numba (about 0.3-0.4 s of imports otherwise, and a hash of the whole cache:
0.1 s for a 1 GB trace's).

The block (ASCII, zeros after it up to the HDF5 superblock):

    popview cache xxh3-128 <digest of the file past its user block>\\n
    popview summary xxh3-128 <xxh3-128 of digest + JSON> <JSON's length>\\n
    <JSON: {"schema_version", "fingerprint", "bytes", "info"}>

The summary's own checksum covers the file digest before it, so that it
belongs to this file only: a cache changed and sealed again (integrity.reseal)
loses it, and a damaged summary is not read. "bytes" is the file's size
(a truncated cache is not answered from). What the body's digest vouches for
is checked whenever the body is read (Reader); the summary is written from the
finished cache before it is put in place, and depends only on the source that
its fingerprint names.

This module imports the standard library and xxhash only.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import xxhash

MARK = b"popview summary xxh3-128 "
# The fields of_reader() always writes: a summary without one of them (written by another
# release of the same schema) is not answered from.
FIELDS = ("format", "tool", "date", "duration_ns", "source_unit_ns", "applications", "processes",
          "threads_per_process", "locations", "nodes", "records", "regions", "callpaths", "paradigms",
          "counters", "topologies", "flags", "warnings")
SEAL_LINE = 56          # len(integrity._SEAL) + 32 hex digits + newline
_READ = 1 << 16         # read at most this much of the file's start


def of_reader(reader) -> dict:
    """The fields of Experiment.info() that come from the cache (all but its paths),
    as plain Python values (JSON-able)."""
    d = reader.definitions
    processes, threads = shape(d)
    info = {
        "format": d.source_format, "tool": d.tool,
        "date": d.date, "duration_ns": d.t_end, "source_unit_ns": d.source_unit_ns,
        "applications": len(d.applications) or 1, "processes": processes, "threads_per_process": threads,
        "locations": dict(Counter(loc.kind for loc in d.locations)), "nodes": len(d.nodes),
        "records": {tbl: reader.count(tbl) for tbl in ("states", "events", "messages", "calls")},
        "regions": len(d.regions), "callpaths": int(len(d.callpath_parent)),
        "paradigms": d.paradigms, "counters": d.counters, "topologies": [tp.get("name", "") for tp in d.topologies],
        "flags": d.flags, "warnings": d.warnings,
    }
    if ids := reader.stored_metric_ids():
        info["metrics"] = ids
    return info


def shape(d) -> tuple[int, int]:
    """(processes, max threads per process) of the main application of Definitions `d`."""
    tpp = d.threads_per_process()
    main = [i for i, p in enumerate(d.processes) if p.appl == 0]
    return len(main), int(tpp[main].max()) if main else 0


def encode(digest: str, summary: dict) -> bytes:
    """The summary lines that follow the seal line of `digest` (a 32-digit hex string)."""
    text = json.dumps(summary, separators=(",", ":"), default=_plain).encode("ascii")
    check = xxhash.xxh3_128(digest.encode("ascii") + text).hexdigest()
    return MARK + check.encode("ascii") + b" " + str(len(text)).encode("ascii") + b"\n" + text


def _plain(value):
    """numpy scalars (and anything with .item()) as Python numbers."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON-able")


def read(path: Path) -> dict | None:
    """The summary stored in the cache at `path` (its "schema_version", "fingerprint" and
    "info"), or None when there is none to trust: no such file, no summary (caches of
    earlier releases, or one that did not fit), a checksum or size that does not match."""
    try:
        with open(path, "rb") as f:
            head = f.read(_READ)
            size = os.fstat(f.fileno()).st_size
    except OSError:
        return None
    if not head.startswith(b"popview cache xxh3-128 ") or head[SEAL_LINE - 1:SEAL_LINE] != b"\n":
        return None
    digest = head[SEAL_LINE - 33:SEAL_LINE - 1]
    rest = head[SEAL_LINE:]
    if not rest.startswith(MARK):
        return None
    line, _, body = rest[len(MARK):].partition(b"\n")
    try:
        check, length = line.split(b" ")
        text = body[:int(length)]
        if len(text) != int(length) or xxhash.xxh3_128(digest + text).hexdigest().encode() != check:
            return None
        summary = json.loads(text)
    except ValueError:
        return None
    if not isinstance(summary, dict) or summary.get("bytes") != size or not isinstance(summary.get("info"), dict) \
            or not all(field in summary["info"] for field in FIELDS):
        return None
    return summary
