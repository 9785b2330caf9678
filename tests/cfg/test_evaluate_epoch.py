"""PyPOP's cfgs evaluated by popview on the EPOCH traces give the figures BSC's modelfactors
derived through paramedir (modelfactors.csv, in the shared traces' MANIFEST)."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.cfg import read_cfg
from popview.analysis.cfg.evaluate import TraceColumns, evaluate_histogram

EPOCH = "pypop/mpi/epoch_example_traces"
CFGS = "paraver-cfgs/pypop/pypop/cfgs"
RANKS = (1, 2, 4, 8, 16)
USEFUL_TOTAL_US = (21882362.82, 22913392.37, 23684668.07, 26902030.73, 35617915.65)
USEFUL_MAX_US = (21882362.82, 11484151.34, 5999910.80, 3421581.67, 2242981.13)
INSTRUCTIONS = (84790848422, 87640358419, 88518412143, 90063308642, 93158874793)
CYCLES = (45294421893, 46855679955, 47406198069, 51191361663, 60494538119)


def _histogram(shared_traces, name, trace):
    view = read_cfg(shared_traces / CFGS / name)
    return evaluate_histogram(view, view.histograms[0], trace)


@pytest.mark.parametrize("index", range(len(RANKS)))
def test_pypop_cfgs_reproduce_modelfactors(shared_traces, tmp_path, index):
    path = shared_traces / EPOCH / f"epoch_{RANKS[index]}proc.prv.gz"
    with popview.open(path, cache_dir=tmp_path) as experiment:
        trace = TraceColumns.from_cache(experiment.reader, experiment.definitions)
        useful = _histogram(shared_traces, "total_useful_computation.cfg", trace)
        instructions = _histogram(shared_traces, "useful_instructions.cfg", trace)
        cycles = _histogram(shared_traces, "useful_cycles.cfg", trace)
    assert trace.n_rows == RANKS[index]
    running = useful.table[:, list(useful.columns).index(1)] / 1e3          # ns -> us, per rank
    assert running.sum() == pytest.approx(USEFUL_TOTAL_US[index], rel=1e-9)
    assert running.max() == pytest.approx(USEFUL_MAX_US[index], rel=1e-9)
    assert instructions.table.sum() == pytest.approx(INSTRUCTIONS[index], rel=1e-6)
    assert cycles.table.sum() == pytest.approx(CYCLES[index], rel=1e-6)
    assert np.all(instructions.table >= 0) and instructions.table.shape[0] == RANKS[index]
