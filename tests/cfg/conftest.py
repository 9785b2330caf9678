"""Fixtures of the cfg tests that run on the shared Paraver traces and against paramedir."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import popview
from popview.analysis.cfg.evaluate import TraceColumns

PARAVER_TRACES = {"epoch4": "pypop/mpi/epoch_example_traces/epoch_4proc.prv.gz",
                  "epoch16": "pypop/mpi/epoch_example_traces/epoch_16proc.prv.gz",
                  "heat2x2": "popview-heat/extrae/hyb_2x2/hyb_2x2.prv"}


@pytest.fixture(scope="module")
def traces(request, shared_traces, tmp_path_factory):
    """Each shared trace opened once per module: (experiment, TraceColumns), when first asked for;
    by name, in the module's TRACES (else PARAVER_TRACES)."""
    cache = tmp_path_factory.mktemp("cache")
    paths = getattr(request.module, "TRACES", PARAVER_TRACES)
    opened: dict[str, tuple] = {}

    def get(name: str):
        if name not in opened:
            exp = popview.open(shared_traces / paths[name], cache_dir=cache)
            opened[name] = (exp, TraceColumns.from_cache(exp.reader, exp.definitions))
        return opened[name]
    yield get
    for exp, _ in opened.values():
        exp.close()


@pytest.fixture(scope="module")
def paramedir() -> str:
    """The paramedir binary (or its wrapper script) POPVIEW_PARAMEDIR names, else skip."""
    binary = os.environ.get("POPVIEW_PARAMEDIR", "")
    if not binary or not Path(binary).is_file() or not os.access(binary, os.X_OK):
        pytest.skip("POPVIEW_PARAMEDIR does not name a paramedir binary (paraver-kernel) to compare with")
    return binary
