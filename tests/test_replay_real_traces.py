"""The replay on every real trace in ../shared/traces (whole run and auto
focus): the critical path covers the runtime from the focus's start, in time
order; the ideal runtimes lie within the measured one; every critical-path
and serialisation / transfer efficiency lies in [0, 1] or is not available
with a reason; the critical-path factors multiply to the parallel efficiency."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.autofocus import propose
from popview.analysis.focus import Focus
from popview.analysis.gather import iteration_window
from popview.analysis.replay import replay
from popview.readers.errors import InputError

from .conftest import SHARED_TRACES

pytestmark = pytest.mark.shared
PATTERNS = ("**/*.prv", "**/*.prv.gz", "**/*.otf2")
REPLAY_METRICS = {
    "pop-mpi": ("serialisation_efficiency", "transfer_efficiency"),
    "hybrid-multiplicative": ("mpi_serialisation_efficiency", "mpi_transfer_efficiency"),
    "hybrid-additive": ("mpi_serialisation_efficiency", "mpi_transfer_efficiency"),
}


def _traces() -> list[str]:
    if not SHARED_TRACES.is_dir():
        return []
    found = {p for pattern in PATTERNS for p in SHARED_TRACES.glob(pattern)}
    return sorted(str(p.relative_to(SHARED_TRACES)) for p in found)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


def _open(shared_traces, name, cache):
    try:
        return popview.open(shared_traces / name, cache_dir=cache)
    except InputError as exc:           # a trace popview refuses names its reason: nothing to replay
        pytest.skip(f"{name} is refused: {exc}")


def _span(exp, focus) -> tuple[int, int]:
    if focus.kind == "window":
        return int(focus.t0), int(focus.t1)
    if focus.kind == "iterations":
        return iteration_window(exp, focus.callpath, focus.first, focus.last)
    return 0, int(exp.definitions.t_end)


@pytest.mark.parametrize("name", _traces() or ["(no shared traces)"])
def test_replay_holds_on_real_traces(shared_traces, name, cache):
    exp = _open(shared_traces, name, cache)
    for focus in (Focus.whole(), propose(exp)[0]):
        where = f"{name} {focus.label()}"
        result = replay(exp, focus)
        t0, t1 = _span(exp, focus)
        assert result.r == pytest.approx((t1 - t0) * 1e-9, rel=1e-12), where
        path = result.critical_path
        assert len(path["loc"]) > 0, where
        assert path["begin"][0] == t0 and path["end"][-1] == t1, where
        assert np.array_equal(path["begin"][1:], path["end"][:-1]), where        # in time order, no gap
        length = float((path["end"] - path["begin"]).sum()) * 1e-9
        assert length == pytest.approx(result.r, rel=0.01), where
        slack = 1e-9 * result.r
        assert result.tl_cue.max() <= result.g_cue + slack, where
        assert result.g_cue <= result.r_ideal + slack and result.r_ideal <= result.r + slack, where
        assert result.g_coo <= result.r + slack, where
        for model in ("critical-path", *REPLAY_METRICS):
            tree = exp.metrics(model, focus)
            ids = [node.id for _, node in tree.walk()] if model == "critical-path" else REPLAY_METRICS[model]
            for metric in ids:
                node = tree[metric]
                if node.value is None:
                    assert node.reason, (where, model, metric)
                elif node.kind == "efficiency":
                    assert -1e-9 <= node.value <= 1 + 1e-9, (where, model, metric, node.value)
        assert not exp.metrics("critical-path", focus).inconsistencies(), where


@pytest.mark.parametrize("run", ["hyb_1x2", "hyb_2x2"])
def test_scorep_workers_start_their_regions_before_the_master_enters(shared_traces, run, cache):
    """Oversubscribed, the masters of popview-heat's Score-P runs stamp their
    region entry up to 8 ms after their fork record and after their workers
    entered (and left) the first barrier: every barrier instance still finds
    its whole team, and the critical path goes through the fork record."""
    exp = _open(shared_traces, f"popview-heat/scorep/{run}/traces.otf2", cache)
    result = replay(exp)
    assert not result.approximate, result.notes
    assert not any("barriers not reached" in n for n in result.notes)


def test_extrae_placeholder_messages_are_not_followed(shared_traces, cache):
    """popview-heat's Extrae 2x2 trace pairs MPI_PROC_NULL receives with real
    sends; once paired again no message runs backwards and nothing cycles."""
    exp = _open(shared_traces, "popview-heat/extrae/hyb_2x2/hyb_2x2.prv", cache)
    result = replay(exp)
    notes = " ".join(result.notes)
    assert "100 receives from MPI_PROC_NULL" in notes and "cyclic" not in notes
    assert "of 1 channel paired again" in notes          # was "1 channels"
    assert "before they were sent" not in notes
    mult = exp.metrics("hybrid-multiplicative", "whole")
    for metric in ("mpi_serialisation_efficiency", "mpi_transfer_efficiency"):
        assert 0.85 < mult.value(metric) <= 1, metric          # 261 % and 33.9 % before
