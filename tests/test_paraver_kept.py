"""A Paraver trace's staged rows kept in memory instead of spilled (stream.KEEP_TEXT_BYTES,
cache/kept.py): nothing goes through the spill files, and the cache is the spilled one,
dataset for dataset; a larger trace is spilled, and one whose rows pass the budget while
it is parsed has what was kept written out and the rest spilled."""
from __future__ import annotations

import gzip
import shutil

import pytest

import popview
from popview.cache import kept
from popview.readers.paraver import stream
from popview.testing import synthetic
from tests.cachecompare import assert_same_cache


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("paraver-kept")
    synthetic.write(d / "t.prv", synthetic.Shape(processes=4, threads=2, iterations=30, work_ns=1_000_000))
    return d / "t.prv"


def _convert(trace, folder):
    with popview.open(trace, cache_dir=folder) as exp:
        return exp.cache_path, list(exp.definitions.warnings)


def _kept_and_spilled(trace, tmp_path, monkeypatch, spill_writes):
    kept, warnings_kept = _convert(trace, tmp_path / "kept")
    assert spill_writes == [], f"spilled: {sorted(set(spill_writes))}"
    with monkeypatch.context() as patch:
        patch.setattr(stream, "KEEP_TEXT_BYTES", 0)
        spilled, warnings_spilled = _convert(trace, tmp_path / "spilled")
    assert {"states", "events"} <= set(spill_writes)
    assert warnings_kept == warnings_spilled
    assert_same_cache(kept, spilled)


def test_rows_are_kept_and_give_the_spilled_cache(trace, tmp_path, monkeypatch, spill_writes):
    _kept_and_spilled(trace, tmp_path, monkeypatch, spill_writes)


@pytest.mark.parametrize("name", ["popview-heat/extrae/hyb_2x2/hyb_2x2.prv",                  # hybrid Extrae
                                  "pypop/mpi/epoch_example_traces/epoch_4proc.prv.gz",        # EPOCH, compressed
                                  "profet-paraver/lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv"])
def test_real_traces_kept_give_the_spilled_cache(shared_traces, tmp_path, monkeypatch, spill_writes, name):
    trace = shared_traces / name
    if not trace.exists():
        pytest.skip(f"{trace} is missing")
    _kept_and_spilled(trace, tmp_path, monkeypatch, spill_writes)


def test_a_larger_trace_is_spilled(trace, tmp_path, monkeypatch, spill_writes):
    monkeypatch.setattr(stream, "KEEP_TEXT_BYTES", trace.stat().st_size - 1)
    _convert(trace, tmp_path / "c")
    assert {"states", "events"} <= set(spill_writes)


def test_a_compressed_trace_counts_its_text(trace, tmp_path, monkeypatch, spill_writes):
    gz = tmp_path / "t.prv.gz"
    with open(trace, "rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    for side in (".pcf", ".row"):
        shutil.copy(trace.with_suffix(side), tmp_path / f"t{side}")
    assert stream._text_bytes(gz) == gz.stat().st_size * stream.GZ_RATIO
    monkeypatch.setattr(stream, "KEEP_TEXT_BYTES", gz.stat().st_size * stream.GZ_RATIO - 1)
    _convert(gz, tmp_path / "c")
    assert spill_writes


def test_rows_past_the_budget_are_written_out_then_spilled(trace, tmp_path, monkeypatch, spill_writes):
    """The budget passed while the trace is parsed (its text said too little): what was kept
    goes into the spill files, the rest follows there, and the cache is the same."""
    monkeypatch.setattr(stream, "BLOCK", 64 << 10)              # many chunks: the budget passes midway
    monkeypatch.setattr(stream, "KEEP_ROWS_BYTES", trace.stat().st_size // 4)
    passed, _ = _convert(trace, tmp_path / "passed")
    assert {"states", "events"} <= set(spill_writes)
    monkeypatch.setattr(stream, "KEEP_TEXT_BYTES", 0)
    spilled, _ = _convert(trace, tmp_path / "spilled")
    assert_same_cache(passed, spilled)


def test_written_out_for_the_timeline_overview(trace, tmp_path, monkeypatch, spill_writes):
    """The reader keeps the rows whatever the writer builds; when the writer starts a
    derived-data process (the timeline overview's, which reads files) it writes what was
    kept out (kept.Budget.give_up), and the cache is that of the trace spilled."""
    from popview.cache import sidecar

    if not sidecar.available():
        pytest.skip("no side process on this platform")
    monkeypatch.setattr(sidecar, "MIN_ROWS", 0)
    gave_up, real = [], kept.Budget.give_up
    monkeypatch.setattr(kept.Budget, "give_up", lambda self: gave_up.append(self.used) or real(self))
    with popview.open(trace, cache_dir=tmp_path / "kept", timeline=True) as exp:
        written_out = exp.cache_path
    assert len(gave_up) == 1 and gave_up[0] > 0
    assert {"states", "events"} <= set(spill_writes)
    monkeypatch.setattr(stream, "KEEP_TEXT_BYTES", 0)
    with popview.open(trace, cache_dir=tmp_path / "spilled", timeline=True) as exp:
        spilled = exp.cache_path
    assert_same_cache(written_out, spilled)


def test_counters_summed_where_the_events_are_kept(trace, tmp_path, monkeypatch, spill_writes):
    """The cumulative sums read the counters of events kept in memory run by run, in place
    (cumulative._kept_pieces): many runs a location (small blocks), each location read as
    its slices, and the sums those of the events read from the spill files."""
    from popview.cache import cumulative

    monkeypatch.setattr(cumulative, "WHOLE_ROWS", 0)            # a location's slices, not whole columns
    monkeypatch.setattr(stream, "BLOCK", 64 << 10)              # a location's events in many runs
    runs, real = [], cumulative._kept_pieces
    monkeypatch.setattr(cumulative, "_kept_pieces", lambda *a: runs.append(r := real(*a)) or r)
    kept_cache, _ = _convert(trace, tmp_path / "kept")
    assert runs and all(r is not None for r in runs) and max(len(r) for r in runs) > 1
    monkeypatch.setattr(stream, "KEEP_TEXT_BYTES", 0)
    runs.clear()
    spilled, _ = _convert(trace, tmp_path / "spilled")
    assert runs and all(r is None for r in runs)
    assert_same_cache(kept_cache, spilled)
