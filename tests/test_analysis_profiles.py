"""Profiles (metric x call path x location) from traces and Cube files, and the
metrics of profiles and multi-application traces."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.focus import Focus
from popview.analysis.gather import FocusError
from popview.analysis.metrics import focus_inputs
from popview.testing.synthetic import Shape, write


def test_trace_profile_nests_worker_time_under_the_master_call_path(tmp_path, cache_dir):
    shape = Shape(processes=2, threads=3, iterations=4, serial_fraction=0.2, parallel_regions=2,
                  init_ns=10_000, fini_ns=5_000)
    ex = write(tmp_path / "p.prv", shape)
    with popview.open(tmp_path / "p.prv", cache_dir=cache_dir) as exp:
        prof = exp.profile()
        main = prof.find("main")
        np.testing.assert_allclose(prof.by_location("time", main), ex.runtime_ns / 1e9, rtol=1e-12)
        np.testing.assert_allclose(prof.by_location("comp", None), ex.useful_ns / 1e9, rtol=1e-12)
        step = prof.find("main/timestep")
        visits = prof.by_location("visits", step, inclusive=False)
        assert visits[0] == 4 and visits[3] == 4 and visits[1] == 0
        np.testing.assert_allclose(prof.by_location("mpi", None)[[0, 3]], ex.mpi_ns / 1e9, rtol=1e-12)
        assert prof.by_location("PAPI_TOT_INS", None).sum() == pytest.approx(ex.instructions.sum())


@pytest.fixture(scope="module")
def btmz(shared_traces, tmp_path_factory):
    path = shared_traces / "archer2-scalasca/scorep_bt-mz_C_8x6_sum.hwc/profile.cubex"
    exp = popview.open(path, cache_dir=tmp_path_factory.mktemp("cache"))
    yield exp
    exp.close()


def test_cube_profile_metrics(btmz):
    assert not btmz.is_trace
    for model in ("pop-mpi", "hybrid-additive", "hybrid-multiplicative", "critical-path"):
        tree = btmz.metrics(model, "whole")
        assert tree.inconsistencies(1e-9) == []
        # a Score-P profile charges the masters' fork and join to computation: its useful time is the
        # true one plus that time, so the parallel efficiency it gives is an upper bound, with the reason
        pe = tree["parallel_efficiency" if model in ("pop-mpi", "hybrid-additive", "critical-path")
                  else "hybrid_parallel_efficiency"]
        assert pe.bound == "upper" and "fork and join" in pe.reason and pe.reason.startswith("upper bound")
        assert 0 < pe.value < 1
        assert tree.to_dict()["metrics"][0]["bound"] == "upper"     # the global efficiency of a single run
    add = btmz.metrics("hybrid-additive", "whole")
    assert add["mpi_transfer_efficiency"].reason.startswith("a profile has no records to replay on an ideal network")
    assert 0 < add.value("process_efficiency") < 1
    mult = btmz.metrics("hybrid-multiplicative", "whole")
    assert 0 < mult.value("mpi_load_balance") <= 1
    comp = btmz.metrics("computation", "whole")
    assert 0.5 < comp.value("ipc") < 5


def test_cube_focus(btmz):
    auto = btmz.metrics("pop-mpi", "auto")
    assert "ITERATION" in auto.focus
    x = focus_inputs(btmz, Focus.on_callpath(auto.focus))
    whole = focus_inputs(btmz, Focus.whole())
    assert 0 < x.runtime < whole.runtime
    with pytest.raises(FocusError):
        focus_inputs(btmz, Focus.window(0, 10**9))


def test_multi_application_trace_analyses_the_main_application(shared_traces, cache_dir):
    path = next((shared_traces / "profet-paraver").rglob("*.prv*"))
    with popview.open(path, cache_dir=cache_dir) as exp:
        tree = exp.metrics("pop-mpi", "whole", use_replay=False)
        assert any("only the main one" in n for n in tree.notes)
        x = focus_inputs(exp, Focus.whole())
        assert x.n_processes == 8
