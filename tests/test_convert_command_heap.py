"""`popview convert` keeps glibc's freed arrays for the next ones (heap.keep_freed_memory, one
heap for every thread) in its own process, which only converts and exits: no trims between
steps, but with the timeline overview (--timeline, --all: the derived-data process runs beside
it, their joint peak); for OTF2 only one heap for every thread (heap.one_heap); nothing on
Dask. A library's caller (a notebook, the window) never has it set."""
from __future__ import annotations

import pytest

import popview
from popview.cache import heap
from popview.cli import main
from popview.testing import synthetic


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("convert-heap")
    synthetic.write(d / "t.prv", synthetic.Shape(processes=2, threads=1, iterations=5, work_ns=500_000))
    return d / "t.prv"


@pytest.fixture
def kept(monkeypatch):
    calls = []
    monkeypatch.setattr(heap, "keep_freed_memory", lambda trim=True: calls.append(trim))
    monkeypatch.setattr(heap, "one_heap", lambda: calls.append("one heap"))
    return calls


def test_the_convert_command_keeps_freed_memory(trace, tmp_path, kept):
    assert main(["convert", "--force", "--cache-dir", str(tmp_path), str(trace)]) == 0
    assert kept == [False]           # and no step trims: its peaks all come in this process


@pytest.mark.parametrize("flag", ["--timeline", "--all"])
def test_trims_beside_the_derived_data_process(trace, tmp_path, kept, flag):
    assert main(["convert", "--force", flag, "--cache-dir", str(tmp_path), str(trace)]) == 0
    assert kept == [True]           # the steps trim: the two processes' joint peak


def test_not_for_an_otf2_archive(tmp_path, kept):
    """Its decoding threads reuse their memory and its rows stay in memory: kept freed arrays
    only raised its peak (10^7 events: 1089 against 815 MiB)."""
    from popview.testing.otf2_writer import write_trace

    write_trace(tmp_path / "a", ranks=2, iterations=5)
    anchor = tmp_path / "a" / "traces.otf2"
    for path in (anchor, anchor.parent):
        assert main(["convert", "--force", "--cache-dir", str(tmp_path / "c"), str(path)]) == 0
    assert kept == ["one heap", "one heap"]


def test_never_in_a_library_callers_process(trace, tmp_path, kept):
    with popview.open(trace, cache_dir=tmp_path):
        pass
    assert kept == []
