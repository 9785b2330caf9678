"""The timeline overview (popview.cache.overview): not built by a default conversion,
built from the cache on first use into a companion file equal to the one a conversion
with the timeline builds, tied to its cache, rebuilt when damaged or foreign, never
left half-written."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading

import h5py
import hdf5plugin  # noqa: F401  (filters for reading the files)
import numpy as np
import pytest

import popview
from popview.analysis.timeline_data import ColourMode, TimelineData
from popview.cache import Cancelled, companion, integrity, overview, sidecar, window_sums
from popview.cache.reader import Reader
from popview.experiment import convert
from popview.testing import synthetic
from popview.testing.faults import full_disk_build
from tests.test_cache_sidecar import trace  # noqa: F401  (the fixture: a hybrid trace with counters)


@pytest.fixture(scope="module")
def other(tmp_path_factory):
    d = tmp_path_factory.mktemp("other")
    synthetic.write(d / "o.prv", synthetic.Shape(processes=3, threads=1, iterations=3, work_ns=1_000_000))
    return d / "o.prv"


def _datasets(path) -> dict:
    found = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: found.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
        f.visititems(lambda name, obj: found.__setitem__(f"{name}@", dict(obj.attrs)))
    return found


def _assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys() and a
    for name, value in a.items():
        if name.endswith("@"):
            assert {k: str(v) for k, v in value.items()} == {k: str(v) for k, v in b[name].items()}, name
        else:
            assert value.dtype == b[name].dtype and value.shape == b[name].shape, name
            assert np.array_equal(value, b[name], equal_nan=value.dtype.kind == "f"), name


def _pyramid(cache) -> dict:
    """The datasets and attributes of the pyramid in the companion of `cache`."""
    return {k: v for k, v in _datasets(overview.path_of(cache)).items() if k.startswith("pyramid")}


def _files(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_default_conversion_builds_no_pyramid_and_first_use_builds_the_eager_one(trace, tmp_path, monkeypatch):
    from popview.analysis import timeline_data

    monkeypatch.setattr(timeline_data, "RAW_BUDGET", 0)          # drawn from the pyramid's levels
    eager, _ = convert(trace, tmp_path / "eager", timeline=True)
    lazy, _ = convert(trace, tmp_path / "lazy")
    with h5py.File(lazy) as f:
        assert "pyramid" not in f and "cumulative" in f
    assert not overview.path_of(lazy).exists()
    assert overview.path_of(eager).exists()
    with popview.open(trace, cache_dir=tmp_path / "lazy") as exp:
        assert not exp.timeline_prepared
        data = TimelineData(exp)                          # nothing is built before a picture needs it
        assert not overview.path_of(lazy).exists()
        pic = data.picture(ColourMode("state"), np.arange(data.n_loc), 0, data.t_end, 300)
        assert pic.source.startswith("pyramid") and exp.timeline_prepared
    assert _files(tmp_path / "lazy") == sorted([lazy.name, overview.path_of(lazy).name]), "nothing else left"
    _assert_same(_pyramid(eager), _pyramid(lazy))
    # the caches themselves: the same tables and cumulative sums, so the same metrics
    _assert_same({k: v for k, v in _datasets(eager).items() if not k.endswith("@")},
                 {k: v for k, v in _datasets(lazy).items() if not k.endswith("@")})


def test_the_side_process_split_and_the_one_process_build_give_the_same_overview(trace, tmp_path, monkeypatch):
    """The conversion's split of the pyramid between two processes (sidecar), against the
    overview built later from the cache in one."""
    monkeypatch.setattr(sidecar, "MIN_ROWS", 0)
    two, _ = convert(trace, tmp_path / "two", timeline=True)
    one, _ = convert(trace, tmp_path / "one")
    with Reader(one) as reader:
        reader.timeline()
    assert any(k.startswith("pyramid/counter_") for k in _pyramid(two)), "the trace must have counters"
    _assert_same(_pyramid(two), _pyramid(one))


@pytest.mark.parametrize("part", [overview.PART, window_sums.PART], ids=lambda p: p.title)
def test_a_large_companion_is_built_in_a_child_process_and_is_the_same(trace, tmp_path, monkeypatch, part):
    """Past IN_MEMORY_BYTES a companion is built in a child process (its failures cannot crash
    this one): the same file as one built here in memory, and as the conversion's."""
    eager, _ = convert(trace, tmp_path / "eager", timeline=True, window_sums=True)
    children = []
    real = companion._build_in_child
    monkeypatch.setattr(companion, "_build_in_child", lambda *a: children.append(a) or real(*a))
    built = {}
    for where, limit in (("child", 0), ("memory", 1 << 40)):
        monkeypatch.setattr(companion, "IN_MEMORY_BYTES", limit)
        cache, _ = convert(trace, tmp_path / where)
        with Reader(cache) as reader:
            reader.timeline() if part is overview.PART else reader.window_sums()
        assert len(children) == 1, where
        built[where] = _datasets(companion.path_of(part, cache))
        assert _files(tmp_path / where) == sorted([cache.name, companion.path_of(part, cache).name])
        with h5py.File(companion.path_of(part, cache)) as f:
            assert f.attrs[companion.DIGEST_ATTR] == integrity.stored_digest(cache)
    _assert_same(built["child"], built["memory"])
    ours = {k: v for k, v in built["child"].items() if k.startswith(part.group)}
    _assert_same(ours, {k: v for k, v in _datasets(companion.path_of(part, eager)).items() if k.startswith(part.group)})


@pytest.mark.parametrize("part", [overview.PART, window_sums.PART], ids=lambda p: p.title)
def test_a_large_companion_without_a_child_process_is_not_held_in_memory(trace, tmp_path, monkeypatch, part):
    """Where no child process can be started (sidecar.available: not POSIX) a companion past
    IN_MEMORY_BYTES was built in memory whatever its size (1.5-3 times its cache's): it is
    written into its file as it is built, and is the same file."""
    monkeypatch.setattr(sidecar, "available", lambda: False)
    monkeypatch.setattr(companion, "IN_MEMORY_BYTES", 0)
    held = []
    real = integrity.in_memory
    monkeypatch.setattr(integrity, "in_memory", lambda path: held.append(path) or real(path))
    monkeypatch.setattr(companion, "_build_in_child", lambda *a: pytest.fail("no child process here"))
    cache, _ = convert(trace, tmp_path / "c")
    with Reader(cache) as reader:
        reader.timeline() if part is overview.PART else reader.window_sums()
    assert held == [], "built in memory"
    built = _datasets(companion.path_of(part, cache))
    monkeypatch.setattr(companion, "IN_MEMORY_BYTES", 1 << 40)
    cache2, _ = convert(trace, tmp_path / "m")
    with Reader(cache2) as reader:
        reader.timeline() if part is overview.PART else reader.window_sums()
    assert len(held) == 1
    _assert_same(built, _datasets(companion.path_of(part, cache2)))


def test_a_cancel_stops_the_child_process_and_leaves_nothing(trace, tmp_path, monkeypatch):
    cache, _ = convert(trace, tmp_path / "c")
    monkeypatch.setattr(companion, "IN_MEMORY_BYTES", 0)
    children = []
    real = sidecar.SideBuilder.__init__
    monkeypatch.setattr(sidecar.SideBuilder, "__init__", lambda self, *a, **k: children.append(self) or real(self, *a, **k))
    cancel = threading.Event()
    with popview.open(trace, cache_dir=tmp_path / "c") as exp:
        with pytest.raises(Cancelled):
            exp.prepare_timeline(lambda fraction, message: cancel.set(), cancel)
        assert not exp.timeline_prepared
    assert len(children) == 1 and children[0]._proc.poll() is not None, "the child ended"
    assert _files(tmp_path / "c") == [cache.name], "no companion, scratch folder or lock left"


def test_a_child_process_that_dies_leaves_the_run_without_a_timeline_saying_why(trace, tmp_path, monkeypatch):
    """The build's child process killed (a crash, the OOM killer): this process goes on, the
    run opens without a timeline, the failure names the file and how the child ended."""
    import signal

    cache, _ = convert(trace, tmp_path / "c")
    monkeypatch.setattr(companion, "IN_MEMORY_BYTES", 0)
    children = []
    real = sidecar.SideBuilder.__init__
    monkeypatch.setattr(sidecar.SideBuilder, "__init__", lambda self, *a, **k: children.append(self) or real(self, *a, **k))

    def progress(fraction, message):
        if children and children[-1]._proc.poll() is None:
            os.kill(children[-1]._proc.pid, signal.SIGKILL)

    with popview.open(trace, cache_dir=tmp_path / "c", timeline=True, progress=progress) as exp:
        assert str(exp.timeline_failure) == (f"{overview.path_of(cache)}: building the timeline overview failed: its "
                                             "process ended without a result (killed by SIGKILL, exit code -9)")
        assert exp.metrics("pop-mpi") is not None
        with pytest.raises(OSError, match="killed by SIGKILL"):
            exp.prepare_timeline()
    assert len(children) == 1, "not built again"
    assert _files(tmp_path / "c") == [cache.name]


def test_metrics_are_the_same_with_or_without_the_overview(trace, tmp_path):
    with popview.open(trace, cache_dir=tmp_path / "a") as a, \
            popview.open(trace, cache_dir=tmp_path / "b", timeline=True) as b:
        assert a.metrics().to_dict() == b.metrics().to_dict()
        assert a.metrics(model="hybrid-multiplicative").to_dict() == b.metrics(model="hybrid-multiplicative").to_dict()
        assert not overview.path_of(a.cache_path).exists(), "metrics never build the timeline overview"


def _companion(trace, folder):
    cache, _ = convert(trace, folder, timeline=True)
    return cache, overview.path_of(cache)


def _rebuilt(trace, folder, cache, companion, caplog=None) -> None:
    before = os.stat(companion).st_ino if companion.exists() else None
    with Reader(cache) as reader:
        group = reader.timeline()
        assert "state" in group and group.file.attrs[overview.DIGEST_ATTR] == integrity.stored_digest(cache)
    assert os.stat(companion).st_ino != before, "built again, not reused"
    with h5py.File(companion) as f:
        integrity.verify(f)


def test_a_damaged_companion_is_rebuilt_never_used(trace, tmp_path, caplog):
    cache, companion = _companion(trace, tmp_path / "c")
    size = companion.stat().st_size
    with open(companion, "r+b") as f:          # a byte in the middle of the data
        f.seek(size // 2)
        byte = f.read(1)
        f.seek(size // 2)
        f.write(bytes([byte[0] ^ 0xFF]))
    _rebuilt(trace, tmp_path / "c", cache, companion)
    assert "timeline overview damaged" in caplog.text


def test_a_truncated_companion_is_rebuilt(trace, tmp_path):
    cache, companion = _companion(trace, tmp_path / "c")
    with open(companion, "r+b") as f:
        f.truncate(companion.stat().st_size // 3)
    _rebuilt(trace, tmp_path / "c", cache, companion)


def test_the_companion_of_another_cache_is_rebuilt(trace, other, tmp_path):
    cache, companion = _companion(trace, tmp_path / "c")
    _, foreign = _companion(other, tmp_path / "o")
    os.replace(foreign, companion)             # whole and sealed, but another cache's
    with h5py.File(companion) as f:
        integrity.verify(f)
    _rebuilt(trace, tmp_path / "c", cache, companion)


def test_a_reconversion_keeps_the_companions_of_the_same_cache_and_removes_the_others(tmp_path):
    """`popview convert --force` of an unchanged trace gives the same cache, byte for byte (the
    same digest): its timeline overview and window sums stay (they were removed, and their next
    use built them again); a trace that changed gives another cache, whose old companions go."""
    trace = tmp_path / "t.prv"
    synthetic.write(trace, synthetic.Shape(processes=2, threads=2, iterations=3, work_ns=1_000_000))
    cache, _ = convert(trace, tmp_path / "c", window_sums=True)
    with Reader(cache) as reader:
        reader.timeline()
    files = [overview.path_of(cache), window_sums.path_of(cache)]
    before = [(p.stat().st_ino, p.stat().st_mtime_ns) for p in files]
    digest = integrity.stored_digest(cache)
    _, converted = convert(trace, tmp_path / "c", force=True)
    assert converted and integrity.stored_digest(cache) == digest, "the same trace, the same cache"
    assert [(p.stat().st_ino, p.stat().st_mtime_ns) for p in files] == before, "both kept, untouched"
    with Reader(cache) as reader:
        assert reader.timeline().file.filename == str(files[0]) and reader.window_sums() is not None
    assert [(p.stat().st_ino, p.stat().st_mtime_ns) for p in files] == before, "used, not built again"
    synthetic.write(trace, synthetic.Shape(processes=2, threads=2, iterations=4, work_ns=1_000_000))
    convert(trace, tmp_path / "c", force=True)
    assert integrity.stored_digest(cache) != digest and not any(p.exists() for p in files), "another cache's: gone"
    convert(trace, tmp_path / "c", force=True, timeline=True)
    with h5py.File(files[0]) as f:
        assert f.attrs[overview.DIGEST_ATTR] == integrity.stored_digest(cache)


def test_an_old_cache_with_its_pyramid_inside_is_read_there(trace, tmp_path):
    """Caches converted before the companion existed keep their pyramid: no companion made."""
    from popview.cache import pyramid
    from popview.cache.progress import Progress

    cache, _ = convert(trace, tmp_path / "c")
    with Reader(cache) as reader:
        defs = reader.definitions
    with h5py.File(cache, "r+") as f:
        pyramid.build(f, defs, Progress())
    integrity.reseal(cache)
    with Reader(cache) as reader:
        assert reader.timeline().file.filename == str(cache) and reader.timeline_open()
    assert not overview.path_of(cache).exists()


@pytest.mark.parametrize("at", ["building the timeline pyramid", "writing state tiles", "writing messages tiles",
                                "sealing"])
def test_cancel_during_the_build_leaves_nothing_half_written(trace, tmp_path, monkeypatch, at):
    cache, _ = convert(trace, tmp_path / "c")
    cancel = threading.Event()
    seen = []

    def progress(fraction, message):
        seen.append(message)
        if message == at:
            cancel.set()

    if at == "sealing":             # the build done, a failure before the rename
        def fail(path, summary=None):
            assert path.exists() and path.parent != cache.parent
            raise Cancelled("cancelled by the user")

        monkeypatch.setattr(companion.integrity, "seal", fail)      # the mechanism shared with the window sums
    with popview.open(trace, cache_dir=tmp_path / "c") as exp:
        with pytest.raises(Cancelled):
            exp.prepare_timeline(progress, cancel)
        assert not exp.timeline_prepared
    assert at in seen or at == "sealing"
    assert _files(tmp_path / "c") == [cache.name], "no companion, scratch folder or lock left"
    monkeypatch.undo()
    with popview.open(trace, cache_dir=tmp_path / "c") as exp:      # and the next use builds it
        exp.prepare_timeline()
    assert overview.path_of(cache).exists()


def test_convert_with_the_timeline_builds_it_for_a_cache_found_without(trace, tmp_path):
    cache, converted = convert(trace, tmp_path / "c")
    assert converted and not overview.path_of(cache).exists()
    _, converted = convert(trace, tmp_path / "c", timeline=True)
    assert not converted and overview.path_of(cache).exists()


def test_the_cli_option(trace, tmp_path):
    env = dict(os.environ, POPVIEW_PRECOMPILE="0")
    out = subprocess.run([sys.executable, "-m", "popview", "convert", str(trace), "--cache-dir", str(tmp_path),
                          "--timeline"], capture_output=True, text=True, env=env, check=True).stdout
    assert "with its timeline overview" in out
    cache = next(p for p in tmp_path.iterdir() if p.name.endswith(".popview.h5"))
    assert overview.path_of(cache).exists()


def test_two_processes_asking_at_once_build_one_whole_file(trace, tmp_path):
    cache, _ = convert(trace, tmp_path / "c")
    script = ("import sys, popview\n"
              "with popview.open(sys.argv[1], cache_dir=sys.argv[2]) as exp:\n"
              "    exp.prepare_timeline()\n"
              "    print(exp.reader.timeline().file.attrs['cache_digest'])\n")
    env = dict(os.environ, POPVIEW_PRECOMPILE="0")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(trace), str(tmp_path / "c")],
                              stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs == [integrity.stored_digest(cache)] * 2
    assert _files(tmp_path / "c") == sorted([cache.name, overview.path_of(cache).name])
    with h5py.File(overview.path_of(cache)) as f:
        integrity.verify(f)


def test_a_folder_that_cannot_be_written_gets_a_private_overview(trace, tmp_path, monkeypatch):
    """A shared, read-only cache directory: built for this process, in a temporary file."""
    import errno

    from popview.cache import scratch

    cache, _ = convert(trace, tmp_path / "c")

    def refused(self, waiting=None):
        raise PermissionError(errno.EACCES, "Permission denied", str(self.path))

    monkeypatch.setattr(scratch.CacheLock, "acquire", refused)
    with popview.open(trace, cache_dir=tmp_path / "c") as exp:
        group = exp.reader.timeline()
        assert "state" in group and not os.path.exists(group.file.filename)
        data = TimelineData(exp)
        assert data.picture(ColourMode("state"), np.arange(data.n_loc), 0, data.t_end, 100).values.size
    assert _files(tmp_path / "c") == [cache.name]


def test_a_build_killed_leaves_what_the_next_opening_removes(trace, tmp_path):
    """kill -9 during the build: its scratch folder and lock stay; the next opening of the
    trace removes both (nobody holds their locks) and the next use builds the overview."""
    from popview.cache import location

    cache, _ = convert(trace, tmp_path / "c")
    stale = tmp_path / "c" / ".popview-scratch-999999999-deadbeef"
    stale.mkdir()
    (stale / "lock").write_text("")
    (stale / "timeline.h5").write_bytes(b"half")
    lock = tmp_path / "c" / location.lock_name(overview.path_of(cache))
    lock.write_text("")
    with popview.open(trace, cache_dir=tmp_path / "c") as exp:
        assert not exp.converted
        assert _files(tmp_path / "c") == [cache.name]
        exp.prepare_timeline()
    assert _files(tmp_path / "c") == sorted([cache.name, overview.path_of(cache).name])


def test_a_cache_reconverted_while_open_keeps_the_new_caches_overview(tmp_path):
    """A process that opened a cache, which another one then reconverted (the trace changed)
    with its overview, builds its own overview privately: it never puts an overview of the
    old cache at the name of the new one's (which the next opening would build again)."""
    trace = tmp_path / "run.prv"
    synthetic.write(trace, synthetic.Shape(processes=2, threads=2, iterations=4, work_ns=1_000_000))
    with popview.open(trace, cache_dir=tmp_path / "c") as old:
        synthetic.write(trace, synthetic.Shape(processes=3, threads=1, iterations=5, work_ns=2_000_000))
        cache, converted = convert(trace, tmp_path / "c", timeline=True)
        assert converted and cache == old.cache_path
        new_digest = integrity.stored_digest(cache)
        assert new_digest != overview.cache_digest_of(old.reader.h5)
        group = old.reader.timeline()
        assert not os.path.exists(group.file.filename), "the old cache's overview is private"
        data = TimelineData(old)
        assert data.picture(ColourMode("state"), np.arange(data.n_loc), 0, data.t_end, 100).values.size
    with h5py.File(overview.path_of(cache)) as f:
        assert f.attrs[overview.DIGEST_ATTR] == new_digest, "the new cache's overview is still in place"
    assert _files(tmp_path / "c") == sorted([cache.name, overview.path_of(cache).name])


def test_a_cache_deleted_while_open_leaves_no_overview_beside_it(tmp_path):
    trace = tmp_path / "run.prv"
    synthetic.write(trace, synthetic.Shape(processes=2, threads=1, iterations=3, work_ns=1_000_000))
    with popview.open(trace, cache_dir=tmp_path / "c") as exp:
        exp.cache_path.unlink()
        assert "state" in exp.reader.timeline()
    assert _files(tmp_path / "c") == []


def test_an_overview_that_cannot_be_written_does_not_stop_the_opening(trace, tmp_path, monkeypatch):
    """The disk full (the cache's folder and the temporary one): popview.open(timeline=True),
    as the window opens runs, gives the run without a timeline, saying why; the failure is
    kept, not built again at every use (a timeline picture, the next prepare)."""
    import errno

    cache, _ = convert(trace, tmp_path / "c")
    calls = []
    monkeypatch.setattr(overview, "build", full_disk_build(calls))
    with popview.open(trace, cache_dir=tmp_path / "c", timeline=True) as exp:
        assert len(calls) == 2, "the cache's folder, then a private file"
        assert exp.timeline_failure is not None and exp.timeline_failure.errno == errno.ENOSPC
        assert exp.metrics("pop-mpi") is not None                  # the rest of the run is there
        with pytest.raises(OSError, match="No space left"):
            exp.prepare_timeline()
        data = TimelineData(exp)
        pic = data.picture(ColourMode("state"), np.arange(data.n_loc), 0, data.t_end, 100)
        assert pic.source == "none" and "could not be built" in pic.message and "No space left" in pic.message
        assert len(calls) == 2, "not built again"
    assert _files(tmp_path / "c") == [cache.name]


def test_an_overview_that_fails_otherwise_still_fails_the_opening(trace, tmp_path, monkeypatch):
    convert(trace, tmp_path / "c")

    def broken(source, defs, path, progress):
        raise ValueError("a bug")

    monkeypatch.setattr(overview, "build", broken)
    with pytest.raises(ValueError, match="a bug"):
        popview.open(trace, cache_dir=tmp_path / "c", timeline=True)


_FULL_DISK = """
import gc, resource, signal, sys
from popview.cache import companion
companion.IN_MEMORY_BYTES = int(sys.argv[4])      # 0: built in a child process; else here, in memory
companion.check_space = lambda *a: None           # the room was there when the build began
if int(sys.argv[3]):
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), int(sys.argv[3])))
import popview
if sys.argv[5] == "window sums":
    exp = popview.open(sys.argv[1], cache_dir=sys.argv[2])
    try:
        from popview.analysis.focus import Focus
        exp.metrics("pop-mpi", focus=Focus.window(3_000_000, 9_000_000))      # its first use builds them
    except OSError as exc:
        failure = exc
else:
    exp = popview.open(sys.argv[1], cache_dir=sys.argv[2], timeline=True)
    failure = exp.timeline_failure
print("failure", failure.errno, flush=True)
print("message", failure, flush=True)
exp.close()
del exp
gc.collect()
print("done", flush=True)
"""


def _small_tmpfs(folder, size: int) -> bool:
    """A tmpfs of `size` bytes mounted at `folder` (root only: False when it cannot be)."""
    folder.mkdir()
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True).returncode == 0


@pytest.mark.parametrize("part", [overview.PART, window_sums.PART], ids=lambda p: p.title)
@pytest.mark.parametrize("where", ["in a child process", "in memory"])
@pytest.mark.parametrize("disk", ["RLIMIT_FSIZE", "a full tmpfs"])
def test_a_disk_that_fills_during_the_build_does_not_crash_the_process(trace, tmp_path, disk, where, part):
    """Every write past a size fails (a full small tmpfs: ENOSPC; RLIMIT_FSIZE: EFBIG) while the
    overview is built, in the cache's folder and in the private temporary file, the check for
    room before it having passed (others filled the disk since). A write failing inside HDF5
    crashed the process releasing the file's objects (SIGSEGV in H5D_close): the window died
    opening the run. Now the run opens without a timeline, the failure says which file and
    why, and the process ends normally -- for a companion built in a child process (a large
    one) and one built here in memory (a small one)."""
    cache, _ = convert(trace, tmp_path / "e", timeline=True, window_sums=True)
    size = companion.path_of(part, cache).stat().st_size
    room = size // 3
    small = 0 if where == "in a child process" else 1 << 40
    folder = tmp_path / "small"
    if disk == "a full tmpfs":
        if not _small_tmpfs(folder, 16 << 20):
            pytest.skip("no tmpfs can be mounted here (root on Linux only)")
        limit = 0
    else:
        folder.mkdir()
        limit = room                      # a file's size: past it, every write fails
    try:
        cache, _ = convert(trace, folder / "c")
        (folder / "tmp").mkdir()
        if disk == "a full tmpfs":          # filled by others but for a third of the overview's bytes
            # (its user block, 16 KiB, is a hole until it is sealed: a small unsealed private copy
            # of the window sums fitted in a third of the sealed file's size); a page at least, or
            # the temporary folder is not taken (tempfile tries a write there)
            room = max(4096, (size - integrity.USERBLOCK) // 3)
            (folder / "filler").write_bytes(b"\1" * (shutil.disk_usage(folder).free - room))
        env = {**os.environ, "TMPDIR": str(folder / "tmp"), "POPVIEW_PRECOMPILE": "0"}
        run = subprocess.run([sys.executable, "-c", _FULL_DISK, str(trace), str(folder / "c"), str(limit),
                              str(small), part.title], capture_output=True, text=True, env=env, timeout=600)
        lines = run.stdout.splitlines()
        code = 28 if disk == "a full tmpfs" else 27
        assert run.returncode == 0 and lines[0] == f"failure {code}" and lines[-1] == "done", run.stderr[-2000:]
        assert lines[1].startswith(f"message {companion.path_of(part, cache)}: cannot write the {part.title}: "
                                   f"{os.strerror(code)} (nor a private copy in {folder / 'tmp'}: "), lines
        assert sorted(p.name for p in (folder / "c").iterdir()) == [cache.name], "nothing left beside the cache"
        assert list((folder / "tmp").iterdir()) == []
    finally:
        if disk == "a full tmpfs":
            subprocess.run(["umount", str(folder)], check=False)


def test_a_disk_too_full_for_the_overview_is_refused_before_the_build(trace, tmp_path, monkeypatch):
    """Too little room for the overview (about 1.5 times its cache) in the cache's folder and
    the temporary one: refused before any write (a build whose writes fail as the disk fills
    crashes HDF5, above), so the run opens without a timeline and says why."""
    import errno

    from popview.cache import companion

    cache, _ = convert(trace, tmp_path / "c")
    calls = []
    real_build = overview.build
    monkeypatch.setattr(overview, "build", lambda *a: calls.append(a) or real_build(*a))
    room = cache.stat().st_size                 # less than the overview needs
    monkeypatch.setattr(companion.shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(10 * room, 9 * room, room))
    with popview.open(trace, cache_dir=tmp_path / "c", timeline=True) as exp:
        assert calls == [], "no build started"
        assert exp.timeline_failure is not None and exp.timeline_failure.errno == errno.ENOSPC
        assert "cannot write the timeline overview: no room: about " in str(exp.timeline_failure)
        assert exp.metrics("pop-mpi") is not None
    assert _files(tmp_path / "c") == [cache.name]
    monkeypatch.undo()
    with popview.open(trace, cache_dir=tmp_path / "c", timeline=True) as exp:      # room again: built
        assert exp.timeline_failure is None and "state" in exp.reader.timeline()
