"""Older session versions are upgraded; newer ones refused."""
from __future__ import annotations

import json

import pytest

from popview.session import SCHEMA_VERSION, SessionError, load, save

V1 = {
    "format": "popview-session", "version": 1,
    "experiments": ["/data/run_2x4.prv", "/data/run_4x4.prv"],
    "focus": {"kind": "callpath", "callpath": "main/loop"},
    "selection": {"experiment": 1, "metric": "mpi", "callpath": 4, "location": 2, "value_mode": "absolute"},
    "panes": {"timeline": {"t0": 0, "t1": 1000}},
    "layout": {"state": "AQID"},
    "bookmarks": [{"name": "late rank", "note": "rank 2", "selection": {"metric": "comp", "callpath": 1},
                   "focus": {"kind": "whole"}, "panes": {}}],
    "annotations": [{"target": "callpath", "experiment": 0, "callpath": 4, "text": "hot"},
                    {"target": "time_range", "experiment": 1, "t0": 10, "t1": 20, "text": "phase"}],
}


def test_version_1_is_migrated(tmp_path):
    path = tmp_path / "old.popview"
    path.write_text(json.dumps(V1))
    s = load(path)
    assert [(r.id, r.path, r.fingerprint) for r in s.experiments] == [
        ("e1", "/data/run_2x4.prv", None), ("e2", "/data/run_4x4.prv", None)]
    assert s.view["app"] == {"current": "e2", "focus": {"kind": "callpath", "callpath": "main/loop"}, "metric": "mpi",
                             "callpath": 4, "location": 2, "value_mode": "absolute"}
    assert s.view["panes"] == {"timeline": {"t0": 0, "t1": 1000}}
    assert s.layout == {"state": "AQID"}
    bm = s.bookmarks[0]
    assert (bm.id, bm.name, bm.note) == ("b1", "late rank", "rank 2")
    assert bm.view["app"] == {"metric": "comp", "callpath": 1, "focus": {"kind": "whole"}}
    assert [(a.id, a.kind, a.experiment, a.text) for a in s.annotations] == [
        ("a1", "callpath", "e1", "hot"), ("a2", "time_range", "e2", "phase")]


def test_migrated_session_saves_as_current_version(tmp_path):
    path = tmp_path / "old.popview"
    path.write_text(json.dumps(V1))
    s = load(path)
    save(s, path)
    assert json.loads(path.read_text())["version"] == SCHEMA_VERSION
    assert load(path) == s


def test_bad_version_1_content_is_reported(tmp_path):
    path = tmp_path / "old.popview"
    path.write_text(json.dumps(dict(V1, annotations=[{"target": "callpath", "text": "no call path"}])))
    with pytest.raises(SessionError, match=r"annotations\[0\]: a call-path annotation needs 'callpath'"):
        load(path)


def test_newer_version_is_refused(tmp_path):
    path = tmp_path / "new.popview"
    path.write_text(json.dumps({"format": "popview-session", "version": SCHEMA_VERSION + 1}))
    with pytest.raises(SessionError, match=f"newer popview .session version {SCHEMA_VERSION + 1}"):
        load(path)
