"""Finding moved traces by content, noticing changed ones; autosave recovery files."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

from popview.session import Recovery, Session, load, resolve, save, source_fingerprint
from popview.session.relocate import accept, check
from tests.paraver.prvtext import BODY, write_trace


def session_with_trace(tmp_path):
    trace = write_trace(tmp_path / "runs")
    s = Session()
    ref = s.add_experiment(trace, fingerprint=source_fingerprint(trace))
    return s, ref, trace


def test_trace_in_place_is_ok(tmp_path):
    _, ref, trace = session_with_trace(tmp_path)
    assert resolve(ref).status == "ok"


def test_moved_trace_is_found_by_content_under_search_roots(tmp_path):
    s, ref, trace = session_with_trace(tmp_path)
    (tmp_path / "archive" / "2024").mkdir(parents=True)
    shutil.move(tmp_path / "runs", tmp_path / "archive" / "2024" / "runs")
    res = resolve(ref, roots=[tmp_path])
    assert res.status == "moved"
    assert res.path == tmp_path / "archive" / "2024" / "runs" / "t.prv"
    assert accept(s, res)
    assert ref.path == str(res.path)


def test_copy_with_new_mtime_still_matches(tmp_path):
    _, ref, trace = session_with_trace(tmp_path)
    copy = tmp_path / "copy"
    copy.mkdir()
    for f in trace.parent.iterdir():
        shutil.copy(f, copy / f.name)          # new modification times
        os.utime(copy / f.name, (1, 1))
    assert check(ref, copy / "t.prv").status == "moved"


def test_a_file_with_the_same_name_but_other_content_is_not_taken(tmp_path):
    _, ref, trace = session_with_trace(tmp_path)
    write_trace(tmp_path / "other", body=BODY.replace("600", "650"))
    shutil.rmtree(trace.parent)
    res = resolve(ref, roots=[tmp_path])
    assert res.status == "missing" and "no such file" in res.message


def test_changed_trace_is_reported(tmp_path):
    _, ref, trace = session_with_trace(tmp_path)
    trace.write_text(trace.read_text().replace("600", "650"))
    res = resolve(ref)
    assert res.status == "changed"
    assert "may point at other data" in res.message


def test_user_chosen_unreadable_file_is_missing_with_reason(tmp_path):
    _, ref, _ = session_with_trace(tmp_path)
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    res = check(ref, other)
    assert res.status == "missing" and "not a Paraver trace (.prv, .prv.gz), an OTF2 trace" in res.message


def test_relocation_is_remembered_in_the_saved_session(tmp_path):
    s, ref, trace = session_with_trace(tmp_path)
    new_home = tmp_path / "moved"
    shutil.move(trace.parent, new_home)
    res = check(ref, new_home / "t.prv")
    accept(s, res)
    save(s, tmp_path / "s.popview")
    assert load(tmp_path / "s.popview").experiments[0].path == str(new_home / "t.prv")


def test_recovery_file_of_a_crashed_process_is_offered(tmp_path):
    s = Session()
    s.add_bookmark("before crash", {"app": {"metric": "mpi"}, "panes": {}})
    script = (
        "import os, sys\n"
        "from popview.session import Recovery, load\n"
        "s = load(sys.argv[1])\n"
        "Recovery(sys.argv[2]).write(s, origin=sys.argv[3])\n"
        "os._exit(1)                      # crash: no clean exit, no discard\n"
    )
    save(s, tmp_path / "s.popview")
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "s.popview"), str(tmp_path / "rec"),
                    str(tmp_path / "s.popview")], check=False)
    mine = Recovery(tmp_path / "rec")
    orphans = mine.orphans()
    assert len(orphans) == 1
    recovered = Recovery.load(orphans[0])
    assert recovered.origin == str(tmp_path / "s.popview")
    assert recovered.bookmarks[0].name == "before crash"
    Recovery.remove(orphans[0])
    assert mine.orphans() == []


def test_running_process_file_is_not_an_orphan_and_clean_exit_discards(tmp_path):
    rec = Recovery(tmp_path)
    rec.write(Session(), origin=None)
    assert rec.path.exists() and rec.orphans() == []
    rec.discard()
    assert not rec.path.exists()
