"""POP metrics from real Cube profiles: counters under other names, the
Scalasca wait states, agreement with the trace of the same run."""
from __future__ import annotations

import numpy as np
import pytest

import popview

MINI_LPT = "cubegui-llm-thesis/real_world_profiles/mini-lpt-720-profile.cubex"


def test_perf_instructions_and_cycles_give_ipc(shared_traces, cache_dir):
    """mini-lpt's counters are Score-P perf events `instructions` and `cycles`, not PAPI names."""
    with popview.open(shared_traces / MINI_LPT, cache_dir=cache_dir) as exp:
        tree = exp.metrics("computation")
        prof = exp.profile()
        comp, time = prof.matrix("comp"), prof.matrix("time")
        pure = np.isclose(comp, time) & (time > 0)
        ins = np.where(pure, prof.matrix("instructions"), 0).sum()
        cyc = np.where(pure, prof.matrix("cycles"), 0).sum()
    assert tree.value("ipc") == pytest.approx(ins / cyc, rel=1e-12)
    assert 0.5 < tree.value("ipc") < 4
    assert 1.0 < tree.value("clock_rate") < 4.0          # GHz of the machine, not 1e21
