"""The cfg reader on small synthetic texts: each construct and edge case of the format."""
from __future__ import annotations

import pytest

from popview.analysis.cfg import CfgError, parse_cfg, read_cfg
from tests.cfg import samples


def test_single_window_levels_functions_parameters_and_filters():
    view = parse_cfg(samples.single(), "one.cfg")
    assert (view.version, view.header_style, view.description) == ("3.4", "new", "Instructions per thread")
    [window] = view.windows
    assert (window.name, window.position, window.level, window.derived) == ("Instructions", 1, "thread", False)
    assert window.functions["thread"].name == "Next Evt Val"
    assert window.functions["task"].params == ((3,),)          # Thread i: its parameter applies
    assert window.functions["cpu"].name == "Active Thd" and window.functions["cpu"].params == ()
    assert window.compose["topcompose2"].name == "As Is"
    evt_type = window.filters.criteria["evt_type"]
    assert (evt_type.function, evt_type.values, evt_type.labels) == ("=", (42000050,), ("PAPI_TOT_INS [Instr completed]",))
    assert window.filters.criteria["evt_value"].function == "All"
    assert (window.filters.logical, window.filters.physical) == (True, False)
    assert (window.units, window.maximum_y, window.end_relative, window.drawmode) == \
        ("Microseconds", 18640295641, 1, "draw_maximum")
    assert window.objects == [("appl", "{ 1, { All } }")]
    assert window.gui == {"window_position_x": "346"}


def test_parameters_of_functions_not_selected_are_dropped():
    window = parse_cfg(samples.single()).windows[0]
    assert "Activity" not in {f.name for f in window.functions.values()}
    assert window.functions["task"].name == "Thread i"


def test_event_type_range_is_kept_as_its_bounds():
    window = parse_cfg(samples.single("[x,y]", "2 50000001 50000005")).windows[0]
    criterion = window.filters.criteria["evt_type"]
    assert (criterion.function, criterion.values) == ("[x,y]", (50000001, 50000005))


def test_label_and_number_both_kept_labels_win_against_a_pcf_later():
    window = parse_cfg(samples.single()).windows[0]
    criterion = window.filters.criteria["evt_type"]
    assert criterion.values and criterion.labels


def test_derived_window_references_parents_by_position():
    view = parse_cfg(samples.derived("substract"))
    derived = view.windows[2]
    assert derived.derivation.operation == "substract"
    assert derived.derivation.parents == (1, 2)
    assert derived.derivation.factors == (1, 2.5)
    assert derived.derivation.shifts == (0, 0)
    assert view.window(1).name == "Instructions" and view.window("Useful").position == 2
    assert set(derived.functions) == {"appl", "task", "node", "system", "workload"}


@pytest.mark.parametrize("operation", ["add", "product", "divide", "substract", "controlled: clear by",
                                       "controlled: maximum"])
def test_derived_operations(operation):
    assert parse_cfg(samples.derived(operation)).windows[2].derivation.operation == operation


def test_unknown_operation_is_refused_with_file_and_line():
    with pytest.raises(CfgError, match=r"^x\.cfg:\d+: window_operation: operation 'power' is not"):
        parse_cfg(samples.derived("power"), "x.cfg")


def test_parent_after_the_derived_window_is_refused():
    text = samples.derived().replace("window_identifiers 1 2", "window_identifiers 1 3")
    with pytest.raises(CfgError, match="references window 3, which does not come before it"):
        parse_cfg(text, "x.cfg")


def test_histogram_2d_with_310_digit_parameters():
    view = parse_cfg(samples.with_histogram())
    [histogram] = view.histograms
    assert (histogram.name, histogram.columns.window, histogram.data_window) == ("instructions", 3, 3)
    assert (histogram.statistic, histogram.calculate_all, histogram.limits) == ("Sum bursts", True, "Alltrace")
    assert histogram.data_range == (-1.7976931348623157e308, 1.7976931348623157e308)
    assert histogram.burst_range == histogram.data_range
    assert (histogram.columns.compute, histogram.columns.minimum, histogram.columns.delta) == (False, 0, 10 ** 18)
    assert not histogram.is_3d
    assert histogram.gui == {"Analyzer2D.X": "366"}


def test_histogram_3d_planes():
    histogram = parse_cfg(samples.with_histogram(planes=samples.PLANES)).histograms[0]
    assert histogram.is_3d
    assert (histogram.planes.window, histogram.planes.minimum, histogram.planes.maximum,
            histogram.planes.delta, histogram.planes.compute) == (2, 0, 1, 1, True)
    assert histogram.plane_shown == 1


def test_histogram_on_a_missing_window_is_refused():
    with pytest.raises(CfgError, match="histogram 'instructions' references window 9; the cfg has 3"):
        parse_cfg(samples.with_histogram(control=9), "h.cfg")


def test_old_header_legacy_tags_ptask_and_old_compose_slots():
    view = parse_cfg(samples.OLD, "old.cfg")
    assert (view.version, view.header_style, view.description) == ("3.1", "old", "old style")
    window = view.windows[0]
    assert window.level == "appl"                             # ptask is the old name of appl
    assert window.compose["topcompose1"].name == "Select Range"
    assert window.compose["topcompose1"].params == ((9223372036854775808,), (0,))
    assert window.functions["thread"].params == ()            # Avg Next Evt Val is not the one selected
    assert window.drawmode == "draw_random"                   # old numeric code 3
    assert window.filters.criteria["evt_type"].values == (60000020,)
    assert any("legacy tag window_pos_to_disp" in note for note in view.notes)
    assert any("legacy tag window_selected_objects" in note for note in view.notes)


def test_crlf_reads_like_lf():
    assert parse_cfg(samples.with_histogram().replace("\n", "\r\n")) == parse_cfg(samples.with_histogram())


def test_wrong_declared_counts_are_noted_not_trusted():
    text = samples.single(count=5).replace("{ 14, {", "{ 15, {")
    view = parse_cfg(text)
    assert len(view.windows) == 1
    assert any("declares 5 windows, holds 1" in note for note in view.notes)
    assert any("window_selected_functions declares 15, lists 14" in note for note in view.notes)


def test_unknown_tags_are_skipped_with_a_note():
    view = parse_cfg(samples.single() + "window_sparkle_mode on\n")
    assert any("unknown tag 'window_sparkle_mode' skipped" in note for note in view.notes)


def test_missing_level_defaults_to_thread_with_a_note():
    view = parse_cfg(samples.single().replace("window_level thread\n", ""))
    assert view.windows[0].level == "thread"
    assert any("has no window_level" in note for note in view.notes)


def test_legacy_function_name_is_mapped():
    view = parse_cfg(samples.single().replace("{task, Thread i}", "{task, Adding Sign}"))
    assert view.windows[0].functions["task"].name == "AddingSign"
    assert any("legacy function name 'Adding Sign'" in note for note in view.notes)


def test_repeated_header_keeps_positions():
    text = samples.single() + samples.single().replace("Instructions", "Second")
    view = parse_cfg(text)
    assert [w.position for w in view.windows] == [1, 2]
    assert any("a second header" in note for note in view.notes)


def test_cfg4d_aliases_are_kept():
    text = samples.with_histogram() + "cfg4dstatistic Sum bursts|total instructions\n"
    view = parse_cfg("CFG4D_ENABLED\n" + text)
    assert view.cfg4d
    assert view.histograms[0].aliases == [("cfg4dstatistic", "Sum bursts|total instructions")]


@pytest.mark.parametrize("text, message", [
    ("#DIMEMAS_CONFIGURATION\nwhatever\n", r"^d\.cfg:1: a Dimemas configuration"),
    (samples.single("=", "1 @COUNTER@"), r"^d\.cfg:\d+: template placeholder @COUNTER@ not filled in"),
    ("window_name x\n", r"^d\.cfg: not a Paraver cfg"),
    (samples.single("=", "1 " + "9" * 500), r"^d\.cfg:\d+: window_filter_module: number of 500 characters"),
    (samples.single("=", "1 1e400").replace("window_id 1", "window_identifiers 1e400 1"),
     r"window_identifiers: '1e400' is not a whole number"),
    (samples.single("=", "1 4e2x"), r"^d\.cfg:\d+: window_filter_module: '4e2x' is not a number"),
    (samples.single().replace("window_logical_filtered true", "window_logical_filtered maybe"),
     r"window_logical_filtered: 'maybe' is neither true nor false"),
    (samples.single().replace("window_level thread", "window_level galaxy"), r"level 'galaxy' is not one of"),
    (samples.single().replace("{ 1, { 1 3.000000000000 } }", "{ 1, { 2 3.0 } }"),
     r"declares 2 values, has 1"),
    ("#ParaverCFG\nConfigFile.Version: 3.4\nwindow_type single\n", r"window_type outside a window"),
])
def test_refusals_are_one_line_and_name_file_and_line(text, message):
    with pytest.raises(CfgError, match=message) as caught:
        parse_cfg(text, "d.cfg")
    assert "\n" not in str(caught.value)


def test_read_cfg_bounds_and_unreadable(tmp_path, monkeypatch):
    from popview.analysis.cfg import reader
    path = tmp_path / "big.cfg"
    path.write_text(samples.single())
    assert read_cfg(path).windows[0].name == "Instructions"
    monkeypatch.setattr(reader, "MAX_FILE_BYTES", 100)
    with pytest.raises(CfgError, match="big.cfg: larger than"):
        read_cfg(path)
    with pytest.raises(CfgError, match="missing.cfg: cannot read"):
        read_cfg(tmp_path / "missing.cfg")
