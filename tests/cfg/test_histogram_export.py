"""Save as Paraver cfg beyond the timeline: a Histograms pane table as a 2D histogram cfg, and a
cfg's windows and histograms written back.

- A table of the Histograms pane (states x thread, MPI call x thread; each statistic; the whole
  run and a part of it) saved as a cfg gives, evaluated by popview's cfg engine, the same cells
  (1e-9 relative); with POPVIEW_PARAMEDIR, paramedir loads it and writes the same cells to its
  2 decimals, on EPOCH 4 and popview-heat Extrae 2x2.
- Every cfg of the collection written back (read, then written by popview's writer) gives
  `popview paramedir` the file real paramedir wrote for the original (the frozen digests of
  test_paramedir_outputs); with POPVIEW_PARAMEDIR, paramedir writes the same bytes for the
  written-back cfg as for the original.
"""
from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import popview
from popview.analysis import histograms
from popview.analysis.cfg import parse_cfg, read_cfg
from popview.analysis.cfg.export import NotExportable, histogram_cfg, present_event_types
from popview.analysis.cfg.paramedir import evaluate_cfg, paramedir_job, parse_table, row_labels
from popview.analysis.cfg.writer import save_cfg, write_cfg
from popview.testing import synthetic
from tests.cfg.test_paramedir_outputs import CASES, CFGS, DIGESTS, TRACES, _paramedir_output, _sha256

SHARED = {"epoch4": TRACES["epoch4"], "heat2x2": TRACES["heat2x2"]}




def _tables(exp):
    """Each exportable table of the pane: kinds x (whole run, a quarter-to-half window)."""
    t_end = int(exp.definitions.t_end)
    for kind in ("states", "mpi"):
        for window in ((None, None), (t_end // 4, t_end // 2)):
            yield histograms.build(exp, kind, *window)


def _by_label(cfg_table, table, stat):
    """popview's cells for the cfg table's columns (NaN: no value is 0 in Paraver)."""
    index = [table.col_labels.index(label) for label in cfg_table.col_labels]
    return np.nan_to_num(table.stats[stat][:, index])


@pytest.mark.parametrize("name", sorted(SHARED))
def test_a_histogram_table_saved_as_a_cfg_evaluates_to_the_same_cells(traces, name):
    exp, columns = traces(name)
    present = present_event_types(exp.reader)
    checked = 0
    for table in _tables(exp):
        for stat in table.stats:
            view = parse_cfg(write_cfg(histogram_cfg(exp.definitions, table, stat, present)), "h.cfg")
            tables, skipped = evaluate_cfg(view, columns, row_labels(exp.definitions), exp.definitions)
            assert skipped == []
            (cfg_table,) = tables
            assert set(cfg_table.col_labels) <= set(table.col_labels)
            missing = [c for c, label in enumerate(table.col_labels) if label not in cfg_table.col_labels]
            # a column Paraver has no burst for: popview's zero-duration calls (EPOCH's MPI_Cart_create)
            assert all(np.nansum(table.stats["time"][:, c]) == 0 for c in missing), (table.kind, missing)
            np.testing.assert_allclose(cfg_table.values, _by_label(cfg_table, table, stat), rtol=1e-9, atol=1e-9)
            checked += 1
    assert checked == 16


def test_tables_paraver_cannot_compute_are_refused_with_the_reason(tmp_path):
    trace = tmp_path / "run.prv"
    synthetic.write(trace, synthetic.Shape(processes=2, iterations=2))
    with popview.open(trace, cache_dir=tmp_path / "c") as exp:
        useful = histograms.build(exp, "useful")
        with pytest.raises(NotExportable, match="logarithmic"):
            histogram_cfg(exp.definitions, useful, "bursts")
        states = histograms.build(exp, "states")
        view = histogram_cfg(exp.definitions, states, "time")
        (histogram,) = view.histograms
        assert histogram.statistic == "Time" and histogram.limits == "Alltrace" and view.windows[0].units == "Nanoseconds"
        assert histogram_cfg(exp.definitions, states, "% time").histograms[0].statistic == "% Window Time"




@pytest.mark.parametrize("name", sorted(SHARED))
def test_paramedir_loads_a_saved_histogram_and_writes_the_same_cells(paramedir, traces, shared_traces, tmp_path, name):
    exp, _ = traces(name)
    present = present_event_types(exp.reader)
    for k, table in enumerate(_tables(exp)):
        for stat in table.stats:
            cfg = tmp_path / f"t{k}_{stat.replace(' ', '_').replace('%', 'pc')}.cfg"
            save_cfg(histogram_cfg(exp.definitions, table, stat, present), cfg)
            run = subprocess.run([paramedir, str(shared_traces / TRACES[name]), str(cfg), "out"],
                                 capture_output=True, text=True, cwd=str(tmp_path), timeout=600)
            assert "aborted" not in run.stdout and (tmp_path / "out").is_file(), run.stdout + run.stderr
            labels, rows = parse_table((tmp_path / "out").read_text())
            theirs = np.array([v for label, v in rows.items() if label.startswith("THREAD")])
            index = [table.col_labels.index(label) for label in labels]
            mine = np.nan_to_num(table.stats[stat][:, index])
            assert np.all(np.abs(mine - theirs) <= 0.005 + 1e-9 * np.abs(mine)), (table.kind, stat)  # 2 decimals


@pytest.mark.parametrize("name,cfg", CASES)
def test_a_cfg_written_back_gives_what_paramedir_wrote_for_the_original(shared_traces, traces, name, cfg):
    exp, columns = traces(name)
    back = parse_cfg(write_cfg(read_cfg(shared_traces / CFGS / cfg)), "back.cfg")
    text = paramedir_job(back, columns, exp.definitions).text
    expected = json.loads(DIGESTS.read_text())[f"{name} {cfg}"]
    assert text is not None and (len(text.encode()), _sha256(text)) == (expected["bytes"], expected["sha256"])


@pytest.mark.parametrize("name,cfg", [c for c in CASES if c[0] in SHARED])
def test_paramedir_writes_the_same_for_a_cfg_written_back(paramedir, shared_traces, tmp_path, name, cfg):
    original = shared_traces / CFGS / cfg
    back = tmp_path / "back.cfg"
    save_cfg(read_cfg(original), back)
    trace = shared_traces / TRACES[name]
    assert _paramedir_output(paramedir, trace, back, tmp_path / "b") == \
        _paramedir_output(paramedir, trace, original, tmp_path / "a")
