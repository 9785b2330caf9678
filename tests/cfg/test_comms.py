"""Communication records in the cfg engine: Event Bytes and the window's message filters, on a
hand-made trace whose answers are worked out by hand from the kernel's rules."""
from __future__ import annotations

import numpy as np

from popview.analysis.cfg import Binning, CfgView, Criterion, Function, Histogram, Window
from popview.analysis.cfg.comms import message_mask
from popview.analysis.cfg.evaluate import TraceColumns, evaluate_histogram, evaluate_window

MPI = 50000001


def _trace() -> TraceColumns:
    states = {"loc": np.array([0, 1], np.int32), "begin": np.array([0, 0], np.int64),
              "end": np.array([100, 100], np.int64), "state": np.array([1, 1], np.int32)}
    # row 0: MPI events at 10, 30, 30 (two at one instant) and 60
    events = {"loc": np.array([0, 0, 0, 0], np.int32), "time": np.array([10, 30, 30, 60], np.int64),
              "type": np.full(4, MPI, np.int32), "value": np.array([1, 0, 1, 0], np.int64)}
    # m0: 0 -> 1 sent at 10; m1: 1 -> 0 received at 30 logically, 28 physically;
    # m2: 1 -> 0 received at 50 logically, 55 physically; m3: 0 -> 1 sent at 30;
    # m4: 1 -> 0 received (logically) before it was sent
    messages = {"send_loc": np.array([0, 1, 1, 0, 1], np.int32), "recv_loc": np.array([1, 0, 0, 1, 0], np.int32),
                "send_time": np.array([10, 25, 40, 30, 80], np.int64),
                "send_phys": np.array([12, 25, 40, 30, 80], np.int64),
                "recv_time": np.array([20, 30, 50, 40, 70], np.int64),
                "recv_phys": np.array([18, 28, 55, 40, 70], np.int64),
                "size": np.array([100, 7, 1000, 5, 3], np.int64), "tag": np.array([1, 2, 2, 1, 9], np.int64)}
    return TraceColumns(t_end=100, n_rows=2, states=states, events=events, messages=messages)


def _window(function="Event Bytes", **filters) -> Window:
    window = Window("w", 1, functions={"thread": Function(function)})
    window.filters.criteria["evt_type"] = Criterion("=", (MPI,))
    window.filters.logical, window.filters.physical = True, False
    for key, criterion in filters.items():
        window.filters.criteria[key] = criterion
    return window


def _intervals(window: Window, trace: TraceColumns | None = None):
    t = evaluate_window(CfgView("t", "3.4", "new", windows=[window]), 1, trace or _trace())
    return list(zip(t.row.tolist(), t.begin.tolist(), t.end.tolist(), t.value.tolist()))


def test_event_bytes_adds_the_records_from_one_event_to_the_next():
    # [10,30): m0's send at 10, m1's logical receive at 30 (later than its physical one);
    # [60,100): after the row's last event, 0 (m4's receive at 70 is not counted)
    # [30,60): m3's send at 30 (the later of the two events there), m2's logical receive at 50
    # and its physical one at 55 (not before the logical one: the filter passes it, counted too)
    assert _intervals(_window()) == [(0, 0, 10, 0.0), (0, 10, 30, 107.0), (0, 30, 60, 2005.0), (0, 60, 100, 0.0),
                                     (1, 0, 100, 0.0)]


def test_event_sent_bytes_adds_the_sends_only():
    assert _intervals(_window("Event Sent Bytes")) == [(0, 0, 10, 0.0), (0, 10, 30, 100.0), (0, 30, 60, 5.0),
                                                       (0, 60, 100, 0.0), (1, 0, 100, 0.0)]


def test_physically_filtered_event_bytes_reads_the_physical_records():
    window = _window()
    window.filters.logical, window.filters.physical = False, True
    # [10,30): m0's physical send at 12 and m1's physical receive at 28; [30,60): m3's send, m2's at 55
    assert _intervals(window)[1:3] == [(0, 10, 30, 107.0), (0, 30, 60, 1005.0)]


def test_message_filters_select_what_event_bytes_adds():
    from_row_2 = _window(from_obj=Criterion("=", (2,)))          # objects are 1-based in a cfg
    assert _intervals(from_row_2)[1:3] == [(0, 10, 30, 7.0), (0, 30, 60, 2000.0)]
    tag_1 = _window(tag_msg=Criterion("=", (1,)))
    assert _intervals(tag_1)[1:3] == [(0, 10, 30, 100.0), (0, 30, 60, 5.0)]
    no_values = _window(to_obj=Criterion("="))                   # a function without values passes nothing
    assert _intervals(no_values)[1:3] == [(0, 10, 30, 0.0), (0, 30, 60, 0.0)]


def test_message_mask_follows_kfilter():
    trace = _trace()
    backwards = _window(bw_msg=Criterion("<", (0.0,)))
    assert message_mask(backwards, trace).tolist() == [False, False, False, False, True]
    either = _window(from_obj=Criterion("=", (1,)), to_obj=Criterion("=", (1,)))
    either.filters.fromto_and = False                            # from OR to
    assert message_mask(either, trace).tolist() == [True, True, True, True, True]
    both = _window(from_obj=Criterion("=", (1,)), to_obj=Criterion("=", (1,)))
    assert message_mask(both, trace).tolist() == [False] * 5
    tag_or_size = _window(tag_msg=Criterion("=", (9,)), size_msg=Criterion(">", (500,)))
    tag_or_size.filters.tagsize_and = False
    assert message_mask(tag_or_size, trace).tolist() == [False, False, True, False, True]
    between = _window(size_msg=Criterion("[x,y]", (5, 100)))
    assert message_mask(between, trace).tolist() == [True, True, False, True, False]


def test_number_of_receives_adds_each_message_once_at_its_later_receive():
    # row 0: m1 at 30 (logical, later), m2 at 55 (physical), m4 at 70 (both: the physical record);
    # row 1: m0 at 20 (logical), m3 at 40
    assert _intervals(_window("Number Of Receives")) == [
        (0, 0, 30, 0.0), (0, 30, 50, 1.0), (0, 50, 55, 1.0), (0, 55, 70, 2.0), (0, 70, 100, 3.0),
        (1, 0, 20, 0.0), (1, 20, 40, 1.0), (1, 40, 100, 2.0)]


def test_comm_partner_is_the_receiver_of_the_last_send():
    assert _intervals(_window("Comm Partner")) == [
        (0, 0, 10, 0.0), (0, 10, 30, 2.0), (0, 30, 100, 2.0),
        (1, 0, 25, 0.0), (1, 25, 40, 1.0), (1, 40, 80, 1.0), (1, 80, 100, 1.0)]


def test_send_statistic_counts_what_the_control_window_filter_passes():
    window = _window("State As Is", tag_msg=Criterion("=", (1,)))
    histogram = Histogram("h", Binning(1, False, 0, 1, 1), 1, "#Sends")
    view = CfgView("t", "3.4", "new", windows=[window], histograms=[histogram])
    table = evaluate_histogram(view, histogram, _trace())
    assert table.table.tolist() == [[0, 2], [0, 0]]            # m0 and m3, tag 1, from row 0 to row 1


def test_join_bursts_is_broken_by_an_interval_of_no_duration():
    # row 0's MPI values 1 at 10, 0 and 1 at 30, 0 at 60: the 0 that lasts no time at 30 keeps
    # [10,30) and [30,60) apart, as the kernel walks the records; Burst Time then gives durations
    window = _window("Last Evt Val")
    window.units = "Nanoseconds"
    window.compose = {"topcompose2": Function("Join Bursts"), "topcompose1": Function("Burst Time")}
    assert _intervals(window)[:4] == [(0, 0, 10, 10.0), (0, 10, 30, 20.0), (0, 30, 60, 30.0), (0, 60, 100, 40.0)]
    window.compose = {"topcompose2": Function("Nesting level")}
    assert _intervals(window)[:4] == [(0, 0, 10, 0.0), (0, 10, 30, 1.0), (0, 30, 60, 1.0), (0, 60, 100, 0.0)]


def test_controlled_operations_on_the_control_window_s_intervals():
    from popview.analysis.cfg.evaluate import Timeline, _controlled
    control = Timeline(np.zeros(4, np.int32), np.array([0, 10, 20, 40]), np.array([10, 20, 40, 100]),
                       np.array([1.0, 0.0, 2.0, 1.0]), 1)
    data = Timeline(np.zeros(3, np.int32), np.array([0, 5, 30]), np.array([5, 30, 100]), np.array([3.0, 7.0, 4.0]), 1)
    assert _controlled("controlled: maximum", data, control, 1.0).value.tolist() == [7, 7, 7, 4]
    # a control value below the one before clears and marks the data interval then current:
    # [10,20) clears (7's interval marked), [20,40) shows 4 (a new data interval), [40,100) clears
    cleared = _controlled("controlled: clear by", data, control, 1.0)
    assert cleared.begin.tolist() == [0, 10, 20, 40] and cleared.value.tolist() == [7, 0, 4, 0]


def test_changed_value_of_a_task_of_one_thread_is_its_thread_s_value():
    trace = _trace()
    trace.one_thread_per_task = True
    window = _window("Last Evt Val")
    window.level = "task"
    window.functions["task"] = Function("Changed value")
    assert _intervals(window, trace)[:4] == [(0, 0, 10, 0.0), (0, 10, 30, 1.0), (0, 30, 60, 1.0), (0, 60, 100, 0.0)]
