"""The .popview file format: a JSON object with a format tag and a version.

Reading checks every field's type and names the offending field; nothing
in the file is ever executed. Experiment paths are written both relative
to the session file (so a folder of traces and its session can move
together) and absolute (so the session file alone can move).
"""
from __future__ import annotations

import os
from pathlib import Path

from popview._version import __version__
from popview.readers.errors import InputError
from popview.session.model import Annotation, Bookmark, ExperimentRef, Session

FORMAT = "popview-session"
SCHEMA_VERSION = 2


class SessionError(InputError):
    """A session file that cannot be used; the message says which and why."""


_TYPE_NAMES = {str: "a string", int: "an integer", dict: "an object", list: "a list", bool: "true/false"}


def _field(d: dict, key: str, kind, where: str, optional: bool = False):
    if key not in d or (optional and d[key] is None):
        if optional:
            return None
        raise SessionError(f"{where}: missing '{key}'")
    value = d[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise SessionError(f"{where}.{key}: expected {_TYPE_NAMES[kind]}, got {type(value).__name__} {value!r:.40}")
    return value


def _object(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise SessionError(f"{where}: expected an object, got {type(value).__name__}")
    return value


# ---- writing ---------------------------------------------------------------
def to_dict(session: Session, base_dir: Path | None = None) -> dict:
    """The JSON-ready form; paths relative to `base_dir` too when given."""
    return {
        "format": FORMAT,
        "version": SCHEMA_VERSION,
        "saved_by": f"popview {__version__}",
        "origin": session.origin,
        "experiments": [_ref_to_dict(r, base_dir) for r in session.experiments],
        "view": session.view,
        "layout": session.layout,
        "bookmarks": [{"id": b.id, "name": b.name, "note": b.note, "created": b.created, "view": b.view}
                      for b in session.bookmarks],
        "annotations": [{k: v for k, v in vars(a).items() if v is not None} for a in session.annotations],
    }


def _ref_to_dict(ref: ExperimentRef, base_dir: Path | None) -> dict:
    absolute = os.path.abspath(ref.path)
    out = {"id": ref.id, "path": absolute, "absolute": absolute, "fingerprint": ref.fingerprint, "label": ref.label}
    if base_dir is not None:
        out["path"] = os.path.relpath(absolute, os.path.abspath(base_dir))
    return out


# ---- reading ---------------------------------------------------------------
def from_dict(data: dict, where: str, base_dir: Path | None = None) -> Session:
    """A Session from a current-version dict; SessionError naming the field otherwise."""
    experiments = [_ref_from_dict(_object(e, f"{where}: experiments[{i}]"), f"{where}: experiments[{i}]", base_dir)
                   for i, e in enumerate(_field(data, "experiments", list, where))]
    ids = [r.id for r in experiments]
    if len(set(ids)) != len(ids):
        raise SessionError(f"{where}: experiments: duplicate ids {ids}")
    bookmarks = [_bookmark(_object(b, f"{where}: bookmarks[{i}]"), f"{where}: bookmarks[{i}]")
                 for i, b in enumerate(_field(data, "bookmarks", list, where))]
    annotations = [_annotation(_object(a, f"{where}: annotations[{i}]"), f"{where}: annotations[{i}]", set(ids))
                   for i, a in enumerate(_field(data, "annotations", list, where))]
    return Session(
        experiments=experiments,
        view=_view(_field(data, "view", dict, where), f"{where}: view"),
        layout=_layout(_field(data, "layout", dict, where), f"{where}: layout"),
        bookmarks=bookmarks,
        annotations=annotations,
        origin=_field(data, "origin", str, where, optional=True),
    )


def _ref_from_dict(d: dict, where: str, base_dir: Path | None) -> ExperimentRef:
    path = _field(d, "path", str, where)
    absolute = _field(d, "absolute", str, where, optional=True) or path
    chosen = absolute
    if base_dir is not None and not os.path.isabs(path):
        relative = os.path.normpath(os.path.join(os.path.abspath(base_dir), path))
        if os.path.exists(relative) or not os.path.exists(absolute):
            chosen = relative
    return ExperimentRef(
        id=_field(d, "id", str, where), path=chosen,
        fingerprint=_field(d, "fingerprint", str, where, optional=True),
        label=_field(d, "label", str, where, optional=True) or "",
    )


def _view(d: dict, where: str) -> dict:
    app = _field(d, "app", dict, where, optional=True) or {}
    panes = _field(d, "panes", dict, where, optional=True) or {}
    for key, kind in (("current", str), ("metric", str), ("value_mode", str), ("reference", str),
                      ("callpath", int), ("location", int), ("focus", dict), ("time_window", list),
                      ("metric_exclusive", bool), ("callpath_exclusive", bool), ("series", dict)):
        _field(app, key, kind, f"{where}.app", optional=True)
    window = app.get("time_window")
    if window is not None and (len(window) != 2 or not all(isinstance(t, int) and not isinstance(t, bool) for t in window)):
        raise SessionError(f"{where}.app.time_window: expected [t0, t1] in integer ns, got {window!r:.60}")
    if "focus" in app and app["focus"] is not None:
        _field(app["focus"], "kind", str, f"{where}.app.focus")
    for name, state in panes.items():
        _object(state, f"{where}.panes.{name}")
    return {"app": app, "panes": panes}


def _layout(d: dict, where: str) -> dict:
    for key in d:
        _field(d, key, str, where)
    return d


def _bookmark(d: dict, where: str) -> Bookmark:
    return Bookmark(
        id=_field(d, "id", str, where), name=_field(d, "name", str, where),
        view=_view(_field(d, "view", dict, where), f"{where}.view"),
        note=_field(d, "note", str, where, optional=True) or "",
        created=_field(d, "created", str, where, optional=True) or "",
    )


def _annotation(d: dict, where: str, experiment_ids: set[str]) -> Annotation:
    ann = Annotation(
        id=_field(d, "id", str, where), kind=_field(d, "kind", str, where), text=_field(d, "text", str, where),
        experiment=_field(d, "experiment", str, where, optional=True),
        callpath=_field(d, "callpath", int, where, optional=True),
        location=_field(d, "location", int, where, optional=True),
        t0=_field(d, "t0", int, where, optional=True), t1=_field(d, "t1", int, where, optional=True),
        color=_field(d, "color", str, where, optional=True),
    )
    problem = ann.problem()
    if problem:
        raise SessionError(f"{where}: {problem}")
    if ann.experiment is not None and ann.experiment not in experiment_ids:
        raise SessionError(f"{where}: experiment {ann.experiment!r} is not among the session's experiments")
    return ann
