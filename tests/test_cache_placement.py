"""Where caches go, under which names and modes, and the lock on converting one."""
import os
import stat
import threading
from pathlib import Path

import numpy as np
import pytest

import popview
from popview.cache import CacheUnwritable, location
from popview.cache.location import cache_path
from tests.paraver.prvtext import write_trace


@pytest.fixture
def no_cache_dir(monkeypatch, tmp_path):
    """The default placement: no POPVIEW_CACHE_DIR, the user cache directory in tmp."""
    monkeypatch.delenv("POPVIEW_CACHE_DIR", raising=False)
    monkeypatch.delenv(location.BESIDE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    location.prefer_beside(False)
    yield tmp_path / "xdg-cache" / "popview"
    location.prefer_beside(False)


def test_default_is_the_user_cache_directory_even_beside_a_writable_trace(tmp_path, no_cache_dir):
    prv = write_trace(tmp_path)
    assert cache_path(prv).parent == no_cache_dir
    with popview.open(prv) as exp:
        assert exp.cache_path.parent == no_cache_dir
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "xdg-cache") == ["t.pcf", "t.prv", "t.row"]


@pytest.mark.parametrize("how", ["env", "setting", "argument"])
def test_beside_the_trace_when_asked(tmp_path, no_cache_dir, monkeypatch, how):
    prv = write_trace(tmp_path)
    if how == "env":
        monkeypatch.setenv(location.BESIDE_ENV, "1")
    elif how == "setting":
        location.prefer_beside(True)
    with popview.open(prv, beside=True if how == "argument" else None) as exp:
        assert exp.cache_path == tmp_path / "t.prv.popview.h5"


def test_popview_cache_dir_wins_over_beside(tmp_path, no_cache_dir, monkeypatch):
    prv = write_trace(tmp_path)
    monkeypatch.setenv(location.BESIDE_ENV, "1")
    monkeypatch.setenv("POPVIEW_CACHE_DIR", str(tmp_path / "env"))
    with popview.open(prv) as exp:
        assert exp.cache_path.parent == tmp_path / "env"
    assert not (tmp_path / "t.prv.popview.h5").exists()


def test_never_beside_in_a_folder_of_someone_else(tmp_path, no_cache_dir, monkeypatch):
    """As root os.access says yes to every folder: the owner decides."""
    prv = write_trace(tmp_path)
    monkeypatch.setenv(location.BESIDE_ENV, "1")
    monkeypatch.setattr(location.os, "geteuid", lambda: os.stat(tmp_path).st_uid + 1)
    assert cache_path(prv).parent == no_cache_dir


def test_a_read_only_folder_is_not_used_beside(tmp_path, no_cache_dir, monkeypatch):
    prv = write_trace(tmp_path)
    monkeypatch.setenv(location.BESIDE_ENV, "1")
    monkeypatch.setattr(location.os, "access", lambda p, mode: False)
    assert cache_path(prv).parent == no_cache_dir


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_cache_mode_follows_the_umask(tmp_path, cache_dir, umask):
    old = os.umask(umask)
    try:
        with popview.open(write_trace(tmp_path), cache_dir=cache_dir) as exp:
            mode = stat.S_IMODE(exp.cache_path.stat().st_mode)
    finally:
        os.umask(old)
    assert mode == 0o666 & ~umask


@pytest.mark.parametrize("length", [224, 240, 251])
@pytest.mark.parametrize("beside", [False, True])
def test_a_trace_with_a_name_of_up_to_255_bytes_opens(tmp_path, cache_dir, length, beside):
    stem = "r" * (length - len(".prv") - 2) + "é"           # two bytes in UTF-8: a cut may fall inside
    folder = tmp_path / "long"
    folder.mkdir()
    prv = write_trace(folder, name=stem)
    assert len(os.fsencode(prv.name)) == length
    with popview.open(prv, cache_dir=None if beside else cache_dir, beside=beside) as exp:
        assert len(os.fsencode(exp.cache_path.name)) <= location.MAX_NAME_BYTES
        assert exp.reader.count("states") > 0
        first = exp.cache_path
    with popview.open(prv, cache_dir=None if beside else cache_dir, beside=beside) as exp:
        assert not exp.converted and exp.cache_path == first


def test_cache_dir_that_is_a_file_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(CacheUnwritable, match="not a directory"):
        popview.open(write_trace(tmp_path), cache_dir=blocker)
    with pytest.raises(CacheUnwritable):
        popview.open(write_trace(tmp_path), cache_dir=blocker / "below")


@pytest.mark.parametrize("error", ["EROFS", "EACCES", "ENOSPC"])
def test_an_unwritable_cache_dir_is_a_clear_error_leaving_nothing(tmp_path, cache_dir, monkeypatch, error):
    import errno

    from popview.cache import scratch

    def refuse(self, directory):
        raise OSError(getattr(errno, error), os.strerror(getattr(errno, error)), str(directory))

    monkeypatch.setattr(scratch.Scratch, "__init__", refuse)
    with pytest.raises(CacheUnwritable, match=f"{cache_dir}: cannot write the cache: {os.strerror(getattr(errno, error))}"):
        popview.open(write_trace(tmp_path), cache_dir=cache_dir)
    assert os.listdir(cache_dir) == []


def test_command_line_reports_an_unwritable_cache_dir_in_one_line(tmp_path, capsys):
    from popview.cli import main

    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["info", str(write_trace(tmp_path)), "--cache-dir", str(blocker)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a directory" in err[0]


def test_concurrent_conversions_of_one_trace_do_the_work_once(tmp_path, cache_dir, monkeypatch):
    from popview.readers import paraver

    prv = write_trace(tmp_path)
    calls = []
    real = paraver.convert
    inside = threading.Event()

    def slow(*a, **k):
        calls.append(1)
        inside.set()
        threading.Event().wait(0.5)        # the other conversion arrives meanwhile
        return real(*a, **k)

    monkeypatch.setattr(paraver, "convert", slow)
    results = {}

    def run(key):
        results[key] = popview.experiment.convert(prv, cache_dir)

    first = threading.Thread(target=run, args=("a",))
    first.start()
    inside.wait(10)
    run("b")
    first.join()
    assert len(calls) == 1
    assert sorted(converted for _, converted in results.values()) == [False, True]
    assert [p.name for p in cache_dir.iterdir()] == [results["a"][0].name]


def test_stale_scratch_of_a_dead_process_is_removed_by_the_next_conversion(tmp_path, cache_dir):
    import subprocess
    import sys

    from popview.cache import scratch

    # a process that makes a scratch folder and dies without cleaning up (as kill -9 would)
    code = ("import os, sys; from popview.cache.scratch import Scratch; s = Scratch(sys.argv[1]); "
            "open(s.path / 'spill', 'wb').write(b'x' * 1000); os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(cache_dir)], check=True,
                   env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1])))
    assert [p.name.startswith(scratch.PREFIX) for p in cache_dir.iterdir()] == [True]
    live = scratch.Scratch(cache_dir)          # a running conversion's folder is kept
    with popview.open(write_trace(tmp_path), cache_dir=cache_dir) as exp:
        left = sorted(p.name for p in cache_dir.iterdir())
        assert left == sorted([exp.cache_path.name, live.path.name])
    live.remove()
    assert np.all([not p.name.startswith(scratch.PREFIX) for p in cache_dir.iterdir()])


def test_a_source_that_cannot_be_read_is_not_blamed_on_the_cache(tmp_path, cache_dir, monkeypatch):
    import errno

    from popview.readers import InputError, paraver

    prv = write_trace(tmp_path)

    def refuse(anchor, writer, progress):
        raise PermissionError(errno.EACCES, "Permission denied", str(prv.with_suffix(".pcf")))

    monkeypatch.setattr(paraver, "convert", refuse)
    with pytest.raises(InputError, match=r"t\.pcf: cannot read: Permission denied") as err:
        popview.open(prv, cache_dir=cache_dir)
    assert not isinstance(err.value, CacheUnwritable)
    assert os.listdir(cache_dir) == []
