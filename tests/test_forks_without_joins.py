"""Traces with fork records but no join records (a cut trace, a tracer stopped early):
the regions end where the data says, a warning names what is missing, and every figure
stays in [0, 1] and consistent (popview.testing.properties checks)."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.metrics import focus_inputs
from popview.model.categories import CAT
from popview.testing import otf2_writer
from popview.testing.properties import check_experiment
from popview.testing.synthetic import Shape, write

NS = 1e-9
N = otf2_writer.LATE_BARRIER["iterations"]


def test_otf2_forks_without_thread_join(tmp_path):
    """The late-barrier trace without its ThreadJoin records: each instance ends at its master's
    leave (widened to its workers' visits); the master's time after it is what the trace says (its
    computation until MPI_Barrier), not a join wait that never ends; one warning says so."""
    scripts = [[[op for op in thread if op[1] != "join"] for thread in otf2_writer.late_barrier_script(r, N)]
               for r in range(2)]
    written = otf2_writer._write_scripted(tmp_path / "trace", scripts, 2, False)
    with popview.open(written.anchor, cache_dir=tmp_path / "cache") as exp:
        warnings = exp.definitions.warnings
        assert any(w.startswith(f"{2 * N} OpenMP forks have no ThreadJoin record") for w in warnings), warnings
        x = focus_inputs(exp, "whole")
        m = x.masters
        # per iteration: fork 50 (ThreadFork .. team begin) is OpenMP management, nothing after the leave is
        np.testing.assert_allclose(x.cat[m, CAT["omp_management"]], N * 50 * NS)
        # main: 100 before the first fork; per iteration leave 160 .. MPI_Barrier 300 and 400 .. next fork 1000
        np.testing.assert_allclose(x.cat[m, CAT["comp_serial"]], (100 + N * (140 + 600)) * NS)
        assert check_experiment(exp, "no-join.otf2") == []


def test_paraver_parallel_regions_without_closing_records(tmp_path):
    """Extrae's join is the parallel construct's closing event (60000001:0). Without it a region
    visit is closed by the exit of the region enclosing it (the iteration's user function), so the
    next fork of the iteration nests in it: the figures stay in range and a warning names the count."""
    shape = Shape(processes=2, threads=3, iterations=4, serial_fraction=0.2, parallel_regions=2, fork_ns=1_000,
                  thread_weights=(1.0, 2.0, 3.0), rank_weights=(1.0, 1.5), worker_parallel_records=False)
    ex = write(tmp_path / "full.prv", shape)
    text = (tmp_path / "full.prv").read_text()
    cut = "".join(line for line in text.splitlines(True) if not line.rstrip().endswith(":60000001:0"))
    assert len(text) - len(cut) > 0
    (tmp_path / "cut.prv").write_text(cut)
    for ext in ("pcf", "row"):
        (tmp_path / f"cut.{ext}").write_text((tmp_path / f"full.{ext}").read_text())
    with popview.open(tmp_path / "cut.prv", cache_dir=tmp_path / "cache") as exp:
        visits = shape.processes * shape.iterations * shape.parallel_regions
        assert any(w.startswith(f"{visits} OpenMP parallel region visits have no join (closing) record")
                   for w in exp.definitions.warnings), exp.definitions.warnings
        x = focus_inputs(exp, "whole")
        np.testing.assert_allclose(x.useful, ex.useful_ns * NS, rtol=1e-12)     # computation is computation
        assert x.runtime == pytest.approx(ex.runtime_ns * NS)
        # the master's serial part after the first region's fork counts inside it: never below the truth
        assert (x.openmp >= ex.openmp_ns * NS - 1e-12).all()
        assert check_experiment(exp, "cut.prv") == []
    with popview.open(tmp_path / "full.prv", cache_dir=tmp_path / "cache") as exp:
        assert not any("closing" in w for w in exp.definitions.warnings)
