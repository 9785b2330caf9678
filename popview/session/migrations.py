"""Bringing session files of older schema versions up to the current one.

Each step takes the dict of version n and returns the dict of version n+1,
so a file of any older version goes through every step in turn. Files of a
newer version are refused: they may hold things this popview would drop.

Version history:
  1  experiments as plain absolute paths (no fingerprints); a flat
     "selection" plus top-level "focus" and "panes"; bookmarks and
     annotations without ids, annotations naming experiments by index and
     their kind as "target".
  2  experiment references with ids, relative + absolute paths and
     fingerprints; one "view" object {app, panes} shared with bookmarks;
     ids for bookmarks and annotations.
"""
from __future__ import annotations

from popview.session.schema import SCHEMA_VERSION, SessionError


def _v1_view(selection: dict, focus, panes, experiment_ids: list[str]) -> dict:
    app = {k: selection[k] for k in ("metric", "callpath", "location", "value_mode") if k in selection}
    index = selection.get("experiment")
    if isinstance(index, int) and 0 <= index < len(experiment_ids):
        app["current"] = experiment_ids[index]
    if focus is not None:
        app["focus"] = focus
    return {"app": app, "panes": panes or {}}


def _v1_to_v2(d: dict, where: str) -> dict:
    paths = d.get("experiments", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise SessionError(f"{where}: experiments: version 1 expects a list of paths")
    ids = [f"e{i + 1}" for i in range(len(paths))]
    bookmarks, annotations = [], []
    for i, b in enumerate(d.get("bookmarks", [])):
        if not isinstance(b, dict):
            raise SessionError(f"{where}: bookmarks[{i}]: expected an object, got {type(b).__name__}")
        view = _v1_view(b.get("selection") or {}, b.get("focus"), b.get("panes"), ids)
        bookmarks.append({"id": f"b{i + 1}", "name": b.get("name", f"bookmark {i + 1}"),
                          "note": b.get("note", ""), "view": view})
    for i, a in enumerate(d.get("annotations", [])):
        if not isinstance(a, dict):
            raise SessionError(f"{where}: annotations[{i}]: expected an object, got {type(a).__name__}")
        new = {k: v for k, v in a.items() if k not in ("target", "experiment")}
        new.update(id=f"a{i + 1}", kind=a.get("target"))
        index = a.get("experiment")
        if isinstance(index, int) and 0 <= index < len(ids):
            new["experiment"] = ids[index]
        annotations.append(new)
    return {
        "format": d["format"], "version": 2,
        "experiments": [{"id": i, "path": p, "absolute": p} for i, p in zip(ids, paths)],
        "view": _v1_view(d.get("selection") or {}, d.get("focus"), d.get("panes"), ids),
        "layout": d.get("layout") or {},
        "bookmarks": bookmarks, "annotations": annotations,
    }


STEPS = {1: _v1_to_v2}


def upgrade(d: dict, where: str) -> dict:
    """`d` brought to SCHEMA_VERSION, or SessionError for an unknown/newer version."""
    version = d.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SessionError(f"{where}: 'version' must be a positive integer, got {version!r:.40}")
    if version > SCHEMA_VERSION:
        raise SessionError(f"{where}: written by a newer popview (session version {version}; this popview "
                           f"reads up to {SCHEMA_VERSION}). Open it with a newer popview.")
    while version < SCHEMA_VERSION:
        d = STEPS[version](d, where)
        version = d["version"]
    return d
