"""Writing a view description as a cfg, and reading it back into the same description."""
from __future__ import annotations

import pytest

from popview.analysis.cfg import Binning, CfgView, Criterion, Derivation, Function, Histogram, Window, parse_cfg
from popview.analysis.cfg.writer import number_text, save_cfg, write_cfg
from tests.cfg import samples


def _built_view() -> CfgView:
    """A view made in code, as the window would make it, with every construct set."""
    ipc_filters = {"evt_type": Criterion("=", (42000050,), ("PAPI_TOT_INS",)), "evt_value": Criterion("All")}
    instructions = Window(name="Instructions", position=1, functions={
        "thread": Function("Next Evt Val"), "task": Function("Thread i", ((2,),))},
        compose={"compose_thread": Function("Select Range", ((1e12,), (0.5,)))}, units="Nanoseconds",
        begin_relative=0.25, end_relative=0.75, maximum_y=1.7976931348623157e308, color_mode="window_in_gradient_mode")
    instructions.filters.criteria.update(ipc_filters)
    instructions.filters.logical = True
    cycles = Window(name="Cycles | per thread", position=2, functions={"thread": Function("Next Evt Val")})
    cycles.filters.criteria["evt_type"] = Criterion("[x,y]", (42000059, 42000060))
    ipc = Window(name="IPC", position=3, level="task", functions={"task": Function("Adding")},
                 derivation=Derivation("divide", (1, 2), (1.0, 0.001), (0, 1)))
    histogram = Histogram(name="IPC per task", columns=Binning(3, False, 0, 4, 0.1), data_window=3,
                          statistic="Average value", calculate_all=True, limits="Alltrace",
                          data_range=(-1.7976931348623157e308, 1.7976931348623157e308),
                          planes=Binning(1, True, 0, 10, 1), plane_shown=2.0)
    return CfgView(source="built", version="3.4", header_style="new", description="IPC\nsecond line",
                   windows=[instructions, cycles, ipc], histograms=[histogram])


def test_a_built_view_round_trips():
    view = _built_view()
    text = write_cfg(view)
    again = parse_cfg(text, "written.cfg")
    assert again == view
    assert again.notes == []                           # nothing the reader had to skip
    assert write_cfg(again) == text


@pytest.mark.parametrize("text", [samples.single(), samples.derived(), samples.OLD,
                                  samples.with_histogram(planes=samples.PLANES)])
def test_read_write_read_is_stable(text):
    view = parse_cfg(text, "in.cfg")
    assert parse_cfg(write_cfg(view), "out.cfg") == view


def test_written_text_follows_the_kernel_layout():
    text = write_cfg(_built_view())
    lines = text.splitlines()
    assert lines[:3] == ["#ParaverCFG", "ConfigFile.Version: 3.4", "ConfigFile.NumWindows: 3"]
    assert "< NEW DISPLAYING WINDOW IPC >" in lines and "< NEW ANALYZER2D >" in lines
    assert "window_selected_functions { 1, { {task, Adding}, } }" in lines      # derived: trailing comma
    assert "window_semantic_module task Thread i { 1, { 1 2 } }" in lines
    assert "window_filter_module evt_type_label 1 \"PAPI_TOT_INS\"" in lines
    assert "window_identifiers 1 2" in lines and "window_shifts 0 1" in lines
    assert any(line.startswith("Analyzer2D.Parameters: 2 -1797693134862315708") for line in lines)
    assert lines.index("< NEW ANALYZER2D >") > lines.index("window_name IPC")


def test_numbers_keep_their_value():
    for value in (0, 1, 2 ** 63, 0.801360385246, 1e-15, 1.7976931348623157e308, -2.5):
        from popview.analysis.cfg.values import number
        assert number(number_text(value)) == value


def test_a_name_over_several_lines_is_refused():
    view = _built_view()
    view.windows[0].name = "two\nlines"
    with pytest.raises(ValueError, match="spans several lines"):
        write_cfg(view)


def test_save_is_atomic_and_readable(tmp_path):
    from popview.analysis.cfg import read_cfg
    path = tmp_path / "ipc.cfg"
    save_cfg(_built_view(), path)
    assert read_cfg(path) == _built_view()
    assert [p.name for p in tmp_path.iterdir()] == ["ipc.cfg"]
