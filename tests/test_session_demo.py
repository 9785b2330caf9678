"""The demo: a synthetic hybrid scaling series and a session with a focus and a bookmark."""
from __future__ import annotations

from popview.demo import LOOP, SESSION_NAME, SHAPES, ensure_demo
from popview.session import load, resolve


def test_demo_is_written_once_with_focus_bookmark_and_annotations(tmp_path):
    path = ensure_demo(tmp_path / "demo")
    assert path == tmp_path / "demo" / SESSION_NAME
    s = load(path)
    assert [r.label for r in s.experiments] == [f"{p}x{t}" for p, t in SHAPES]
    assert all(resolve(r).status == "ok" for r in s.experiments)        # fingerprints match the files
    assert s.view["app"]["focus"] == {"kind": "callpath", "callpath": LOOP}
    assert s.view["app"]["current"] == s.experiments[-1].id
    (bm,) = s.bookmarks
    assert bm.view["app"]["focus"]["kind"] == "window" and bm.note
    assert {a.kind for a in s.annotations} == {"time_range", "experiment"}
    stamp = path.stat().st_mtime_ns
    assert ensure_demo(tmp_path / "demo") == path and path.stat().st_mtime_ns == stamp


def test_incomplete_demo_is_rewritten(tmp_path):
    path = ensure_demo(tmp_path / "demo")
    (tmp_path / "demo" / "series" / "synthetic_2x2.prv").unlink()
    assert ensure_demo(tmp_path / "demo") == path
    assert all(resolve(r).status == "ok" for r in load(path).experiments)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".demo-")]
