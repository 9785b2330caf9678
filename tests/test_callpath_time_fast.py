"""The call-path focus's intervals (analysis/callpath_time.py) as the straightforward
computation gives them (every thread's segments from the cumulative module, one by one),
computed once per cache file and call path, and without the OpenMP work where a process
has no workers."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis import callpath_time as ct
from popview.analysis.replay import intervals
from popview.analysis.replay.weights import masters
from popview.cache.cumulative import master_segments_of, thread_segments
from popview.testing.synthetic import Shape, write


def _reference(exp, path: str):
    """Each location's intervals of `path`, thread by thread, the masters' visits split by a
    sort on the process (the computation before it was made fast), without the masters'
    waiting time."""
    defs = exp.definitions
    inside = ct.subtree(defs.callpath_parent, ct.callpath_ids(defs, path))
    g = exp.reader.group("cumulative")["master_calls"]
    off = g["cp_offsets"][:]
    cp = np.repeat(np.arange(len(off) - 1, dtype=np.int64), np.diff(off))
    proc_of, begin, end = g["proc"][:], g["begin"][:], g["end"][:]
    grafted = bool(defs.flags.get("threads_grafted"))
    proc, master_of = defs.location_process(), masters(defs)
    out = {}
    for p in range(defs.n_processes):
        rows = np.flatnonzero(proc_of == p)
        segments = master_segments_of({"begin": begin[rows], "end": end[rows], "callpath": cp[rows]})
        for loc in np.flatnonzero(proc == p):
            own = (exp.reader.read("calls", locations=[int(loc)], columns=["begin", "end", "callpath"])
                   if grafted and loc != master_of[p] else None)
            b, e, c = thread_segments(segments, own)
            keep = inside[c]
            out[int(loc)] = intervals.merge_overlaps(np.array([0, int(keep.sum())], np.int64), b[keep], e[keep])[1:]
    return out


def _trace(tmp_path, threads: int):
    shape = Shape(processes=3, threads=threads, iterations=6, work_ns=200_000, rank_weights=(1.0, 1.3, 0.8),
                  serial_fraction=0.1, parallel_regions=2, init_ns=300_000, fini_ns=100_000)
    path = tmp_path / f"run_{threads}.prv"
    write(path, shape)
    return path


@pytest.mark.parametrize("threads", [1, 4])
@pytest.mark.parametrize("path", ["main/timestep", "main/timestep/MPI_Allreduce", "main"])
def test_intervals_as_thread_by_thread(tmp_path, threads, path):
    ct.clear_cache()
    with popview.open(_trace(tmp_path, threads), cache_dir=tmp_path / "cache") as e:
        t = ct.callpath_time(e, path)
        ref = _reference(e, path)
        extra = {loc: (t.extra_begin[t.extra_ptr[loc]:t.extra_ptr[loc + 1]],
                       t.extra_end[t.extra_ptr[loc]:t.extra_ptr[loc + 1]]) for loc in ref}
        for loc, (b, e_) in ref.items():
            got_b, got_e = t.begin[t.ptr[loc]:t.ptr[loc + 1]], t.end[t.ptr[loc]:t.ptr[loc + 1]]
            if len(extra[loc][0]):      # a master's waiting time joins its own
                b, e_ = ct._union([(b, e_), extra[loc]])
            assert np.array_equal(got_b, b) and np.array_equal(got_e, e_), loc
        assert len(ref) == e.definitions.n_locations and len(t.ptr) == len(ref) + 1


def test_pure_mpi_skips_the_openmp_work(tmp_path, monkeypatch):
    """Without OpenMP workers, no master waits for its team: that computation is not run."""
    ct.clear_cache()

    def never(*args, **kwargs):
        raise AssertionError("OpenMP work for a pure MPI run")
    for name in ("_master_waiting", "_Instances", "_worker_part"):
        monkeypatch.setattr(ct, name, never)
    with popview.open(_trace(tmp_path, 1), cache_dir=tmp_path / "cache") as e:
        t = ct.callpath_time(e, "main/timestep")
        assert len(t.begin) == e.definitions.n_locations        # one stretch of iterations each
        assert not len(t.extra_begin)
        assert e.metrics("pop-mpi", "callpath:main/timestep", use_replay=False).value("parallel_efficiency") > 0


def test_computed_once_for_every_model(tmp_path, monkeypatch):
    """Metric trees of several models, each from a freshly opened experiment, compute the
    call path's time once."""
    ct.clear_cache()
    calls = []
    inner = ct._callpath_time
    monkeypatch.setattr(ct, "_callpath_time", lambda *a: calls.append(a[1]) or inner(*a))
    trace = _trace(tmp_path, 4)
    trees = []
    for model in ("pop-mpi", "hybrid-additive", "pop-mpi"):
        with popview.open(trace, cache_dir=tmp_path / "cache") as e:
            trees.append(e.metrics(model, "callpath:main/timestep", use_replay=False).to_dict())
    assert calls == ["main/timestep"]
    assert trees[0] == trees[2]
