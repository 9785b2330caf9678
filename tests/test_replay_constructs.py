"""Non-blocking collectives, one-sided MPI and OpenMP tasks in the replay:
closed-form cases written as Paraver and as OTF2 give the same figures."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.replay import replay
from popview.model import definitions as vocab
from popview.readers.otf2.definitions import INFO_ROLES, INFO_TYPES
from popview.testing import replay_cases as cases
from popview.testing import replay_cases_otf2 as twins

EXACT = {"rel": 1e-9, "abs": 1e-12}


def _replay(path, tmp_path):
    return replay(popview.open(path, cache_dir=tmp_path / "cache"))


def _assert_expected(result, expected):
    for name in ("r", "r_ideal", "g_cue", "g_coo", "g_com"):
        assert getattr(result, name) == pytest.approx(getattr(expected, name), **EXACT), name
    np.testing.assert_allclose(result.pl_cue, expected.pl_cue, rtol=1e-9)
    np.testing.assert_allclose(result.tl_cue, expected.tl_cue, rtol=1e-9)


def _both(tmp_path, make, twin, **kw):
    """(Paraver result, OTF2 result, expected) of one case."""
    path, expected = make(tmp_path / "prv", **kw)
    return _replay(path, tmp_path), _replay(twin(tmp_path / "otf2", **kw), tmp_path), expected


@pytest.mark.parametrize("kind,ideal", [("allreduce", 700e-6), ("bcast", 700e-6), ("reduce", 600e-6)])
def test_nonblocking_collective_synchronises_at_its_completing_wait(tmp_path, kind, ideal):
    path, expected = cases.nonblocking_collective(tmp_path, kind)
    result = _replay(path, tmp_path)
    _assert_expected(result, expected)
    assert result.g_cue == pytest.approx(ideal, **EXACT)
    assert result.n_collectives == 1 and not result.approximate, result.notes


def test_nonblocking_collective_in_otf2(tmp_path):
    prv, otf2, expected = _both(tmp_path, cases.nonblocking_collective, twins.nonblocking_allreduce)
    for result in (prv, otf2):
        _assert_expected(result, expected)
        assert not result.approximate, result.notes


def test_nonblocking_collective_without_a_later_wait_is_reported(tmp_path):
    w = cases.CaseWriter([1, 1])
    w.state(0, 0, 0, 400, cases.RUNNING)
    w.call(0, 0, 400, 405, cases.MPI_COLL, cases.IALLREDUCE, cases.GROUP, cases.COMM, 1)
    w.state(0, 0, 405, 500, cases.RUNNING)
    w.state(1, 0, 0, 100, cases.RUNNING)
    w.call(1, 0, 100, 105, cases.MPI_COLL, cases.IALLREDUCE, cases.GROUP, cases.COMM, 1)
    w.call(1, 0, 105, 110, cases.MPI_P2P, cases.WAIT, 8)       # ends before rank 0 enters
    w.state(1, 0, 110, 500, cases.RUNNING)
    result = _replay(w.write(tmp_path, "lost", 500), tmp_path)
    assert result.approximate
    assert any("2 non-blocking collective calls without a completing" in n for n in result.notes)
    assert result.g_cue == pytest.approx(495e-6, **EXACT)     # nothing synchronised


def test_fence_is_a_barrier(tmp_path):
    prv, otf2, expected = _both(tmp_path, cases.rma_fence, twins.rma_fence)
    for result in (prv, otf2):
        _assert_expected(result, expected)
        assert not result.approximate
        assert any("2 MPI_Win_fence calls replayed as barriers" in n for n in result.notes)


def test_passive_target_epoch_waits_for_nobody_and_is_reported(tmp_path):
    prv, otf2, expected = _both(tmp_path, cases.rma_lock, twins.rma_lock)
    for result in (prv, otf2):
        _assert_expected(result, expected)
        assert result.approximate
        assert any("1 passive-target epochs" in n and "lock type is not recorded" in n for n in result.notes)


@pytest.mark.parametrize("wait", ["taskwait", "barrier"])
def test_task_waits_for_its_creation_and_holds_back_its_wait(tmp_path, wait):
    prv, otf2, expected = _both(tmp_path, cases.omp_tasks, twins.omp_tasks, wait=wait)
    for result in (prv, otf2):
        _assert_expected(result, expected)
        assert not result.approximate, result.notes
        assert any("1 OpenMP tasks wait for their creation" in n and "depend clauses" in n for n in result.notes)
    # the critical path runs through the master until the creation, then the task on the worker
    path = prv.critical_path
    own = ~path["waiting"]
    assert list(path["loc"][own]) == [0, 1, 0]
    assert list((path["end"] - path["begin"])[own]) == [100_000, 300_000, 50_000]
    assert path["begin"][0] == 0 and path["end"][-1] == 475_000       # contiguous, waits included
    assert np.array_equal(path["begin"][1:], path["end"][:-1])


def test_task_without_a_wait_still_waits_for_its_creation(tmp_path):
    """No taskwait or barrier: the region's join takes the worker's clock,
    which includes the creation: R_ideal = 100 + 300, not max(100, 300)."""
    w = cases.CaseWriter([2])
    w.event(0, 0, 0, cases.OMP_PARALLEL, 3)
    w.state(0, 0, 0, 100, cases.RUNNING)
    w.event(0, 0, 100, cases.TASK_INSTANTIATION, 7, cases.TASK_ID, 5)
    w.event(0, 0, 101, cases.TASK_INSTANTIATION, 0)
    w.state(0, 0, 100, 200, cases.BLOCKED)
    w.state(0, 1, 0, 120, cases.BLOCKED)
    w.event(0, 1, 120, cases.TASK_FUNCTION, 7, cases.TASK_ID, 5)
    w.state(0, 1, 120, 420, cases.RUNNING)
    w.event(0, 1, 420, cases.TASK_FUNCTION, 0)
    w.state(0, 0, 200, 420, cases.BLOCKED)
    w.event(0, 0, 420, cases.OMP_PARALLEL, 0)
    result = _replay(w.write(tmp_path, "join", 420), tmp_path)
    assert result.g_cue == pytest.approx(400e-6, **EXACT)
    assert not result.approximate


def test_otf2_generation_numbers_created_twice_are_reported(tmp_path):
    """Two threads both create their generation 1: the reader keeps no
    creating thread, so neither task can be linked to its creation."""
    a = twins._archive([2])
    a.enter(0, 0, 0, "!$omp parallel")
    for t in (0, 1):
        a.call(0, t, 100, 101, "!$omp create task")
        a.task(0, t, 100, "create", 1, creator=t)
        a.task(0, t, 200, "switch", 1, creator=1 - t)
        a.call(0, t, 200, 300, "!$omp task")
        a.task(0, t, 300, "complete", 1, creator=1 - t)
    a.leave(0, 0, 400, "!$omp parallel")
    result = _replay(a.write(tmp_path / "otf2"), tmp_path)
    assert result.approximate
    assert any("2 OpenMP task creations not replayed" in n for n in result.notes)


def test_task_record_roles_match_the_otf2_reader():
    assert set(INFO_ROLES.values()) == {vocab.TASK_CREATE, vocab.TASK_SWITCH, vocab.TASK_COMPLETE,
                                        vocab.THREAD_FORK, vocab.THREAD_JOIN}
    for code, role in INFO_ROLES.items():
        assert INFO_TYPES[code].lower().startswith(role)


@pytest.mark.parametrize("wait", ["taskwait", "barrier"])
def test_tasks_are_found_by_role_in_a_renumbered_pcf(tmp_path, wait):
    """A .pcf that numbers the task id and taskwait events otherwise (labels kept):
    the reader gives them their roles from the labels and the replay follows."""
    path, expected = cases.omp_tasks(tmp_path / "prv", wait=wait)
    for f in (path, path.with_suffix(".pcf")):
        text = f.read_text()
        assert "60000028" in text
        f.write_text(text.replace("60000028", "69000128").replace("60000022", "69000122"))
    with popview.open(path, cache_dir=tmp_path / "cache") as exp:
        assert exp.definitions.event_codes(vocab.TASK_ID) == [69000128]
        assert exp.definitions.event_codes(vocab.TASKWAIT) == [69000122]
        result = replay(exp)
    _assert_expected(result, expected)
    assert any("1 OpenMP tasks wait for their creation" in n for n in result.notes)
