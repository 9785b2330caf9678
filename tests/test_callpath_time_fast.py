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
    inner = ct._callpath_extent
    monkeypatch.setattr(ct, "_callpath_extent", lambda *a: calls.append(a[1]) or inner(*a))
    trace = _trace(tmp_path, 4)
    trees = []
    for model in ("pop-mpi", "hybrid-additive", "pop-mpi"):
        with popview.open(trace, cache_dir=tmp_path / "cache") as e:
            trees.append(e.metrics(model, "callpath:main/timestep", use_replay=False).to_dict())
    assert calls == ["main/timestep"]
    assert trees[0] == trees[2]


def _same_extent(e, path):
    """callpath_extent's R and masters' waiting time are callpath_time's."""
    full = ct._callpath_time(e, path, None)
    ext = ct._callpath_extent(e, path)
    assert ext.runtime_ns == full.runtime_ns, path
    for f in ("extra_ptr", "extra_begin", "extra_end"):
        assert np.array_equal(getattr(ext, f), getattr(full, f)), (path, f)
    return full


@pytest.mark.parametrize("gaps", [ct.GAPS, 0])       # the workers' rows read in the gaps; read whole
@pytest.mark.parametrize("threads", [1, 4])
def test_extent_as_callpath_time(tmp_path, monkeypatch, threads, gaps):
    monkeypatch.setattr(ct, "GAPS", gaps)
    ct.clear_cache()
    with popview.open(_trace(tmp_path, threads), cache_dir=tmp_path / "cache") as e:
        defs = e.definitions
        for path in sorted({defs.callpath_name(c) for c in range(len(defs.callpath_parent))}):
            _same_extent(e, path)


def test_extent_reads_workers_only_outside_their_master(tmp_path, monkeypatch):
    """The master enters main/timestep once: its workers' visits are read before and after
    that visit only, not whole, and R and the masters' waiting time are those of the intervals."""
    ct.clear_cache()
    slabs = []
    shape = Shape(processes=2, threads=3, iterations=3000, work_ns=20_000, rank_weights=(1.0, 1.3),
                  serial_fraction=0.1, parallel_regions=2, init_ns=300_000, fini_ns=100_000)
    write(tmp_path / "long.prv", shape)      # more rows per worker than a step of the cache's sparse index
    with popview.open(tmp_path / "long.prv", cache_dir=tmp_path / "cache") as e:
        real = e.reader.row_range

        def row_range(table, loc, t0=None, t1=None):
            assert table == "calls" and (t0 is not None or t1 is not None), "a worker's visits read whole"
            lo, hi = real(table, loc, t0, t1)
            slabs.append(hi - lo)
            return lo, hi
        monkeypatch.setattr(e.reader, "row_range", row_range)
        monkeypatch.setattr(ct, "_cache_calls", lambda *a: pytest.fail("a worker's visits read whole"))
        tree = e.metrics("pop-mpi", "callpath:main/timestep", use_replay=False)
        assert tree.value("parallel_efficiency") > 0
        workers = e.definitions.n_locations - e.definitions.n_processes
        assert len(slabs) == 2 * workers and sum(slabs) < e.reader.count("calls") / 4    # a sparse step each
        monkeypatch.undo()
        assert _same_extent(e, "main/timestep").runtime_ns > 0


def test_extent_as_callpath_time_on_real_traces(shared_traces, cache_dir):
    """On traces of Extrae and Score-P (OpenMP workers grafted, masters waiting for their team)."""
    waited = 0
    for trace in ("popview-heat/extrae/hyb_2x2/hyb_2x2.prv", "popview-heat/scorep/hyb_2x2/traces.otf2"):
        ct.clear_cache()
        with popview.open(shared_traces / trace, cache_dir=cache_dir) as e:
            defs = e.definitions
            for path in sorted({defs.callpath_name(c) for c in range(len(defs.callpath_parent))}):
                waited += len(_same_extent(e, path).extra_begin) > 0
    assert waited > 0
