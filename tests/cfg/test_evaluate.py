"""The small cfg engine on a hand-made trace whose answers are worked out by hand."""
from __future__ import annotations

import numpy as np
import pytest

from popview.analysis.cfg import Binning, CfgView, Criterion, Derivation, Function, Histogram, Window, parse_cfg
from popview.analysis.cfg.evaluate import NotEvaluated, TraceColumns, evaluate_histogram, evaluate_window
from popview.analysis.cfg.writer import write_cfg

INS = 42000050
DBL_MAX = 1.7976931348623157e308


def _trace() -> TraceColumns:
    # row 0: running [0,40), MPI [40,60), running [60,100); row 1 running throughout
    states = {"loc": np.array([0, 0, 0, 1], np.int32), "begin": np.array([0, 40, 60, 0], np.int64),
              "end": np.array([40, 60, 100, 100], np.int64), "state": np.array([1, 3, 1, 1], np.int32)}
    # instructions read at 40 and 100 on row 0 (a second type at 40 is filtered out), 50 and 100 on row 1
    events = {"loc": np.array([0, 0, 0, 1, 1], np.int32), "time": np.array([40, 40, 100, 50, 100], np.int64),
              "type": np.array([INS, 7, INS, INS, INS], np.int32),
              "value": np.array([400, 99, 300, 10, 20], np.int64)}
    return TraceColumns(t_end=100, n_rows=2, states=states, events=events)


def _view(statistic="Sum bursts", control=3, columns=Binning(3, False, 0, 1e18, 1e18)) -> CfgView:
    instructions = Window("Instructions", 1, functions={"thread": Function("Next Evt Val")})
    instructions.filters.criteria["evt_type"] = Criterion("=", (INS,))
    useful = Window("Useful", 2, functions={"thread": Function("Useful")})
    product = Window("Useful instructions", 3, derivation=Derivation("product", (1, 2)))
    histogram = Histogram("h", columns, control, statistic, data_range=(-DBL_MAX, DBL_MAX),
                          burst_range=(-DBL_MAX, DBL_MAX))
    view = CfgView("t", "3.4", "new", windows=[instructions, useful, product], histograms=[histogram])
    return parse_cfg(write_cfg(view), "t.cfg")          # through the cfg text, as a file would come


def test_next_event_value_and_useful_timelines():
    view, trace = _view(), _trace()
    ins = evaluate_window(view, 1, trace)
    assert ins.row.tolist() == [0, 0, 1, 1]
    assert list(zip(ins.begin.tolist(), ins.end.tolist(), ins.value.tolist())) == \
        [(0, 40, 400), (40, 100, 300), (0, 50, 10), (50, 100, 20)]
    useful = evaluate_window(view, 2, trace)
    assert useful.value.tolist() == [1, 0, 1, 1]


def test_derived_product_on_the_union_of_boundaries():
    product = evaluate_window(_view(), 3, _trace())
    assert list(zip(product.row.tolist(), product.begin.tolist(), product.end.tolist(), product.value.tolist())) == \
        [(0, 0, 40, 400), (0, 40, 60, 0), (0, 60, 100, 300), (1, 0, 50, 10), (1, 50, 100, 20)]


def test_sum_bursts_gives_useful_instructions_per_row():
    table = evaluate_histogram(_view(), _view().histograms[0], _trace())
    assert table.table[:, 0].tolist() == [700, 30]


def test_time_of_the_useful_column():
    view = _view("Time", control=2, columns=Binning(2, False, 1, 1, 1))
    table = evaluate_histogram(view, view.histograms[0], _trace())
    assert table.columns.tolist() == [1] and table.table[:, 0].tolist() == [80, 100]


def test_what_is_not_evaluated_is_named():
    view = _view("Stdev Burst Time")
    with pytest.raises(NotEvaluated, match="statistic 'Stdev Burst Time'"):
        evaluate_histogram(view, view.histograms[0], _trace())
    view.windows[1].functions["thread"] = Function("In Cpu ID")
    with pytest.raises(NotEvaluated, match="thread function 'In Cpu ID'"):
        evaluate_window(view, 3, _trace())


def test_two_readings_at_one_instant_next_takes_the_first_last_the_last():
    trace = _trace()
    trace.events = {"loc": np.array([0, 0, 0], np.int32), "time": np.array([40, 40, 100], np.int64),
                    "type": np.array([INS, INS, INS], np.int32), "value": np.array([5, 6, 7], np.int64)}
    view = _view()
    assert evaluate_window(view, 1, trace).value[:2].tolist() == [5, 7]
    view.windows[0].functions["thread"] = Function("Last Evt Val")
    assert evaluate_window(view, 1, trace).value[:2].tolist() == [0, 6]


def test_a_filtered_event_type_absent_from_the_trace_gives_zero_over_each_row():
    view, trace = _view(), _trace()
    view.window(1).filters.criteria["evt_type"] = Criterion("=", (12345,))
    for function in ("Next Evt Val", "Last Evt Val"):
        view.window(1).functions["thread"] = Function(function)
        timeline = evaluate_window(view, 1, trace)
        assert timeline.row.tolist() == [0, 1] and timeline.value.tolist() == [0, 0]
        assert timeline.begin.tolist() == [0, 0] and timeline.end.tolist() == [100, 100]


def test_given_state_and_state_sign():
    view, trace = _view(), _trace()
    view.window(2).functions["thread"] = Function("Given State", ((3.0,),))
    assert evaluate_window(view, 2, trace).value.tolist() == [0, 3, 0, 0]
    view.window(2).functions["thread"] = Function("State Sign")
    trace.states["state"] = np.array([1, 0, 1, 5], np.int32)
    assert evaluate_window(view, 2, trace).value.tolist() == [1, 0, 1, 1]


def _stack_by_hand(loc, values):
    out, stacks = [], {}
    for row, v in zip(loc, values):
        stack = stacks.setdefault(row, [])
        if v != 0:
            stack.append(v)
        elif stack:
            stack.pop()
        out.append(stack[-1] if stack else 0.0)
    return out


def test_stacked_val_is_paravers_stack_per_row():
    from popview.analysis.cfg.evaluate import _stacked

    rng = np.random.default_rng(23)
    for _ in range(500):
        n = int(rng.integers(0, 50))
        loc = np.sort(rng.integers(0, 4, n))
        values = np.where(rng.random(n) < 0.45, 0, rng.integers(1, 9, n)).astype(np.float64)
        assert _stacked(loc, values).tolist() == _stack_by_hand(loc, values)
    # nested regions: 5 opens, 7 opens inside, 7 closes (back to 5), a close too many is ignored
    assert _stacked(np.zeros(6, int), np.array([5, 7, 0, 0, 0, 3.0])).tolist() == [5, 7, 5, 0, 0, 3]


def test_sign_top_compose_and_stacked_last_event_value():
    view, trace = _view(), _trace()
    view.window(1).functions["thread"] = Function("Last Evt Val")
    view.window(1).compose["compose_thread"] = Function("Stacked Val")
    view.window(3).compose["topcompose1"] = Function("Sign")
    # row 0: 400 pushed at 40 (300 pushed at the end); row 1: 10 pushed at 50
    assert evaluate_window(view, 1, trace).value.tolist() == [0, 400, 0, 10]
    product = evaluate_window(view, 3, trace)            # Sign(instructions x useful)
    assert list(zip(product.row.tolist(), product.begin.tolist(), product.value.tolist())) == \
        [(0, 0, 0.0), (0, 40, 0.0), (0, 60, 1.0), (1, 0, 0.0), (1, 50, 1.0)]


def test_average_value_percent_time_and_integral():
    trace = _trace()
    # the instructions window (Next Evt Val) binned by the useful window (columns 0 and 1)
    full = (-DBL_MAX, DBL_MAX)
    def table(statistic):
        view = _view()
        view.histograms[0] = Histogram("h", Binning(2, False, 0, 1, 1), 1, statistic, data_range=full, burst_range=full)
        return evaluate_histogram(parse_cfg(write_cfg(view), "t.cfg"), parse_cfg(write_cfg(view), "t.cfg").histograms[0], trace)
    # row 0: useful [0,40) value 400, MPI [40,60) value 300, useful [60,100) value 300
    # row 1: useful [0,50) value 10, [50,100) value 20
    avg = table("Average value")
    assert avg.columns.tolist() == [0, 1]
    assert avg.table[0].tolist() == [300, (40 * 400 + 40 * 300) / 80] and avg.table[1].tolist() == [0, 15]
    assert table("% Time").table.tolist() == [[20, 80], [0, 100]]
    assert table("Integral").table.tolist() == [[20 * 300, 40 * 400 + 40 * 300], [0, 50 * 10 + 50 * 20]]


def test_interval_between_events_in_the_windows_units():
    view, trace = _view(), _trace()
    view.window(1).functions["thread"] = Function("Int. Between Evt")
    view.window(1).units = "Nanoseconds"
    # row 0: events at 40 and 100 -> [40,100) is 60; row 1: at 50 and 100 -> [50,100) is 50
    timeline = evaluate_window(view, 1, trace)
    assert list(zip(timeline.row.tolist(), timeline.begin.tolist(), timeline.value.tolist())) == \
        [(0, 0, 0.0), (0, 40, 60.0), (1, 0, 0.0), (1, 50, 50.0)]
    view.window(1).units = "Microseconds"
    assert evaluate_window(view, 1, trace).value.tolist() == [0, 0.06, 0, 0.05]


def test_state_record_duration_of_the_given_states_in_the_window_units():
    window = Window("Useful Duration", 1, functions={"thread": Function("State Record Dur.", ((1.0,),))},
                    units="Nanoseconds")
    view = parse_cfg(write_cfg(CfgView("t", "3.4", "new", windows=[window])), "t.cfg")
    d = evaluate_window(view, 1, _trace())
    assert list(zip(d.row.tolist(), d.value.tolist())) == [(0, 40.0), (0, 0.0), (0, 40.0), (1, 100.0)]
    view.windows[0].functions["thread"] = Function("State Record Dur.", ((3.0,),))
    assert evaluate_window(view, 1, _trace()).value.tolist() == [0.0, 20.0, 0.0, 0.0]


@pytest.mark.parametrize("name, expected", [
    # the next event's value x 2 per ns of its interval: 400 over [0,40), 300 over [40,100); 10 / 50, 20 / 50
    ("Avg Next Evt Val", [2 * 400 / 40, 2 * 300 / 60, 2 * 10 / 50, 2 * 20 / 50]),
    # the last event's value per ns of the interval it starts; nothing before the first, nor after the last
    ("Avg Last Evt Val", [0.0, 2 * 400 / 60, 0.0, 2 * 10 / 50]),
])
def test_average_event_values_per_unit_of_time(name, expected):
    window = Window("Rate", 1, functions={"thread": Function(name, ((2.0,),))}, units="Nanoseconds")
    window.filters.criteria["evt_type"] = Criterion("=", (INS,))
    view = parse_cfg(write_cfg(CfgView("t", "3.4", "new", windows=[window])), "t.cfg")
    rate = evaluate_window(view, 1, _trace())
    np.testing.assert_allclose(rate.value, expected)


def _states_view(*histograms, windows=()):
    useful = Window("Useful", 1, functions={"thread": Function("Useful")}, units="Nanoseconds")
    states = Window("States", 2, functions={"thread": Function("State As Is")}, units="Nanoseconds")
    duration = Window("Running duration", 3, functions={"thread": Function("State Record Dur.", ((1.0,),))},
                      units="Nanoseconds", color_mode="window_in_gradient_mode")
    view = CfgView("t", "3.4", "new", windows=[useful, states, duration, *windows], histograms=list(histograms))
    return parse_cfg(write_cfg(view), "t.cfg")


FULL = dict(data_range=(-DBL_MAX, DBL_MAX), burst_range=(-DBL_MAX, DBL_MAX))


def test_a_3d_histogram_has_a_plane_per_value_of_its_third_window():
    h = Histogram("3D", Binning(1, False, 0, 1, 1), 1, "Time", planes=Binning(2, True), **FULL)
    t = evaluate_histogram(_states_view(h), _states_view(h).histograms[0], _trace())
    # Paraver's computed 3D scale of a code-coloured window: a plane per whole value from the
    # smallest non-zero one to the largest, the values between included (state 2 has no time)
    assert t.planes.tolist() == [1, 2, 3] and t.counted.tolist() == [True, False, True]
    # plane state 1 (running): useful column 1 holds 80 ns on row 0, 100 on row 1; plane 3: 20 ns not useful
    assert t.table[0].tolist() == [[0, 80], [0, 100]] and t.table[2].tolist() == [[20, 0], [0, 0]]


def test_a_computed_scale_of_a_gradient_window_has_paraver_s_200_columns():
    h = Histogram("durations", Binning(3, True), 3, "# Bursts", **FULL)
    view = _states_view(h)
    t = evaluate_histogram(view, view.histograms[0], _trace())
    # from the smallest non-zero value, 40, to the largest plus 5 % of the range: 100 + 3
    assert len(t.columns) == 200 and t.columns[0] == 40 and t.column_axis.delta == pytest.approx(63 / 200)
    assert t.table[0, 0] == 2 and t.table[1, int((100 - 40) / (63 / 200))] == 1 and t.table.sum() == 3


@pytest.mark.parametrize("statistic, expected", [
    ("# Bursts != 0", [[1, 2], [0, 1]]),
    ("% # Bursts", [[100 / 3, 200 / 3], [0, 100]]),
    ("Maximum", [[3, 1], [0, 1]]),
    ("Minimum", [[3, 1], [0, 1]]),
    ("Average per Burst", [[3, 1], [0, 1]]),
    ("Average Burst Time", [[20, 40], [0, 100]]),
    ("% Window Time", [[20, 80], [0, 100]]),
])
def test_burst_statistics(statistic, expected):
    h = Histogram("h", Binning(1, False, 0, 1, 1), 2, statistic, **FULL)
    view = _states_view(h)
    np.testing.assert_allclose(evaluate_histogram(view, view.histograms[0], _trace()).table, expected)


def test_communication_statistics_are_per_partner():
    trace = _trace()
    trace.messages = {"send_loc": np.array([0, 0, 1], np.int32), "recv_loc": np.array([1, 1, 0], np.int32),
                      "send_time": np.array([1, 2, 3]), "recv_time": np.array([4, 5, 6]),
                      "size": np.array([10, 20, 5])}
    sends = Histogram("sends", Binning(2, False, 0, 20, 1), 2, "#Sends", **FULL)
    received = Histogram("bytes", Binning(2, False, 0, 20, 1), 2, "Bytes received", **FULL)
    view = _states_view(sends, received)
    t = evaluate_histogram(view, view.histograms[0], trace)
    assert t.partners and t.table.tolist() == [[0, 2], [1, 0]]
    assert evaluate_histogram(view, view.histograms[1], trace).table.tolist() == [[0, 5], [30, 0]]
    trace.messages = None                   # no communications: no record to count, as paramedir
    assert evaluate_histogram(view, view.histograms[0], trace).table.tolist() == [[0, 0], [0, 0]]


def test_stateless_compose_functions():
    sign = Window("In MPI", 4, functions={"thread": Function("State As Is")},
                  compose={"compose_thread": Function("Is Equal (Sign)", ((3.0,),))})
    # topcompose2 first, then topcompose1 (the kernel's nesting; paramedir on heat 2x2 gives
    # Useful with topcompose1 Add 5 and topcompose2 Prod 2 as 5 and 7, not 10 and 12)
    ranged = Window("Long running", 5, functions={"thread": Function("State Record Dur.", ((1.0,),))}, units="Nanoseconds",
                    compose={"topcompose1": Function("Select Range", ((10.0,), (5.0,))),
                             "topcompose2": Function("Div", ((10.0,),))})
    equal = Window("Running or MPI + 1", 6, functions={"thread": Function("State As Is")},
                   compose={"compose_thread": Function("Is Equal", ((3.0,),)), "topcompose1": Function("Add", ((1.0,),))})
    view = _states_view(windows=[sign, ranged, equal])
    assert evaluate_window(view, 4, _trace()).value.tolist() == [0, 1, 0, 0]
    assert evaluate_window(view, 5, _trace()).value.tolist() == [0, 0, 0, 10]
    assert evaluate_window(view, 6, _trace()).value.tolist() == [1, 4, 1, 1]
    swapped = view.window(5).compose
    swapped["topcompose1"], swapped["topcompose2"] = swapped["topcompose2"], swapped["topcompose1"]
    assert evaluate_window(view, 5, _trace()).value.tolist() == [0, 0, 0, 0]   # Select Range first: 100 is not in [5, 10]


def test_task_rows_of_single_threaded_tasks():
    task = Window("Useful per task", 4, level="task",
                  functions={"thread": Function("Useful"), "task": Function("Thread i", ((1.0,),))})
    zero = Window("Thread 0", 5, level="task",
                  functions={"thread": Function("Useful"), "task": Function("Thread i", ((0.0,),))})
    view = _states_view(windows=[task, zero])
    trace = _trace()
    with pytest.raises(NotEvaluated, match="tasks of the trace's threads are not known"):
        evaluate_window(view, 4, trace)
    trace.one_thread_per_task = True
    assert evaluate_window(view, 4, trace).value.tolist() == [1, 0, 1, 1]
    assert evaluate_window(view, 5, trace).value.tolist() == [0, 0, 0, 0]      # ObjectI is 1-based


def test_event_value_filter_and_the_window_s_time_limits():
    window = Window("300 only", 1, functions={"thread": Function("Next Evt Val")})
    window.filters.criteria["evt_type"] = Criterion("=", (INS,))
    window.filters.criteria["evt_value"] = Criterion("=", (300,))
    view = parse_cfg(write_cfg(CfgView("t", "3.4", "new", windows=[window])), "t.cfg")
    v = evaluate_window(view, 1, _trace())
    assert list(zip(v.row.tolist(), v.end.tolist(), v.value.tolist())) == [(0, 100, 300), (1, 100, 0)]
    h = Histogram("first half", Binning(1, False, 0, 1, 1), 1, "Time", limits="Allwindow", **FULL)
    states = _states_view(h)
    states.windows[0].begin_time, states.windows[0].end_time = 0.0, 50.0
    assert evaluate_histogram(states, states.histograms[0], _trace()).table.tolist() == [[10, 40], [0, 50]]


def test_paramedir_writes_each_plane_with_values_under_its_label():
    from popview.analysis.cfg.paramedir import evaluate_cfg, format_table

    h = Histogram("3D", Binning(1, False, 0, 1, 1), 1, "Time", planes=Binning(2, False, 0, 4, 1), plane_shown=3.0,
                  **FULL)
    view = _states_view(h)
    (table,), skipped = evaluate_cfg(view, _trace(), ["THREAD 1.1.1", "THREAD 1.2.1"])
    assert not skipped and table.plane_labels == ["1", "3"] and table.plane_shown == 1
    text = format_table(table)
    assert text.startswith("1\n\t0\t1\t\nTHREAD 1.1.1\t0.00\t80.00\t\nTHREAD 1.2.1\t0.00\t100.00\t\n\nTotal")
    assert "\n3\n\t0\t1\t\nTHREAD 1.1.1\t20.00\t0.00\t\n" in text


def test_stacked_val_in_any_slot_composes_the_row_s_sequence_of_values():
    view, trace = _view(), _trace()
    window = view.window(1)
    window.functions["thread"] = Function("Last Evt Val")
    window.compose["topcompose2"] = Function("Stacked Val")
    assert evaluate_window(view, 1, trace).value.tolist() == [0, 400, 0, 10]
    window.compose["compose_thread"] = Function("Stacked Val")
    window.compose["topcompose2"] = Function("Sign")            # composes the stack's top
    assert evaluate_window(view, 1, trace).value.tolist() == [0, 1, 0, 1]
    window.compose["topcompose2"] = Function("Stacked Val")
    window.compose["compose_thread"] = Function("Sign")         # a stack of signs, event by event
    assert evaluate_window(view, 1, trace).value.tolist() == [0, 1, 0, 1]
    window.compose["topcompose1"] = Function("1-Sign")          # after topcompose2's stack
    assert evaluate_window(view, 1, trace).value.tolist() == [1, 0, 1, 0]
    window.compose["topcompose1"] = Function("As Is")
    window.compose["compose_thread"] = Function("1-Sign")       # 1 at the row's start is pushed, each event pops
    assert evaluate_window(view, 1, trace).value.tolist() == [1, 0, 1, 0]


def _messages_view(function: Function, units="Microseconds") -> CfgView:
    window = Window("in transit", 1, functions={"thread": function}, units=units)
    return CfgView("t", "3.4", "new", windows=[window])


def _messages(trace: TraceColumns) -> TraceColumns:
    # 0 -> 1: 1000 bytes, sent at 10, received at 30 (physical 20): in transit [10, 30), 50 bytes/ns;
    # 1 -> 0: 400 bytes, sent at 50, received at 40 (physical 45): negative, received before sent
    trace.messages = {"send_loc": np.array([0, 1], np.int32), "recv_loc": np.array([1, 0], np.int32),
                      "send_time": np.array([10, 50]), "send_phys": np.array([10, 50]),
                      "recv_time": np.array([30, 40]), "recv_phys": np.array([20, 45]),
                      "size": np.array([1000, 400])}
    return trace


def _steps(timeline):
    """The intervals with consecutive equal values of a row merged (the values, not where the
    kernel's intervals start: at every communication record of the row)."""
    steps = list(zip(timeline.row.tolist(), timeline.begin.tolist(), timeline.end.tolist(),
                     np.round(timeline.value, 9).tolist()))
    merged = steps[:1]
    for row, begin, end, value in steps[1:]:
        if merged[-1][0] == row and merged[-1][3] == value and merged[-1][2] == begin:
            merged[-1] = (row, merged[-1][1], end, value)
        else:
            merged.append((row, begin, end, value))
    return merged


def test_in_transit_intervals_start_at_each_communication_record_of_the_row():
    """The kernel's send functions take the sender's logical send and receive records (and the
    physical receive when it is not earlier than the logical one), whatever they change."""
    timeline = evaluate_window(_messages_view(Function("Send Messages in Transit")), 1, _messages(_trace()))
    assert list(zip(timeline.row.tolist(), timeline.begin.tolist(), timeline.value.tolist())) == [
        (0, 0, 0), (0, 10, 1), (0, 30, 0), (1, 0, 0), (1, 40, 0), (1, 45, 0), (1, 50, 0)]


@pytest.mark.parametrize("name,row,value", [
    ("Send BandWidth", 0, 50000.0), ("Recv BandWidth", 1, 50000.0),          # bytes per microsecond
    ("Send Bytes in Transit", 0, 1000.0), ("Recv Bytes in Transit", 1, 1000.0),
    ("Send Messages in Transit", 0, 1.0), ("Recv Messages in Transit", 1, 1.0)])
def test_what_is_in_transit_counts_from_the_send_to_the_later_receive(name, row, value):
    trace = _messages(_trace())
    timeline = evaluate_window(_messages_view(Function(name)), 1, trace)
    other = 1 - row
    assert [s for s in _steps(timeline) if s[0] == row] == [(row, 0, 10, 0.0), (row, 10, 30, value),
                                                            (row, 30, 100, 0.0)]
    assert [s for s in _steps(timeline) if s[0] == other] == [(other, 0, 100, 0.0)]   # negative: left out


def test_bandwidth_factor_units_and_the_negative_message_counters():
    trace = _messages(_trace())
    kib_per_ns = evaluate_window(_messages_view(Function("Recv BandWidth", ((1024.0,),)), "Nanoseconds"), 1, trace)
    assert _steps(kib_per_ns)[2] == (1, 10, 30, round(1000 / 1024 / 20, 9))
    negative = evaluate_window(_messages_view(Function("Recv Negative Messages")), 1, trace)
    # the 1 -> 0 message on its receiver (row 0): +1 at its (later, physical) receive 45, -1 at its send 50
    assert [s for s in _steps(negative) if s[0] == 0] == [(0, 0, 45, 0.0), (0, 45, 50, 1.0), (0, 50, 100, 0.0)]
    assert [s for s in _steps(negative) if s[0] == 1] == [(1, 0, 100, 0.0)]
    physical = _messages_view(Function("Recv Negative Bytes"))
    physical.window(1).filters.logical = False
    assert _steps(evaluate_window(physical, 1, trace)) == [(0, 0, 100, 0.0), (1, 0, 100, 0.0)]   # no filter: nothing passes
    physical.window(1).filters.physical = True
    assert _steps(evaluate_window(physical, 1, trace)) == [(0, 0, 45, 0.0), (0, 45, 50, 400.0), (0, 50, 100, 0.0),
                                                           (1, 0, 100, 0.0)]
    trace.messages = None                   # no communications: 0 throughout, as paramedir
    assert _steps(evaluate_window(_messages_view(Function("Send BandWidth")), 1, trace)) == \
        [(0, 0, 100, 0.0), (1, 0, 100, 0.0)]
