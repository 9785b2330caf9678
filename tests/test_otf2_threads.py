"""OpenMP teams and tasks in OTF2 archives: worker threads' visits hang below
the master's fork call path (as Score-P and Cube show them), and an explicit
task keeps one call stack of its own across threads, below the root TASKS."""
from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

import popview
from popview.model.states import OPENMP_SYNC
from popview.readers.otf2 import events
from popview.testing.otf2_writer import (BARRIER, FOR, PARALLEL, TASK, TASKWAIT, write_nested_trace,
                                         write_openmp_trace, write_task_trace)

from tests.otf2_print import normalise, otf2_print_counts

RANKS, THREADS, ITERATIONS = 2, 3, 3
FORK_PATH = "main/foo/" + PARALLEL


@pytest.fixture(scope="module", params=["generic", "openmp-1.x"])
def openmp(request, tmp_path_factory):
    """A hybrid archive: ThreadFork/TeamBegin/TeamEnd/Join, or OmpFork/OmpJoin only."""
    folder = tmp_path_factory.mktemp("omp") / "run"
    written = write_openmp_trace(folder, RANKS, THREADS, ITERATIONS, generic=request.param == "generic")
    with popview.open(folder, cache_dir=tmp_path_factory.mktemp("cache")) as exp:
        yield written, exp


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    written = write_task_trace(tmp_path_factory.mktemp("tasks") / "run")
    with popview.open(written.anchor, cache_dir=tmp_path_factory.mktemp("cache")) as exp:
        yield written, exp


def _visits(exp) -> list[tuple[int, int, int, str]]:
    """(location, begin, end, call path) of every visit."""
    c = exp.reader.read("calls")
    name = exp.definitions.callpath_name
    return [(int(loc), int(b), int(e), name(int(cp))) for loc, b, e, cp in
            zip(c["loc"], c["begin"], c["end"], c["callpath"])]


def _exclusive(exp) -> dict[tuple[int, str], int]:
    """Time of each (location, call path) in which it is the innermost open visit."""
    out: dict = defaultdict(int)
    by_loc = defaultdict(list)
    for loc, b, e, path in _visits(exp):
        by_loc[loc].append((b, -e, path))
    for loc, rows in by_loc.items():
        points = sorted({t for b, ne, _ in rows for t in (b, -ne)})
        for lo, hi in zip(points[:-1], points[1:]):
            inside = [(b, path) for b, ne, path in rows if b <= lo and -ne >= hi]
            if inside:
                out[loc, max(inside)[1]] += hi - lo
    return out


def _inclusive(exclusive: dict, loc: int, path: str) -> int:
    return sum(v for (lc, p), v in exclusive.items() if lc == loc and (p == path or p.startswith(path + "/")))


# ------------------------------------------------------------------ OpenMP teams

def test_record_counts_equal_otf2_print(openmp):
    written, exp = openmp
    ours = Counter({normalise(k): v for k, v in exp.definitions.flags["otf2_event_counts"].items()})
    assert ours == Counter({normalise(k): v for k, v in written.events.items()})
    assert ours == otf2_print_counts(written.anchor)


def test_one_tree_with_workers_below_the_fork(openmp):
    _, exp = openmp
    visits = _visits(exp)
    assert {path.split("/")[0] for *_, path in visits} == {"main"}
    workers = [i for i, loc in enumerate(exp.definitions.locations) if loc.thread > 0]
    for w in workers:
        paths = Counter(path for loc, _, _, path in visits if loc == w)
        # Cube: a worker visits the parallel region and below, never its ancestors
        assert paths == {FORK_PATH: ITERATIONS, f"{FORK_PATH}/{FOR}": ITERATIONS,
                         f"{FORK_PATH}/{FOR}/kernel": ITERATIONS, f"{FORK_PATH}/{BARRIER}": ITERATIONS}
    assert not exp.definitions.warnings


def test_worker_times_as_written(openmp):
    _, exp = openmp
    d = exp.definitions
    durations: dict = defaultdict(int)
    for loc, b, e, path in _visits(exp):
        durations[d.locations[loc].thread, path] += e - b
    for k in range(1, THREADS):
        assert durations[k, FORK_PATH] == RANKS * ITERATIONS * 595
        assert durations[k, f"{FORK_PATH}/{FOR}"] == RANKS * ITERATIONS * (388 + 10 * k)
        assert durations[k, f"{FORK_PATH}/{FOR}/kernel"] == RANKS * ITERATIONS * 280
        assert durations[k, f"{FORK_PATH}/{BARRIER}"] == RANKS * ITERATIONS * (200 - 10 * k)
    assert durations[0, FORK_PATH] == RANKS * ITERATIONS * 608


def test_inclusive_times_add_up_per_location(openmp):
    _, exp = openmp
    exclusive = _exclusive(exp)
    rows: dict = defaultdict(int)
    for loc, b, e, path in _visits(exp):
        rows[loc, path] += e - b
    for (loc, path), total in rows.items():
        assert _inclusive(exclusive, loc, path) == total, (loc, path)
    for loc, location in enumerate(exp.definitions.locations):
        if location.thread > 0:   # the worker's whole time in teams is main's and foo's on that location
            assert _inclusive(exclusive, loc, "main") == _inclusive(exclusive, loc, "main/foo") == \
                rows[loc, FORK_PATH] == ITERATIONS * 595


def test_profile_shows_worker_time_below_the_parallel_region(openmp):
    _, exp = openmp
    prof = exp.profile()
    cp = prof.find(FORK_PATH)
    for loc, location in enumerate(exp.definitions.locations):
        inside = prof.by_location("time", cp, inclusive=True)[loc] * 1e9
        # the region runs from the master's fork, 2 ns before its enter, to its join, 10 ns after its leave
        own, master = ITERATIONS * (595 if location.thread else 608), ITERATIONS * 620
        assert own - 1e-3 <= inside <= master + 1e-3


def test_cube_shows_workers_from_the_parallel_region_down(shared_traces, cache_dir):
    """The convention above, as Score-P's profile of BT-MZ 8x6 shows it (the same
    experiment's trace holds definitions only): every worker visits each parallel
    region as often as its master, and none of the region's ancestors."""
    cube = shared_traces / "archer2-scalasca/scorep_bt-mz_C_8x6_trace/profile.cubex"
    with popview.open(cube, cache_dir=cache_dir) as exp:
        prof = exp.profile()
        visits = prof.matrix("visits")
        thread = exp.definitions.location_thread()
        process = exp.definitions.location_process()
        regions = [prof.regions[r] for r in prof.callpath_region]
        parallel = [cp for cp, r in enumerate(regions) if r.paradigm == "openmp" and r.role == "parallel"]
        ancestors = {a for cp in parallel for a in _ancestors(prof.callpath_parent, cp)}
        assert len(parallel) == 22 and ancestors
        master = np.flatnonzero(thread == 0)[np.searchsorted(process[thread == 0], process)]
        for cp in parallel:
            assert (visits[cp] == visits[cp][master]).all() and (visits[cp] > 0).all()
        assert not visits[sorted(ancestors)][:, thread > 0].any()


def _ancestors(parent, cp):
    while parent[cp] >= 0:
        cp = parent[cp]
        yield cp


def test_nested_team_hangs_below_the_inner_fork(tmp_path):
    written = write_nested_trace(tmp_path / "run")
    with popview.open(written.anchor, cache_dir=tmp_path / "cache") as exp:
        inner = f"main/{PARALLEL}/foo/{PARALLEL}"
        assert [v for v in _visits(exp) if v[0] == 2] == [(2, 24, 49, inner), (2, 25, 45, f"{inner}/kernel")]
        assert (1, 23, 50, inner) in _visits(exp)
        assert not exp.definitions.warnings


# ------------------------------------------------------------------ tasks

def test_task_keeps_its_stack_across_threads(tasks):
    _, exp = tasks
    task = f"TASKS/{TASK}"
    assert sorted(v for v in _visits(exp) if v[3].startswith("TASKS")) == sorted([
        (1, 30, 41, "TASKS"), (1, 30, 41, task), (1, 32, 38, f"{task}/work"), (1, 40, 41, f"{task}/{TASKWAIT}"),
        (2, 50, 62, "TASKS"), (2, 50, 62, task), (2, 50, 55, f"{task}/{TASKWAIT}"), (2, 56, 60, f"{task}/work")])
    exclusive = _exclusive(exp)
    assert [exclusive[loc, task] for loc in (1, 2)] == [4, 3]
    assert [exclusive[loc, f"{task}/work"] for loc in (1, 2)] == [6, 4]
    assert [exclusive[loc, f"{task}/{TASKWAIT}"] for loc in (1, 2)] == [1, 5]
    assert sum(_inclusive(exclusive, loc, "TASKS") for loc in range(3)) == 11 + 12
    assert not exp.definitions.warnings


def test_profile_has_the_task_tree(tasks):
    """The task's pieces on threads 1 and 2 reach the profile below TASKS, with their times."""
    _, exp = tasks
    prof = exp.profile()
    task = f"TASKS/{TASK}"
    inclusive = prof.by_location("time", prof.find("TASKS"), inclusive=True) * 1e9
    assert np.allclose(inclusive[[1, 2]], [11, 12], atol=1e-6)
    work = prof.by_location("time", prof.find(f"{task}/work"), inclusive=False) * 1e9
    assert np.allclose(work[[1, 2]], [6, 4], atol=1e-6)


def test_threads_keep_their_own_stacks_around_tasks(tasks):
    _, exp = tasks
    visits = [v for v in _visits(exp) if not v[3].startswith("TASKS")]
    barrier = f"main/{PARALLEL}/{BARRIER}"
    assert [v for v in visits if v[0] > 0] == [(1, 12, 86, f"main/{PARALLEL}"), (1, 20, 85, barrier),
                                               (2, 12, 89, f"main/{PARALLEL}"), (2, 20, 88, barrier)]
    exclusive = _exclusive(exp)
    assert exclusive[1, barrier] == 65 - 11 and exclusive[2, barrier] == 68 - 12   # the task's time is not the barrier's


def test_resumed_task_state_is_its_innermost_region(tasks):
    _, exp = tasks
    s = exp.reader.read("states")
    on_2 = (s["loc"] == 2) & (s["begin"] <= 50) & (s["end"] >= 55)
    assert s["state"][on_2].tolist() == [OPENMP_SYNC]    # in the task's taskwait, restored from thread 1


def test_bindings_path_links_alike(tmp_path, monkeypatch):
    written = write_task_trace(tmp_path / "run")
    tables = {}
    for use in (True, False):
        monkeypatch.setattr(events, "USE_DECODER", use)
        with popview.open(written.anchor, cache_dir=tmp_path / str(use), force=True) as exp:
            tables[use] = {t: exp.reader.read(t) for t in ("events", "states", "calls")}
            tables[use]["names"] = [exp.definitions.callpath_name(i) for i in range(len(exp.definitions.callpath_parent))]
    assert tables[True]["names"] == tables[False]["names"]
    for t in ("events", "states", "calls"):
        for name, values in tables[True][t].items():
            np.testing.assert_array_equal(values, tables[False][t][name], err_msg=f"{t}.{name}")


def test_waiting_locations_are_decoded_once_and_map_alike(tmp_path, monkeypatch):
    """The workers of a small archive keep their first pass's records for the second (each
    location decoded once); with nothing kept (a large archive) they are decoded again, and
    the tables are the same."""
    from popview.readers.otf2 import conversion

    written = write_task_trace(tmp_path / "run")
    decode = events.decode
    tables, decoded, default = {}, {}, conversion.KEEP_EVENTS
    for keep in (default, 0):
        calls = Counter()
        monkeypatch.setattr(conversion, "KEEP_EVENTS", keep)
        monkeypatch.setattr(events, "decode", lambda anchor, ref, *a, **k: calls.update([ref]) or decode(anchor, ref, *a, **k))
        with popview.open(written.anchor, cache_dir=tmp_path / str(keep), force=True) as exp:
            tables[keep] = {t: exp.reader.read(t) for t in ("events", "states", "calls")}
        decoded[keep] = calls
    assert set(decoded[0].values()) == {1, 2}, "some locations wait for their links"
    assert set(decoded[default].values()) == {1}
    for t in ("events", "states", "calls"):
        for name, values in tables[0][t].items():
            np.testing.assert_array_equal(values, tables[default][t][name], err_msg=f"{t}.{name}")


# ------------------------------------------------------------------ double metrics

def test_double_metrics_are_exact(tmp_path):
    from popview.testing.otf2_writer import ENERGY_J, POWER_W

    written = write_openmp_trace(tmp_path / "run", ranks=1, threads=2, iterations=1, double_metrics=True)
    with popview.open(written.anchor, cache_dir=tmp_path / "cache") as exp:
        d = exp.definitions
        ev = exp.reader.read("events")
        for name, expected in (("power", POWER_W), ("energy", np.diff(ENERGY_J, prepend=0.0))):
            et = d.event_types[d.counter_code(name)]
            assert et.value_type == "double"
            values = et.decode(ev["value"][ev["type"] == et.code])
            assert values.tolist() == list(expected)      # exact: 0.1 and 1e-3 too
        assert list(np.diff(ENERGY_J, prepend=0.0)) == [0.5, 1.25, 1.25]


def test_profile_gives_each_worker_its_own_call_paths(openmp):
    """Grafted visits reach the profile: below the parallel region, a worker's exclusive
    time per call path is its own innermost visit's, down to the kernel it ran (the
    region itself also gets the worker's time outside its visits while the master is in it)."""
    _, exp = openmp
    prof = exp.profile()
    exclusive = _exclusive(exp)
    for loc, location in enumerate(exp.definitions.locations):
        if location.thread == 0:
            continue
        for path in (f"{FORK_PATH}/{FOR}", f"{FORK_PATH}/{FOR}/kernel", f"{FORK_PATH}/{BARRIER}"):
            got = prof.by_location("time", prof.find(path), inclusive=False)[loc] * 1e9
            assert abs(got - exclusive[loc, path]) < 1e-3, (loc, path)
        visits = prof.by_location("visits", prof.find(f"{FORK_PATH}/{FOR}/kernel"), inclusive=False)[loc]
        assert visits == ITERATIONS
