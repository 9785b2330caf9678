"""Faults a conversion and a cache meet: bit rot, edits that keep size and mtime,
kill -9 and SIGTERM at any moment, a full disk. Each ends in correct numbers or
a clear error, with nothing left behind and no damaged cache trusted."""
from __future__ import annotations

import errno
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import hdf5plugin  # noqa: F401
import numpy as np
import pytest

import popview
from popview.cache import CacheDamaged, CacheError, CacheUnwritable, fingerprint, location, overview
from popview.cache.reader import Reader
from popview.testing import synthetic

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("faults")
    synthetic.write(d / "h.prv", synthetic.Shape(processes=2, threads=2, iterations=40, work_ns=1_000_000,
                                                 rank_weights=(1.0, 1.4)))
    return d / "h.prv"


@pytest.fixture(scope="module")
def converted(trace, tmp_path_factory):
    """(cache path, every dataset and attribute of it)."""
    cache_dir = tmp_path_factory.mktemp("faults-cache")
    with popview.open(trace, cache_dir=cache_dir) as exp:
        path = exp.cache_path
    return path, _contents(path)


def _contents(path: Path) -> dict:
    found = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            found[name + "@attrs"] = {k: np.asarray(v).tolist() for k, v in obj.attrs.items()}
            if isinstance(obj, h5py.Dataset):
                found[name] = obj[()]
        found["/@attrs"] = {k: np.asarray(v).tolist() for k, v in f.attrs.items()}
        f.visititems(visit)
    return found


def _same(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    for key in a:
        if isinstance(a[key], np.ndarray):
            if not np.array_equal(a[key], b[key], equal_nan=a[key].dtype.kind == "f"):
                return False
        elif a[key] != b[key]:
            return False
    return True


def _flip(path: Path, offset: int, bit: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)[0]
        f.seek(offset)
        f.write(bytes([byte ^ (1 << bit)]))


def test_bit_flips_at_random_offsets_are_refused_or_harmless(converted, tmp_path):
    """Every flip is detected when the cache is opened, or changes no value read."""
    path, reference = converted
    size = path.stat().st_size
    rng = np.random.default_rng(18)
    detected = 0
    trials = 120
    for i in range(trials):
        copy = tmp_path / f"c{i}.h5"
        shutil.copyfile(path, copy)
        _flip(copy, int(rng.integers(0, size)), int(rng.integers(0, 8)))
        try:
            reader = Reader(copy)
        except CacheError:
            detected += 1
        else:
            reader.close()
            assert _same(_contents(copy), reference), f"flip {i} changed the data without being detected"
        copy.unlink()
    assert detected >= trials * 0.8, f"only {detected} of {trials} flips detected"


def test_flips_in_every_dataset_are_detected(converted, tmp_path):
    """One flip inside the stored bytes of each dataset (the definitions, offsets, totals, ...):
    refused on opening, and by HDF5's own chunk checksum when read without the check."""
    path, _ = converted
    with h5py.File(path, "r") as f:
        places = []
        f.visititems(lambda name, obj: places.append((name, obj.id.get_chunk_info(0)))
                     if isinstance(obj, h5py.Dataset) and obj.id.get_num_chunks() else None)
    assert any(name == "definitions/json" for name, _ in places)
    for name, info in places:
        copy = tmp_path / "c.h5"
        shutil.copyfile(path, copy)
        _flip(copy, info.byte_offset + info.size // 2, 3)
        with pytest.raises(CacheDamaged, match="damaged"):
            Reader(copy)
        with h5py.File(copy, "r") as f, pytest.raises(OSError):
            f[name][()]


def test_a_damaged_cache_is_converted_again_and_the_user_told(trace, tmp_path, caplog):
    cache_dir = tmp_path / "cache"
    with popview.open(trace, cache_dir=cache_dir) as exp:
        path, states = exp.cache_path, exp.reader.read("states")
        with h5py.File(path, "r") as f:
            info = f["states/end"].id.get_chunk_info(0)
    _flip(path, info.byte_offset + 7, 0)
    with caplog.at_level(logging.WARNING, logger="popview"):
        with popview.open(trace, cache_dir=cache_dir) as exp:
            assert exp.converted
            for name, column in states.items():
                np.testing.assert_array_equal(exp.reader.read("states")[name], column)
    assert [r.getMessage() for r in caplog.records if "damaged" in r.getMessage()] == [
        f"popview: {path}: cache damaged (its bytes do not match their checksum); converting it again"]


def test_a_same_size_edit_that_keeps_the_mtime_is_seen(tmp_path):
    """cp -p and rsync -t keep the mtime: the content hash tells the edit."""
    from tests.paraver.prvtext import write_trace

    prv = write_trace(tmp_path)
    cache_dir = tmp_path / "cache"
    with popview.open(prv, cache_dir=cache_dir) as exp:
        assert exp.reader.read("states")["end"][0] == 600
    st = prv.stat()
    prv.write_text(prv.read_text().replace("1:1:1:1:1:0:600:1", "1:1:1:1:1:0:500:1"))
    os.utime(prv, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert prv.stat().st_size == st.st_size and prv.stat().st_mtime_ns == st.st_mtime_ns
    with popview.open(prv, cache_dir=cache_dir) as exp:
        assert exp.converted and exp.reader.read("states")["end"][0] == 500


def test_a_source_edited_while_it_is_read_is_never_trusted(tmp_path, monkeypatch):
    """The fingerprint is hashed while the source is read: an edit during the reading
    (after the hash) leaves the cache without a hash, so the next opening converts again,
    even when the edit was undone (what was read may hold the edited bytes)."""
    from popview.readers import paraver
    from tests.paraver.prvtext import write_trace

    prv = write_trace(tmp_path)
    real = paraver.convert

    def edited_while_read(path, writer, progress):
        defs = real(path, writer, progress)
        time.sleep(0.05)                        # the hash (a small file) is done by now
        st, text = prv.stat(), prv.read_text()
        prv.write_text(text.replace("1:1:1:1:1:0:600:1", "1:1:1:1:1:0:500:1"))
        prv.write_text(text)                    # undone, its mtime too: only the ctime tells
        os.utime(prv, ns=(st.st_atime_ns, st.st_mtime_ns))
        return defs

    monkeypatch.setattr(paraver, "convert", edited_while_read)
    popview.open(prv, cache_dir=tmp_path / "cache").close()
    monkeypatch.setattr(paraver, "convert", real)
    with popview.open(prv, cache_dir=tmp_path / "cache") as exp:
        assert exp.converted


def test_an_unchanged_source_is_not_hashed_again(tmp_path, monkeypatch):
    from tests.paraver.prvtext import write_trace

    prv = write_trace(tmp_path)
    popview.open(prv, cache_dir=tmp_path / "cache").close()
    hashed = []
    real = fingerprint.content_hash
    monkeypatch.setattr(fingerprint, "content_hash", lambda p: hashed.append(p) or real(p))
    with popview.open(prv, cache_dir=tmp_path / "cache") as exp:
        assert not exp.converted
    assert hashed == []
    os.utime(prv, ns=(time.time_ns(), time.time_ns()))        # touched, not changed: hashed, reused
    with popview.open(prv, cache_dir=tmp_path / "cache") as exp:
        assert not exp.converted
    assert hashed == [prv]


# ---- a full disk -------------------------------------------------------------

@pytest.mark.parametrize("where", ["spill", "spill thread", "chunks", "sorted copy", "side file"])
def test_a_full_disk_at_any_phase_is_a_clear_error_leaving_nothing(trace, tmp_path, monkeypatch, where):
    """ENOSPC raised by the writer's own writes, in this process."""
    from popview.cache import chunks, rawtables, sidecar, writer

    monkeypatch.setattr(sidecar, "MIN_ROWS", 0)

    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if where == "spill":
        monkeypatch.setattr(writer._Staging, "append", full)
    elif where == "spill thread":        # the staging's writes, made by a thread of their own
        monkeypatch.setattr(writer, "_pwrite_all", full)
    elif where == "chunks":
        monkeypatch.setattr(chunks.ChunkedWriter, "_store_oldest", full)
    elif where == "sorted copy":
        monkeypatch.setattr(rawtables.SortedCopy, "finish", full)
    else:
        from popview.cache import derived
        monkeypatch.setattr(derived, "_join", full)
    cache_dir = tmp_path / "cache"
    with pytest.raises(CacheUnwritable, match=f"^{cache_dir}: cannot write the cache: No space left on device$"):
        popview.open(trace, cache_dir=cache_dir, timeline=True)      # the side process builds a share of it
    assert os.listdir(cache_dir) == []


def _mount_tmpfs(folder: Path, size: str) -> bool:
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("mount"):
        return False
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True)
    return done.returncode == 0


CONVERT = ("import sys; from popview.cache import sidecar; sidecar.MIN_ROWS = int(sys.argv[3]); "
           "from popview.cli import main; "
           "raise SystemExit(main(['convert', sys.argv[1], '--cache-dir', sys.argv[2]] + sys.argv[4:]))")


def _convert_command(trace: Path, cache_dir: Path, min_rows: int = 0, timeline: bool = False) -> list[str]:
    """`popview convert`; with the timeline overview, the derived-data process builds a share of it."""
    return [sys.executable, "-c", CONVERT, str(trace), str(cache_dir), str(min_rows)] + (["--timeline"] * timeline)


def _ours(name: str) -> bool:
    """A cache or its timeline overview."""
    return name.endswith(".popview.h5") or name.endswith(".popview" + overview.SUFFIX)


FIRST_USE = "popview: preparing popview for first use"     # the kernels compiling, when they do


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(REPO))


@pytest.mark.parametrize("size_kb", [300, 1200, 2000, 2600, 3200])
def test_a_small_tmpfs_fills_up_cleanly(trace, tmp_path, size_kb):
    """A real full disk (a tmpfs, where mounting is allowed): one line, exit code 2, no
    segfault, nothing left; or a good cache when it fits."""
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, f"{size_kb}k"):
        pytest.skip("mounting a tmpfs is not permitted here")
    try:
        done = subprocess.run(_convert_command(trace, disk), capture_output=True, text=True, env=_env(), timeout=300)
        left = os.listdir(disk)
        if done.returncode == 0:
            assert len(left) == 1 and left[0].endswith(".popview.h5")
            Reader(disk / left[0]).close()
        else:
            assert done.returncode == 2, done.stderr
            told = [line for line in done.stderr.strip().splitlines() if not line.startswith(FIRST_USE)]
            assert told == [f"popview: error: {disk}: cannot write the cache: No space left on device"]
            assert left == []
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_a_write_that_fails_is_kept_from_hdf5_and_raised_at_the_close(tmp_path, monkeypatch):
    """integrity.writing: the file's writes fail past 40 KB (a full disk). HDF5 never sees it
    (a failed write inside HDF5 crashed the process releasing the file's objects): it goes on,
    reads back what it wrote since (held in memory), and the close raises ENOSPC naming the file."""
    from popview.cache import integrity

    real = integrity._pwrite

    def full(fd, view, at):
        if at + len(view) > 40_000:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, view, at)

    monkeypatch.setattr(integrity, "_pwrite", full)
    path = tmp_path / "x.h5"
    values = [np.arange(200_000) * i for i in range(8)]     # beyond HDF5's chunk cache: read from the file
    with pytest.raises(OSError) as failed:
        with integrity.writing(path, "w") as f:
            for i, v in enumerate(values):
                f.create_dataset(f"d{i}", data=v, chunks=(50_000,), **integrity.checked())
                f.attrs[f"a{i}"] = i
            f.flush()
            assert all(np.array_equal(f[f"d{i}"][:], v) for i, v in enumerate(values))
            assert [f.attrs[f"a{i}"] for i in range(8)] == list(range(8))
    assert (failed.value.errno, failed.value.filename) == (errno.ENOSPC, str(path))
    assert os.path.getsize(path) <= 40_000       # nothing past the failure reached the disk
    assert integrity.guard_of(f) is None         # its descriptor closed, forgotten


FILLING = ("import resource, signal, sys\n"
           "from popview.cache import sidecar\n"
           "sidecar.MIN_ROWS = int(sys.argv[3])\n"
           "if int(sys.argv[4]):      # every write past this size of a file fails (EFBIG)\n"
           "    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
           "    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[4]), int(sys.argv[4])))\n"
           "from popview.cli import main\n"
           "raise SystemExit(main(['convert', sys.argv[1], '--cache-dir', sys.argv[2], '--timeline']))\n")


@pytest.mark.parametrize("where", ["here", "with the side process"])
@pytest.mark.parametrize("disk", ["RLIMIT_FSIZE", "a full tmpfs"])
def test_a_disk_that_fills_during_a_conversion_with_the_timeline_does_not_crash(trace, tmp_path, disk, where):
    """`popview convert --timeline` (the window converts so too) on a disk that fills up
    during the conversion: at several sizes, the writes of the cache, its part files or the
    timeline overview fail inside HDF5. That crashed the process (SIGSEGV, SIGBUS: HDF5
    releasing the objects of a file whose writes failed; with RLIMIT_FSIZE at the first size
    below in both cases, and on a full tmpfs in a part file), or failed with
    `unexpected IndexError` (a run index numpy's tofile wrote empty without a word). Now each
    ends with a good cache and overview, or exit code 2 and one line naming the file and the
    reason: the cache's folder (nothing left behind), or the overview (the cache written
    without it is there, and used)."""
    min_rows = 0 if where == "with the side process" else 10 ** 9
    sizes = {}
    with popview.open(trace, cache_dir=tmp_path / "whole", timeline=True) as exp:
        sizes["cache"] = exp.cache_path.stat().st_size
        sizes["overview"] = overview.path_of(exp.cache_path).stat().st_size
    folder = tmp_path / "disk"
    if disk == "a full tmpfs":
        if not _mount_tmpfs(folder, "16m"):
            pytest.skip("mounting a tmpfs is not permitted here")
        rooms = [int(f * (sizes["cache"] + sizes["overview"])) for f in (0.5, 1.0, 1.3, 1.8, 2.5)]
    else:
        folder.mkdir()
        rooms = [int(f * sizes["overview"]) for f in (0.3, 0.5, 0.7, 0.9)]
    outcomes = []
    try:
        for room in rooms:
            cache_dir = folder / "c"
            limit = 0
            if disk == "a full tmpfs":      # filled by others but for `room` bytes
                (folder / "filler").unlink(missing_ok=True)
                (folder / "filler").write_bytes(b"\1" * (shutil.disk_usage(folder).free - room))
            else:
                limit = room
            done = subprocess.run([sys.executable, "-c", FILLING, str(trace), str(cache_dir), str(min_rows), str(limit)],
                                  capture_output=True, text=True, env=_env(), timeout=300)
            told = [line for line in done.stderr.strip().splitlines() if not line.startswith(FIRST_USE)]
            left = sorted(os.listdir(cache_dir)) if cache_dir.exists() else []
            assert done.returncode in (0, 2), (room, done.returncode, done.stderr[-3000:])
            if done.returncode == 0:
                assert len(left) == 2 and all(_ours(name) for name in left), left
                cache = cache_dir / next(name for name in left if name.endswith(".popview.h5"))
                with popview.open(trace, cache_dir=cache_dir, timeline=True) as exp:
                    assert not exp.converted and exp.timeline_prepared and exp.timeline_failure is None
                outcomes.append("fits")
                shutil.rmtree(cache_dir)
                continue
            reason = os.strerror(errno.ENOSPC if disk == "a full tmpfs" else errno.EFBIG)
            cache_line = f"popview: error: {cache_dir}: cannot write the cache: {reason}"
            assert len(told) == 1, (room, done.stderr[-3000:])
            cache = location.cache_path(trace, cache_dir, False)
            if told[0] != cache_line:           # the cache was written without it, and is used
                assert told[0] == f"popview: error: {overview.path_of(cache)}: cannot write the timeline " \
                                  f"overview: {reason}", told
                assert left == [cache.name], (room, left)
                with popview.open(trace, cache_dir=cache_dir) as exp:
                    assert not exp.converted
                outcomes.append("overview")
                shutil.rmtree(cache_dir)
            else:
                assert left == [], (room, left)
                outcomes.append("cache")
    finally:
        if disk == "a full tmpfs":
            subprocess.run(["umount", str(folder)], check=False)
    assert "overview" in outcomes, outcomes        # the overview's writes were reached and failed


OPENING = """
import resource, signal, sys
from popview.cache import sidecar
sidecar.MIN_ROWS = int(sys.argv[3])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[4]), int(sys.argv[4])))
import numpy as np
import popview
from popview.analysis.timeline_data import ColourMode, TimelineData
from popview.experiment import WITH_CONVERSION
with popview.open(sys.argv[1], cache_dir=sys.argv[2], timeline=WITH_CONVERSION) as exp:
    print("converted", exp.converted)
    print("failure", exp.timeline_failure)
    print("metrics", exp.metrics("pop-mpi").find("parallel_efficiency").value is not None)
    data = TimelineData(exp)
    print("picture", data.picture(ColourMode("state"), np.arange(data.n_loc), 0, data.t_end, 100).message)
print("done")
"""


@pytest.mark.parametrize("where", ["here", "with the side process"])
def test_the_window_opens_a_run_whose_overview_fills_the_disk_without_a_timeline(trace, tmp_path, where):
    """The window converts with the timeline overview (timeline=WITH_CONVERSION). Its writes
    failing (every write past a size that the cache stays under, the overview not: RLIMIT_FSIZE)
    used to crash the window (SIGSEGV), then, once that no longer crashed, failed the whole
    opening. Now the cache is written without the overview and the run opens: its metrics are
    there, the failure names the overview and why (timeline_failure: the Timeline pane shows it),
    a timeline picture says it could not be built; the cache is kept."""
    with popview.open(trace, cache_dir=tmp_path / "whole", timeline=True) as exp:
        cache_size, overview_size = exp.cache_path.stat().st_size, overview.path_of(exp.cache_path).stat().st_size
    assert cache_size < 0.7 * overview_size
    cache_dir = tmp_path / "c"
    min_rows = 0 if where == "with the side process" else 10 ** 9
    done = subprocess.run([sys.executable, "-c", OPENING, str(trace), str(cache_dir), str(min_rows),
                           str(int(0.7 * overview_size))], capture_output=True, text=True, env=_env(), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    cache = location.cache_path(trace, cache_dir, False)
    reason = f"{overview.path_of(cache)}: cannot write the timeline overview: {os.strerror(errno.EFBIG)}"
    assert done.stdout.splitlines() == ["converted True", f"failure {reason}", "metrics True",
                                        f"picture no timeline overview: it could not be built ({reason})", "done"]
    assert f"its timeline overview cannot be built ({reason}): opened without a timeline" in done.stderr
    assert os.listdir(cache_dir) == [cache.name]


# ---- killed conversions -----------------------------------------------------

def _children_of(pid: int) -> list[int]:
    """Derived-data processes started by `pid` (they carry its pid in their environment)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"POPVIEW_DERIVED_PARENT={pid}".encode() in env.split(b"\0"):
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find the derived-data process")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killed_at_random_moments_leaves_no_trusted_damage(trace, tmp_path, sig):
    rng = np.random.default_rng(int(sig))
    cache_dir = tmp_path / "cache"
    for trial in range(4):
        proc = subprocess.Popen(_convert_command(trace, cache_dir, timeline=True), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=_env())
        time.sleep(float(rng.uniform(0.3, 2.5)))
        children = _children_of(proc.pid)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        if proc.returncode == 0:           # finished before the signal
            assert "converted" in out
        elif sig == signal.SIGTERM and proc.returncode != -sig:    # in the conversion: unwound, one line
            told = [line for line in err.strip().splitlines() if not line.startswith(FIRST_USE)]
            assert told in (["popview: error: interrupted"], ["popview: error: terminated"]), err
            assert proc.returncode in (2, 128 + signal.SIGTERM)
        else:
            assert "Traceback" not in err, err
        for child in children:           # the derived-data process never outlives its parent
            for _ in range(50):
                if not Path(f"/proc/{child}").exists() or b"zombie" in _state(child):
                    break
                time.sleep(0.1)
            else:
                pytest.fail(f"derived-data process {child} outlived its parent")
        left = os.listdir(cache_dir) if cache_dir.exists() else []
        if sig == signal.SIGTERM:
            assert all(_ours(name) for name in left), left
        for path in cache_dir.glob("*.popview.h5") if left else []:
            with Reader(path) as reader:     # a cache found is whole, and so is its overview when found
                if overview.path_of(path).exists():
                    assert "state" in reader.timeline()
        # the next conversion cleans up what a kill -9 left and makes a good cache
        done = subprocess.run(_convert_command(trace, cache_dir, timeline=True), capture_output=True, text=True,
                              env=_env())
        assert done.returncode == 0, done.stderr
        left = sorted(os.listdir(cache_dir))
        assert len(left) == 2 and all(_ours(name) for name in left), left     # no scratch, no lock
        for name in left:
            (cache_dir / name).unlink()


def test_killed_after_its_cache_was_in_place_is_tidied_by_the_next_opening(trace, tmp_path):
    """A conversion killed between putting its cache in place and letting go of its lock
    and scratch folder: the next opening finds the cache valid (nothing to convert) and
    still removes what was left. (CI met it: kill -9 at that moment.)"""
    import fcntl

    cache_dir = tmp_path / "cache"
    with popview.open(trace, cache_dir=cache_dir) as exp:
        target = exp.cache_path
    stale = cache_dir / ".popview-scratch-999999999-deadbeef"
    stale.mkdir()
    (stale / "lock").write_text("")
    (stale / "cache.h5").write_bytes(b"half")
    lock = cache_dir / f".{target.name}.lock"
    lock.write_text("")
    busy = cache_dir / ".popview-scratch-1-busy"            # another conversion, running: kept
    busy.mkdir()
    held = os.open(busy / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        with popview.open(trace, cache_dir=cache_dir) as exp:
            assert not exp.converted
        assert sorted(os.listdir(cache_dir)) == sorted([target.name, busy.name])
    finally:
        os.close(held)


def _state(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/status").read_bytes().lower()
    except OSError:
        return b"zombie"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find the derived-data process")
def test_a_killed_derived_data_process_is_one_line_and_leaves_nothing(trace, tmp_path):
    cache_dir = tmp_path / "cache"
    for _ in range(3):
        proc = subprocess.Popen(_convert_command(trace, cache_dir, timeline=True), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=_env())
        children = []
        while proc.poll() is None and not children:
            children = _children_of(proc.pid)
            time.sleep(0.02)
        if children:
            time.sleep(0.3)
            try:
                os.kill(children[0], signal.SIGKILL)
            except ProcessLookupError:        # it ended in those 0.3 s (a short-lived child): again
                pass
        out, err = proc.communicate(timeout=120)
        if proc.returncode == 0:
            shutil.rmtree(cache_dir)          # the child was done before the kill: again
            continue
        assert proc.returncode == 2
        assert [line for line in err.strip().splitlines() if not line.startswith(FIRST_USE)] == [
            "popview: error: the derived-data process ended without a result (killed by SIGKILL, exit code -9)"], err
        assert os.listdir(cache_dir) == []
        return
    pytest.skip("the derived-data process always finished before it could be killed")


def test_damage_after_opening_fails_every_read_clearly(converted, tmp_path):
    """A chunk damaged after the cache was opened and verified: the reader's reads and
    the typed nodes raise CacheDamaged; HDF5's own error (code reading h5py directly)
    becomes one sentence in the CLI and the window; the next opening refuses the file."""
    from popview.failures import one_line

    path, _ = converted
    copy = tmp_path / "c.h5"
    shutil.copyfile(path, copy)
    with Reader(copy) as reader:
        info = reader.h5["states/end"].id.get_chunk_info(0)
        _flip(copy, info.byte_offset + info.size // 2, 5)
        with pytest.raises(CacheDamaged, match="damaged while reading states"):
            reader.read("states")
        with pytest.raises(CacheDamaged, match="damaged while reading /states/end"):
            reader.group("states")["end"][:]
        with pytest.raises(OSError) as caught:
            reader.h5["states/end"][:]
    line = one_line(caught.value)
    assert line.startswith("a cache was damaged while in use (HDF5: ")
    assert line.endswith("popview converts it again when the trace is next opened")
    assert "\n" not in line
    assert not one_line(OSError("plain")).startswith("a cache was damaged")
    with pytest.raises(CacheDamaged):
        Reader(copy)
