"""The window sums (popview.cache.window_sums): a default conversion keeps the cumulative
sums' whole-run part in the cache and builds no rows; the first time window builds them
from the cache into a companion file equal to what the eager conversion wrote, tied to its
cache, rebuilt when damaged or foreign, never left half-written; metrics are the same."""
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
from popview.analysis.focus import Focus
from popview.cache import Cancelled, Progress, cumulative, integrity, location, window_sums, writer
from popview.cache.reader import Reader
from popview.experiment import convert
from popview.testing import synthetic
from popview.testing.faults import full_disk_build

ROWS = ("seg", "ck_row", "ck_begin", "ck_cum", "ck_ctr")          # what the companion holds
WHOLE = ("totals", "ctr_totals", "profile", "master_calls", "kind")   # what the cache keeps


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("sums")
    synthetic.write(d / "h.prv", synthetic.Shape(processes=2, threads=2, iterations=5, work_ns=1_000_000,
                                                 rank_weights=(1.0, 1.4), parallel_regions=2))
    return d / "h.prv"


@pytest.fixture(scope="module")
def other(tmp_path_factory):
    d = tmp_path_factory.mktemp("other")
    synthetic.write(d / "o.prv", synthetic.Shape(processes=3, threads=1, iterations=3, work_ns=1_000_000))
    return d / "o.prv"


def _datasets(group, prefix: str = "") -> dict:
    found = {f"{prefix}@": {k: str(v) for k, v in group.attrs.items()}}
    for name, item in group.items():
        if isinstance(item, h5py.Group):
            found.update(_datasets(item, f"{prefix}{name}/"))
        else:
            found[prefix + name] = item[()]
    return found


def _assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys() and a
    for name, value in a.items():
        if name.endswith("@"):
            assert value == b[name], name
        else:
            assert value.dtype == b[name].dtype and value.shape == b[name].shape, name
            assert np.array_equal(value, b[name], equal_nan=value.dtype.kind == "f"), name


def _eager(trace, folder, monkeypatch):
    """A cache as conversions wrote it before the window sums had a companion: the
    cumulative group whole (rows and whole-run part) inside the cache, without `kind`
    (the replay then reads seg's word column)."""
    build, create = cumulative.build, cumulative._Builder.create

    def old_create(self, dst):
        g, seg, kind = create(self, dst)
        del g["kind"]
        return g, seg, None

    with monkeypatch.context() as m:
        m.setattr(writer, "SUMS_BUILDER", "none")       # the sums built by build(), after the call paths
        m.setattr(cumulative, "build", lambda *a, **k: build(*a, **{**k, "rows": True}))
        m.setattr(cumulative._Builder, "create", old_create)
        cache, _ = convert(trace, folder)
    return cache


def _files(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


FOCI = [Focus.whole(), Focus("auto"), Focus.on_callpath("main/timestep"), Focus.window(3_000_000, 9_000_000)]


def test_default_conversion_builds_no_rows_and_a_window_builds_the_eager_ones(trace, tmp_path, monkeypatch):
    eager = _eager(trace, tmp_path / "eager", monkeypatch)
    lazy, _ = convert(trace, tmp_path / "lazy")
    with h5py.File(lazy) as f:
        g = f["cumulative"]
        assert all(name in g for name in WHOLE) and not any(name in g for name in ROWS)
    assert not window_sums.path_of(lazy).exists()
    with popview.open(trace, cache_dir=tmp_path / "lazy") as exp:
        assert not exp.window_sums_prepared
        for model in ("pop-mpi", "hybrid-additive", "critical-path"):      # the replay too
            exp.metrics(model, focus=Focus.whole())
            exp.metrics(model, focus=Focus.on_callpath("main/timestep"))
        assert not window_sums.path_of(lazy).exists(), "whole-run and call-path metrics need no rows"
        exp.metrics(focus=Focus.window(3_000_000, 9_000_000), use_replay=False)
        assert exp.window_sums_prepared and window_sums.path_of(lazy).exists()
    assert _files(tmp_path / "lazy") == sorted([lazy.name, window_sums.path_of(lazy).name]), "nothing else left"
    with h5py.File(eager) as e, h5py.File(lazy) as c, h5py.File(window_sums.path_of(lazy)) as s:
        whole_e = _datasets(e["cumulative"])
        rows = {k: v for k, v in whole_e.items() if k.split("/")[0] in ROWS}
        assert rows.keys() == set(ROWS)
        _assert_same(rows | {"@": whole_e["@"]}, _datasets(s["cumulative"]))
        whole_c = _datasets(c["cumulative"])
        assert np.array_equal(whole_c.pop("kind"), (whole_e["seg"][:, 1] & 0xFFFF).astype(np.uint16))
        _assert_same({k: v for k, v in whole_e.items() if k not in rows and k != "kind"}, whole_c)
        assert s.attrs[window_sums.companion.DIGEST_ATTR] == integrity.stored_digest(lazy)


def test_metrics_are_the_same_for_every_focus_and_model(trace, tmp_path, monkeypatch):
    eager = _eager(trace, tmp_path / "eager", monkeypatch)
    with popview.open(trace, cache_dir=tmp_path / "eager") as a, popview.open(trace, cache_dir=tmp_path / "lazy") as b:
        assert a.cache_path == eager and a.window_sums_prepared, "the old caches' rows are read in the cache"
        for focus in FOCI + [Focus("iterations", callpath="main/timestep", first=1, last=3)]:
            for model in ("pop-mpi", "hybrid-additive", "hybrid-multiplicative", "critical-path"):
                assert a.metrics(model, focus).to_dict() == b.metrics(model, focus).to_dict(), (focus, model)
    assert not window_sums.path_of(eager).exists()


def _companion(trace, folder):
    cache, _ = convert(trace, folder, window_sums=True)
    return cache, window_sums.path_of(cache)


def _rebuilt(cache, companion) -> None:
    before = os.stat(companion).st_ino if companion.exists() else None
    with Reader(cache) as reader:
        group = reader.window_sums()
        assert "seg" in group and reader._sums.attrs["cache_digest"] == integrity.stored_digest(cache)
    assert os.stat(companion).st_ino != before, "built again, not reused"
    with h5py.File(companion) as f:
        integrity.verify(f)


def test_a_damaged_companion_is_rebuilt_never_used(trace, tmp_path, caplog):
    cache, companion = _companion(trace, tmp_path / "c")
    with h5py.File(companion) as f:
        at = f["cumulative/seg"].id.get_chunk_info(0).byte_offset + 10
    with open(companion, "r+b") as f:          # a byte of the rows' first chunk
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0xFF]))
    _rebuilt(cache, companion)
    assert "window sums damaged" in caplog.text or "window sums unreadable" in caplog.text


def test_a_foreign_or_truncated_companion_is_rebuilt(trace, other, tmp_path):
    cache, companion = _companion(trace, tmp_path / "c")
    _, foreign = _companion(other, tmp_path / "o")
    shutil.copyfile(foreign, companion)                # another cache's
    _rebuilt(cache, companion)
    with open(companion, "r+b") as f:
        f.truncate(companion.stat().st_size // 2)
    _rebuilt(cache, companion)


def test_a_reconversion_keeps_the_companion_of_the_same_cache_only(trace, tmp_path):
    """The same trace converted again gives the same cache (its digest): its window sums stay;
    the companion of another cache goes (a changed trace: tests/test_timeline_overview.py)."""
    cache, companion = _companion(trace, tmp_path / "c")
    before = companion.stat().st_ino
    convert(trace, tmp_path / "c", force=True)
    assert companion.stat().st_ino == before
    with h5py.File(companion, "r+") as f:                 # as if another cache's
        f.attrs[window_sums.companion.DIGEST_ATTR] = "0" * 32
    convert(trace, tmp_path / "c", force=True)
    assert not companion.exists()


def test_a_cancelled_build_leaves_nothing(trace, tmp_path, monkeypatch):
    cache, _ = convert(trace, tmp_path / "c")
    monkeypatch.setattr(cumulative, "BUDGET_ROWS", 1)      # a group a process: cancelled after the first
    cancel = threading.Event()
    steps = []

    def progress(fraction, _text):
        steps.append(fraction)
        cancel.set()
    with Reader(cache) as reader:
        with pytest.raises(Cancelled):
            reader.window_sums(Progress(progress, cancel))
        assert steps == [0.0] and not reader.window_sums_open()
    assert _files(tmp_path / "c") == [cache.name], "no companion, no scratch folder, no lock"
    with Reader(cache) as reader:                      # and the next use builds it
        assert "seg" in reader.window_sums()


def test_the_build_reports_each_process_in_one_group(trace, tmp_path):
    """The processes of a run usually fit one group of the row budget: the build reports (and
    sees a cancel) at each process, not once at 0 % for all (the window's bar stood at 0 % for
    the whole build of a 143 MB trace, its Cancel seen only at the end)."""
    cache, _ = convert(trace, tmp_path / "c")
    seen = []
    with Reader(cache) as reader:
        reader.window_sums(Progress(lambda fraction, text: seen.append((fraction, text))))
    sums = sorted({f for f, text in seen if text == "cumulative sums"})
    assert len(sums) >= 2 and sums[-1] > 0, f"one report per process (2 here): {seen}"


def test_a_folder_that_cannot_be_written_gets_private_sums(trace, tmp_path, monkeypatch):
    """A shared, read-only cache directory: built for this process, in a temporary file."""
    import errno

    from popview.cache import scratch

    cache, _ = convert(trace, tmp_path / "c")

    def refused(self, waiting=None):
        raise PermissionError(errno.EACCES, "Permission denied", str(self.path))

    monkeypatch.setattr(scratch.CacheLock, "acquire", refused)
    with popview.open(trace, cache_dir=tmp_path / "c") as exp:
        assert "seg" in exp.reader.window_sums()
        assert not os.path.exists(exp.reader._sums.filename)
        assert exp.metrics(focus=Focus.window(3_000_000, 9_000_000), use_replay=False).nodes()
    assert _files(tmp_path / "c") == [cache.name]


def test_cli_convert_all_builds_every_companion(trace, tmp_path):
    out = subprocess.run([sys.executable, "-m", "popview", "convert", "--all", "--cache-dir", str(tmp_path), str(trace)],
                         capture_output=True, text=True, env={**os.environ, "POPVIEW_PRECOMPILE": "0"})
    assert out.returncode == 0, out.stderr
    assert "timeline overview and window sums" in out.stdout
    cache = next(p for p in tmp_path.iterdir() if p.name.endswith(location.SUFFIX))
    assert window_sums.path_of(cache).exists()
    assert location.overview_path(cache).exists()


def test_a_cache_deleted_or_reconverted_while_open_gets_private_sums(tmp_path):
    """The companion mechanism's guard (companion.obtain), for the window sums too: a stale
    reader never puts its sums at the name of another cache's."""
    trace = tmp_path / "run.prv"
    synthetic.write(trace, synthetic.Shape(processes=2, threads=2, iterations=4, work_ns=1_000_000))
    with popview.open(trace, cache_dir=tmp_path / "c") as old:
        synthetic.write(trace, synthetic.Shape(processes=3, threads=1, iterations=5, work_ns=2_000_000))
        cache, converted = convert(trace, tmp_path / "c", window_sums=True)
        assert converted and cache == old.cache_path
        assert "seg" in old.reader.window_sums()
        assert not os.path.exists(old.reader._sums.filename), "the old cache's sums are private"
    with h5py.File(window_sums.path_of(cache)) as f:
        assert f.attrs["cache_digest"] == integrity.stored_digest(cache), "the new cache's sums stay in place"
    with popview.open(trace, cache_dir=tmp_path / "c") as exp:
        exp.cache_path.unlink()
        window_sums.path_of(exp.cache_path).unlink()
        assert "seg" in exp.reader.window_sums()
    assert _files(tmp_path / "c") == []


def test_small_tables_read_whole_give_the_sums_read_location_by_location(trace, tmp_path, monkeypatch):
    """cumulative.WHOLE_ROWS: tables that small are read a column at once, not a location's slice
    at a time; the cumulative group and the window sums are the same either way."""
    from popview.testing.otf2_writer import write_openmp_trace

    write_openmp_trace(tmp_path / "omp", ranks=2, threads=3, iterations=3)
    for source in (trace, tmp_path / "omp" / "traces.otf2"):
        found = []
        for whole in (0, cumulative.WHOLE_ROWS):
            monkeypatch.setattr(cumulative, "WHOLE_ROWS", whole)
            folder = tmp_path / f"{source.stem}-{whole}"
            cache, _ = convert(source, folder)
            with Reader(cache) as r:
                assert "seg" in r.window_sums()
                found.append((_datasets(r.h5["cumulative"]), _datasets(r._sums["cumulative"])))
        for a, b in zip(*found):
            _assert_same(a, b)


def test_the_window_kernel_is_in_the_ahead_of_time_list(tmp_path, monkeypatch):
    """A window's sums past a checkpoint must not import numba where the module of kernels
    compiled ahead of time exists: its list holds slab_sums with the types it is called with
    (the recorded scenarios' small trace does not reach it)."""
    import json

    from popview import aot
    from popview.analysis import window_index

    listed = {(m, f, aot._frozen(args)) for m, f, args in aot.entries(json.loads(aot.MANIFEST.read_text())["scenarios"])}
    called = []
    real = window_index.slab_sums
    monkeypatch.setattr(window_index, "slab_sums", lambda *a: called.append(aot.signature_of(a)) or real(*a))
    synthetic.write(tmp_path / "t.prv", synthetic.Shape(processes=2, threads=2, iterations=40, work_ns=200_000,
                                                        rank_weights=(1.0, 1.2), serial_fraction=0.1,
                                                        parallel_regions=2, init_ns=300_000, fini_ns=100_000))
    with popview.open(tmp_path / "t.prv", cache_dir=tmp_path / "cache") as e:
        t_end = e.definitions.t_end
        assert e.metrics("pop-mpi", f"window:{t_end * 0.3 / 1e9}:{t_end * 0.6 / 1e9}", use_replay=False)
    assert called
    for types in set(called):
        assert ("popview.analysis.window_index", "slab_sums", types) in listed, types


def test_a_failed_build_is_remembered_until_asked_again(trace, tmp_path, monkeypatch, capsys):
    """Window sums that cannot be written (a full disk, the cache's folder and the temporary
    one): the first time-window focus fails saying why, and the next ones -- of a script, or
    of one `popview metrics` or `report` computing several models and foci -- fail with the
    same reason at once instead of paying the failed build again (a few seconds each at 1 GB);
    Experiment.prepare_window_sums (the Advisor's "try again") builds them again, and once the
    disk has room the foci are computed."""
    import errno

    from popview.cache.errors import CompanionFailed

    cache, _ = convert(trace, tmp_path / "c")
    calls = []
    real_build = window_sums.build
    monkeypatch.setattr(window_sums, "build", full_disk_build(calls))
    window = Focus.window(3_000_000, 9_000_000)
    with popview.open(trace, cache_dir=tmp_path / "c") as exp:
        failures = []
        for model, focus in [("pop-mpi", window), ("hybrid-additive", window), ("pop-mpi", Focus.parse("auto")),
                             ("pop-mpi", Focus.window(1_000_000, 2_000_000))]:
            with pytest.raises(CompanionFailed) as failed:
                exp.metrics(model, focus=focus)
            failures.append(str(failed.value))
        assert len(calls) == 2, "one build: the cache's folder, then a private file"
        assert len(set(failures)) == 1 and "cannot write the window sums: No space left on device" in failures[0]
        assert failures[0].startswith(str(window_sums.path_of(cache)))
        assert exp.window_sums_failure is not None and exp.window_sums_failure.errno == errno.ENOSPC
        assert exp.metrics("pop-mpi") is not None                     # the whole run reads none of them
        with pytest.raises(CompanionFailed):
            exp.prepare_window_sums()                                  # asked again: built again
        assert len(calls) == 4
        monkeypatch.setattr(window_sums, "build", real_build)          # room again
        exp.prepare_window_sums()
        assert exp.window_sums_failure is None
        assert exp.metrics("pop-mpi", focus=window) is not None
