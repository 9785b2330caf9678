"""A run with GPU streams (fastotf2's HIP mi300: one host thread, two GPU
locations, no MPI): the model line said "MPI + HIP: the multiplicative (BSC)
model treats the device layer as the second level", while the metric inputs
hold the host threads only (the second level read "OpenMP ... 100 %") and no
note said the GPU locations were left out."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from popview.analysis.gather import main_locations
from popview.analysis.report.variants import preferred
from popview.model.definitions import Definitions, Location, Process


def _defs(paradigms, processes=1) -> Definitions:
    procs = [Process(f"rank {i}", 0, rank=i) for i in range(processes)]
    locs = [Location(f"t{i}", i, 0) for i in range(processes)] + [Location("gpu0", 0, 1, "gpu"),
                                                                    Location("gpu1", 0, 2, "gpu")]
    return Definitions(source_format="otf2", tool="Score-P", t_end=10, processes=procs, locations=locs,
                       paradigms=paradigms)


def test_the_gpu_locations_left_out_are_named():
    locs, _, _, notes = main_locations(_defs(["hip"]))
    assert locs.tolist() == [0]
    assert any("2 GPU locations (device streams) are not analysed" in n for n in notes), notes


@pytest.mark.parametrize("paradigms, processes, says", [(["hip"], 1, "HIP in one process"),
                                                        (["mpi", "cuda"], 2, "MPI + CUDA")])
def test_the_model_line_says_what_the_run_holds(paradigms, processes, says):
    exp = SimpleNamespace(definitions=_defs(paradigms, processes), shape=lambda: (processes, 1))
    _, why = preferred(exp)
    assert why.startswith(says) and "device streams are not analysed" in why, why
    assert "treats the device layer as the second level" not in why
