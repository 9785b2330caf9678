"""The same run written as OTF2 and as Paraver replays to the same figures."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.replay import replay
from popview.testing import replay_cases as cases
from popview.testing.otf2_writer import write_trace

RANKS, ITERATIONS, COLLECTIVE_EVERY = 3, 10, 5
PERIOD, NS_PER_TICK = 10_000, 0.5


def _paraver_twin(directory, end_ns: float):
    """The schedule popview.testing.otf2_writer.write_trace writes (ticks of
    0.5 ns from the first record): rank r starts at 37 r ticks; per iteration
    compute, MPI_Send to the right neighbour (message at +4200), MPI_Recv from
    the left one (message arrives at +6000), every 5th iteration MPI_Allreduce.
    Only the records the replay reads are written."""
    w = cases.CaseWriter([1] * RANKS)

    def us(ticks: float) -> float:
        return ticks * NS_PER_TICK / 1000

    for r in range(RANKS):
        t = 37 * r
        if t:
            w.state(r, 0, 0, us(t), 2)
        cursor = t
        for i in range(ITERATIONS):
            base = t + i * PERIOD
            calls = [(4100, 4300, cases.MPI_P2P, cases.SEND, 4), (4400, 6100, cases.MPI_P2P, cases.RECV, 3)]
            if i % COLLECTIVE_EVERY == COLLECTIVE_EVERY - 1:
                calls.append((7000, 8010, cases.MPI_COLL, cases.ALLREDUCE, cases.GROUP))
            for b, e, etype, value, state in calls:
                w.state(r, 0, us(cursor), us(base + b), cases.RUNNING)
                params = (cases.COMM, 1) if etype == cases.MPI_COLL else ()
                w.call(r, 0, us(base + b), us(base + e), etype, value, state, *params)
                cursor = base + e
            right = (r + 1) % RANKS
            w.message(r, right, us(base + 4200), us(37 * right + i * PERIOD + 4400), us(37 * right + i * PERIOD + 6000))
        # main ends one period after the last iteration began; then the rank no longer runs
        stop = min(us(t + ITERATIONS * PERIOD), end_ns / 1000)
        w.state(r, 0, us(cursor), stop, cases.RUNNING)
        if stop < end_ns / 1000:
            w.state(r, 0, stop, end_ns / 1000, 2)
    return w.write(directory, "ring", end_ns / 1000)


def test_otf2_and_paraver_give_the_same_replay(tmp_path):
    written = write_trace(tmp_path / "otf2", ranks=RANKS, iterations=ITERATIONS,
                          collective_every=COLLECTIVE_EVERY, counters=False)
    otf2_exp = popview.open(written.anchor, cache_dir=tmp_path / "cache")
    prv_exp = popview.open(_paraver_twin(tmp_path / "prv", otf2_exp.definitions.t_end), cache_dir=tmp_path / "cache")
    a, b = replay(otf2_exp), replay(prv_exp)
    ns = 1e-9
    assert a.n_messages_matched == b.n_messages_matched == RANKS * ITERATIONS
    assert a.n_collectives == b.n_collectives == ITERATIONS // COLLECTIVE_EVERY
    assert not a.notes and not b.notes
    # one rank starts at a half tick: the formats may round that one time differently
    for name in ("r", "r_ideal", "g_cue", "g_coo", "g_com"):
        assert getattr(a, name) == pytest.approx(getattr(b, name), abs=2 * ns), name
    for name in ("pl_cue", "tl_cue", "mpi_ideal"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), atol=2 * ns, err_msg=name)
    # the critical path is the same chain of ranks
    assert list(a.critical_path["loc"]) == list(b.critical_path["loc"])


def test_critical_path_profile_names_the_computation(tmp_path):
    written = write_trace(tmp_path / "otf2", ranks=RANKS, iterations=ITERATIONS,
                          collective_every=COLLECTIVE_EVERY, counters=False)
    exp = popview.open(written.anchor, cache_dir=tmp_path / "cache")
    result = replay(exp)
    defs = exp.definitions
    names = {defs.callpath_name(cp): sec for cp, sec in enumerate(result.critical_path_profile) if sec > 0}
    # every iteration's computation (100 .. 4000 ticks of 0.5 ns) lies on the path
    assert names["main/compute"] == pytest.approx(ITERATIONS * 1950e-9, rel=1e-12)
    assert set(names) == {"main", "main/compute"}
    assert sum(names.values()) + result.critical_path_outside == pytest.approx(result.g_cue, rel=1e-12)
    by_loc = result.critical_path_by_location
    assert by_loc["seconds"].sum() == pytest.approx(sum(names.values()), rel=1e-12)
