"""Session files: round trip of every field, safe writes, bad input."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from popview.session import Session, SessionError, backup_path, load, save
from popview.session import store
from popview.session.schema import SCHEMA_VERSION


def full_session(tmp_path) -> Session:
    s = Session()
    trace = tmp_path / "traces" / "run.prv"
    e1 = s.add_experiment(trace, fingerprint='[["run.prv",10,5,"ab"]]', label="2x1")
    e2 = s.add_experiment(tmp_path / "elsewhere" / "other.otf2", label="4x4")
    view = {"app": {"current": e1.id, "focus": {"kind": "callpath", "callpath": "main/loop"}, "metric": "mpi",
                    "callpath": 3, "location": 1, "value_mode": "percent_root", "reference": e2.id,
                    "time_window": [100, 2_000_000_000_000]},
            "panes": {"timeline": {"colour_mode": "state", "t0": 100, "t1": 900},
                      "advisor": {"variant": "hybrid_multiplicative"},
                      "calltree": {"expanded": [0, 1, 3]}}}
    s.view = view
    s.layout = {"geometry": "AAAA", "state": "AQID"}
    s.add_bookmark("imbalance", {"app": {"metric": "comp", "callpath": 2}, "panes": {}}, note="rank 3 late\nsee loop")
    s.add_bookmark("ünïcode ☃", view)
    s.add_annotation("callpath", "hot loop", experiment=e1.id, callpath=3, color="#ff0000")
    s.add_annotation("location", "slow node", experiment=e1.id, location=1)
    s.add_annotation("time_range", "I/O phase", experiment=e1.id, t0=5, t1=50, location=0)
    s.add_annotation("experiment", "baseline", experiment=e2.id)
    return s


def test_round_trip_keeps_every_field(tmp_path):
    s = full_session(tmp_path)
    path = save(s, tmp_path / "a.popview")
    back = load(path)
    assert back == s
    data = json.loads(path.read_text())
    assert data["format"] == "popview-session" and data["version"] == SCHEMA_VERSION
    assert data["experiments"][0]["path"] == "traces/run.prv"          # relative to the session file
    assert data["experiments"][0]["absolute"] == str(tmp_path / "traces" / "run.prv")


def test_moving_session_with_its_traces_uses_relative_path(tmp_path):
    s = Session()
    (tmp_path / "a" / "traces").mkdir(parents=True)
    (tmp_path / "a" / "traces" / "run.prv").write_text("#Paraver")
    s.add_experiment(tmp_path / "a" / "traces" / "run.prv")
    save(s, tmp_path / "a" / "s.popview")
    (tmp_path / "a").rename(tmp_path / "b")
    assert load(tmp_path / "b" / "s.popview").experiments[0].path == str(tmp_path / "b" / "traces" / "run.prv")


def test_moving_session_alone_falls_back_to_absolute_path(tmp_path):
    (tmp_path / "data").mkdir()
    trace = tmp_path / "data" / "run.prv"
    trace.write_text("#Paraver")
    s = Session()
    s.add_experiment(trace)
    (tmp_path / "x").mkdir()
    save(s, tmp_path / "x" / "s.popview")
    (tmp_path / "y" / "deeper").mkdir(parents=True)
    (tmp_path / "x" / "s.popview").rename(tmp_path / "y" / "deeper" / "s.popview")
    assert load(tmp_path / "y" / "deeper" / "s.popview").experiments[0].path == str(trace)


def test_save_keeps_previous_version_as_backup(tmp_path):
    path = tmp_path / "a.popview"
    s = full_session(tmp_path)
    save(s, path)
    s.add_bookmark("second", {"app": {}, "panes": {}})
    save(s, path)
    assert len(load(backup_path(path)).bookmarks) == 2
    assert len(load(path).bookmarks) == 3


def test_corrupt_file_never_overwrites_the_backup(tmp_path):
    path = tmp_path / "a.popview"
    s = full_session(tmp_path)
    save(s, path)
    save(s, path)
    good_backup = backup_path(path).read_text()
    path.write_text('{"format": "popview-session", "vers')
    save(s, path)
    assert backup_path(path).read_text() == good_backup
    assert load(path) == s


def test_interrupted_write_leaves_old_file_intact(tmp_path):
    """A crash between writing the temporary file and the rename: the old file is untouched."""
    path = tmp_path / "a.popview"
    s = full_session(tmp_path)
    save(s, path)
    before = path.read_bytes()
    script = (
        "import os, sys\n"
        "from popview.session import load, save, store\n"
        "s = load(sys.argv[1])\n"
        "s.add_bookmark('lost', {'app': {}, 'panes': {}})\n"
        "store.os.replace = lambda *a: os._exit(9)   # die right before the rename\n"
        "save(s, sys.argv[1], keep_backup=False)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    assert path.read_bytes() == before
    assert load(path) == s
    leftovers = list(tmp_path.glob(".a.popview.*.tmp"))
    assert leftovers, "the crash should have left the temporary file, proving the write happened"
    save(s, path)                                     # a later save is not confused by the leftover
    assert load(path) == s


def test_failed_rename_removes_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "a.popview"
    save(Session(), path)

    def fail(*_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store.os, "replace", fail)
    with pytest.raises(OSError):
        save(full_session(tmp_path), path, keep_backup=False)
    monkeypatch.undo()
    assert load(path) == Session()
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("content, expected", [
    ('{"format": "popview-session", "version": 2, "experi', "truncated"),
    ("", "truncated"),
    ("{'format': 1}", "not valid JSON at line 1, column 2"),
    ("[1, 2, 3]", "not a popview session file"),
    ('{"format": "something-else", "version": 2}', "not a popview session file"),
    ('{"format": "popview-session", "version": "2"}', "'version' must be a positive integer"),
    ('{"format": "popview-session", "version": 99}', "newer popview"),
    ('{"format": "popview-session", "version": 2, "experiments": {}, "view": {}, "layout": {}, '
     '"bookmarks": [], "annotations": []}', "experiments: expected a list"),
    ('{"format": "popview-session", "version": 2, "experiments": [], "view": {}, "layout": {}, '
     '"bookmarks": [{"id": "b1", "name": 5, "view": {}}], "annotations": []}', "bookmarks[0].name: expected a string"),
    ('{"format": "popview-session", "version": 2, "experiments": [], "view": {"app": {"callpath": "x"}}, '
     '"layout": {}, "bookmarks": [], "annotations": []}', "view.app.callpath: expected an integer"),
    ('{"format": "popview-session", "version": 2, "experiments": [], "view": {"app": {"time_window": [1.5, 2]}}, '
     '"layout": {}, "bookmarks": [], "annotations": []}', "time_window"),
    ('{"format": "popview-session", "version": 2, "experiments": [], "view": {}, "layout": {}, '
     '"bookmarks": [], "annotations": [{"id": "a1", "kind": "time_range", "text": "x", "t0": 5, "t1": 1}]}',
     "annotations[0]: a time-range annotation needs t0 < t1"),
    ('{"format": "popview-session", "version": 2, "experiments": [], "view": {}, "layout": {}, '
     '"bookmarks": [], "annotations": [{"id": "a1", "kind": "callpath", "text": "x", "callpath": 1, '
     '"experiment": "e7"}]}', "'e7' is not among"),
    ('{"format": "popview-session", "version": 2, "x": NaN}', "NaN is not allowed"),
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
])
def test_bad_files_give_clear_messages(tmp_path, content, expected):
    path = tmp_path / "bad.popview"
    path.write_text(content)
    with pytest.raises(SessionError) as info:
        load(path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)


def test_binary_garbage_is_not_a_session(tmp_path):
    path = tmp_path / "bad.popview"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    with pytest.raises(SessionError, match="not UTF-8"):
        load(path)


def test_missing_file_is_a_session_error(tmp_path):
    with pytest.raises(SessionError, match="cannot read"):
        load(tmp_path / "nope.popview")
