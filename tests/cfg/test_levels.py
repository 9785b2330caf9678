"""Rows above the thread (task, application, workload; CPU, node, system) on a hand-made
trace of two tasks of two threads each, whose answers are worked out by hand."""
from __future__ import annotations

import numpy as np
import pytest

from popview.analysis.cfg import CfgView, Criterion, Derivation, Function, Window, parse_cfg
from popview.analysis.cfg.evaluate import NotEvaluated, TraceColumns, evaluate_window
from popview.analysis.cfg.levels import Hierarchy
from popview.analysis.cfg.writer import write_cfg

EVT = 1000


def _trace(hierarchy: Hierarchy | None = None) -> TraceColumns:
    """Threads 0, 1 in task 0 and 2, 3 in task 1 (both tasks in application 0), 100 ns.
    Event values (Last Evt Val): thread 0: 5 from 10, 0 from 60; thread 1: 3 from 30;
    thread 2: 4 from 20, 2 from 50; thread 3: none."""
    states = {"loc": np.arange(4, dtype=np.int32), "begin": np.zeros(4, np.int64),
              "end": np.full(4, 100, np.int64), "state": np.ones(4, np.int32)}
    events = {"loc": np.array([0, 0, 1, 2, 2], np.int32), "time": np.array([10, 60, 30, 20, 50], np.int64),
              "type": np.full(5, EVT, np.int32), "value": np.array([5, 0, 3, 4, 2], np.int64)}
    return TraceColumns(t_end=100, n_rows=4, states=states, events=events,
                        hierarchy=hierarchy or Hierarchy(np.array([0, 0, 1, 1]), np.array([0, 0])))


def _window(level="task", function="Adding", params=(), position=1, **compose) -> Window:
    w = Window("w", position, level=level, functions={"thread": Function("Last Evt Val"),
                                                      level: Function(function, params)},
               compose={slot: Function(*f) for slot, f in compose.items()})
    w.filters.criteria["evt_type"] = Criterion("=", (EVT,))
    return w


def _eval(*windows, position=None, trace=None):
    view = parse_cfg(write_cfg(CfgView("t", "3.4", "new", windows=list(windows))), "t.cfg")
    t = evaluate_window(view, position or len(windows), trace or _trace())
    return list(zip(t.row.tolist(), t.begin.tolist(), t.end.tolist(), t.value.tolist()))


def test_a_task_s_pieces_are_cut_at_every_boundary_of_its_threads():
    # task 0: thread 0 (0 | 5 from 10 | 0 from 60) + thread 1 (0 | 3 from 30)
    assert _eval(_window("task", "Adding")) == [
        (0, 0, 10, 0), (0, 10, 30, 5), (0, 30, 60, 8), (0, 60, 100, 3),
        (1, 0, 20, 0), (1, 20, 50, 4), (1, 50, 100, 2)]


@pytest.mark.parametrize("function,params,task0", [
    ("Average", (), [0, 2.5, 4, 1.5]),
    ("Maximum", (), [0, 5, 5, 3]),
    ("Minimum", (), [0, 0, 3, 3]),          # (5, 0): 0; (0, 3): 3, a 0 first is replaced by what follows
    ("AddingSign", (), [0, 1, 1, 1]),
    ("Thread i", ((2.0,),), [0, 0, 3, 3]),  # 1-based
    ("Thread i", ((3.0,),), [0, 0, 0, 0]),  # beyond the task's threads
    ("Mode", (), [0, 5, 5, 0]),             # the first value to reach the highest count
    ("In Activity", ((5.0,),), [0, 0, 0, 0]),   # thread 0 at 5 and every other thread at 5
    ("Activity", ((5.0, 0.0),), [0, 0, 0, 0]),
])
def test_the_task_functions_as_the_kernel_computes_them(function, params, task0):
    values = [v for row, _, _, v in _eval(_window("task", function, params)) if row == 0]
    assert values == task0


def test_minimum_restarts_after_a_zero_as_the_kernel_s_does():
    # thread 0 is 0 after 60 while thread 1 is 3: Minimum over (0, 3) is 3, not 0
    values = {(b, e): v for row, b, e, v in _eval(_window("task", "Minimum")) if row == 0}
    assert values[(60, 100)] == 3


def test_activity_needs_every_thread_at_the_first_one_s_value():
    hierarchy = Hierarchy(np.array([0, 1, 1, 1]), np.array([0, 0]))      # task 0 is thread 0 alone
    for function, inside in (("In Activity", 1), ("Activity", 5)):
        got = _eval(_window("task", function, ((5.0, 2.0),)), trace=_trace(hierarchy))
        assert [(b, e, v) for row, b, e, v in got if row == 0] == [(0, 10, 0), (10, 60, inside), (60, 100, 0)]
        assert all(v == 0 for row, _, _, v in got if row == 1)     # threads 1, 2, 3 are never all at one value


def test_application_and_workload_rows_add_their_tasks():
    appl = _eval(_window("appl", "Adding"))
    assert appl == [(0, 0, 10, 0), (0, 10, 20, 5), (0, 20, 30, 9), (0, 30, 50, 12), (0, 50, 60, 10),
                    (0, 60, 100, 5)]
    assert _eval(_window("workload", "Adding")) == appl


def test_each_level_s_compose_applies_after_its_function():
    # compose_thread Sign: threads count as 1 where not 0; the task adds them; compose_task Prod 10
    w = _window("task", "Adding", compose_thread=("Sign",), compose_task=("Prod", ((10.0,),)))
    assert [v for row, _, _, v in _eval(w) if row == 0] == [0, 10, 20, 10]


def test_a_derived_window_gives_a_task_parent_s_value_to_each_of_its_threads():
    task = _window("task", "Adding", position=1)
    thread = _window("task", "Adding", position=2)
    thread.level, thread.functions = "thread", {"thread": Function("Last Evt Val")}
    derived = Window("d", 3, derivation=Derivation("substract", (1, 2)))
    got = _eval(task, thread, derived)
    # thread 1 (task 0): task value minus its own: 0 | 5 | 8-3 | 3-3
    assert [(b, e, v) for row, b, e, v in got if row == 1] == [(0, 10, 0), (10, 30, 5), (30, 60, 5), (60, 100, 0)]
    assert {row for row, *_ in got} == {0, 1, 2, 3}


def test_a_derived_window_of_task_parents_rises_no_further():
    a, b = _window("task", "Adding", position=1), _window("task", "Maximum", position=2)
    derived = Window("d", 3, level="task", derivation=Derivation("substract", (1, 2)))
    assert [v for row, _, _, v in _eval(a, b, derived) if row == 0] == [0, 0, 3, 0]


def test_cpu_node_and_system_rows_follow_the_thread_on_each_cpu():
    hierarchy = Hierarchy(np.array([0, 0, 1, 1]), np.array([0, 0]), thread_cpu=np.array([1, 0, 3, 4]),
                          node_cpus=(2, 3))
    trace = _trace(hierarchy)
    cpus = _eval(_window("cpu", "Active Thd"), trace=trace)
    assert [(b, e, v) for row, b, e, v in cpus if row == 1] == [(0, 10, 0), (10, 60, 5), (60, 100, 0)]
    assert [(b, e, v) for row, b, e, v in cpus if row == 2] == [(0, 100, 0)]       # no thread on CPU 2
    node = _eval(_window("node", "Adding"), trace=trace)
    assert [(b, e, v) for row, b, e, v in node if row == 0] == [(0, 10, 0), (10, 30, 5), (30, 60, 8), (60, 100, 3)]
    average = _eval(_window("node", "Average"), trace=trace)
    assert [v for row, _, _, v in average if row == 1] == [0, 4 / 3, 2 / 3]        # three CPUs, one idle
    assert len({row for row, *_ in _eval(_window("system", "Adding"), trace=trace)}) == 1


def test_levels_the_trace_cannot_give_are_named():
    with pytest.raises(NotEvaluated, match="CPUs per node are not known"):
        _eval(_window("node", "Adding"))
    shared = Hierarchy(np.array([0, 0, 1, 1]), np.array([0, 0]), thread_cpu=np.array([0, 0, 1, 2]), node_cpus=(4,))
    with pytest.raises(NotEvaluated, match="shared by several threads"):
        _eval(_window("node", "Adding"), trace=_trace(shared))
    with pytest.raises(NotEvaluated, match="task function 'Changed value'"):
        _eval(_window("task", "Changed value"))


def test_task_rows_are_drawn_on_each_of_the_task_s_threads():
    from popview.analysis.cfg.evaluate import on_threads

    window = _window("task", "Adding")
    view = parse_cfg(write_cfg(CfgView("t", "3.4", "new", windows=[window])), "t.cfg")
    trace = _trace()
    drawn = on_threads(evaluate_window(view, 1, trace), view.window(1), trace)
    assert drawn.n_rows == 4
    got = list(zip(drawn.row.tolist(), drawn.begin.tolist(), drawn.value.tolist()))
    assert [(b, v) for r, b, v in got if r == 1] == [(0, 0), (10, 5), (30, 8), (60, 3)]      # thread 1: task 0's
    assert [(b, v) for r, b, v in got if r == 3] == [(0, 0), (20, 4), (50, 2)]               # thread 3: task 1's


def test_object_functions_and_in_evt_range_start_at_each_record_of_the_row():
    hierarchy = Hierarchy(np.array([0, 0, 1, 1]), np.array([0, 0]), thread_cpu=np.array([1, 0, 3, 4]),
                          node_cpus=(2, 3))
    trace = _trace(hierarchy)
    node = _window("thread", "Adding")
    node.level, node.functions = "thread", {"thread": Function("Node ID")}
    node.filters.criteria.clear()
    got = _eval(node, trace=trace)
    # thread 2: a state from 0 to 100, events at 20 and 50: CPU 3 is node 2's
    assert [(b, e, v) for row, b, e, v in got if row == 2] == [(0, 20, 2), (20, 50, 2), (50, 100, 2)]
    thread = _window("thread", "Adding")
    thread.functions = {"thread": Function("Thread ID")}
    thread.level = "thread"
    assert {row: v for row, _, _, v in _eval(thread, trace=trace)} == {0: 1, 1: 2, 2: 3, 3: 4}
    in_range = _window("thread", "Adding")
    in_range.level, in_range.functions = "thread", {"thread": Function("In Evt Range", ((3.0,), (4.0,)))}
    got = _eval(in_range, trace=trace)
    assert [(b, v) for row, b, e, v in got if row == 0] == [(0, 0), (10, 0), (60, 0)]      # 5, then 0
    assert [(b, v) for row, b, e, v in got if row == 2] == [(0, 0), (20, 1), (50, 0)]      # 4 in [3, 4], 2 not
    moved = Hierarchy(np.array([0, 0, 1, 1]), np.array([0, 0]), thread_cpu=np.array([1, -1, 3, 4]), node_cpus=(2, 3))
    with pytest.raises(NotEvaluated, match="several CPUs"):
        _eval(node, trace=_trace(moved))


def test_a_stack_over_a_task_s_pieces_pushes_and_pops_piece_by_piece():
    # task 0 (Adding): 0 | 5 | 8 | 3: pushes 5, 8, 3 -> tops 5, 8, 3; Nesting level 1, 2, 3
    stacked = _window("task", "Adding", topcompose2=("Stacked Val",))
    assert [v for row, _, _, v in _eval(stacked) if row == 0] == [0, 5, 8, 3]
    nesting = _window("task", "Thread i", ((1.0,),), topcompose2=("Nesting level",))
    # thread 0's value per piece of task 0: 0, 5, 5, 0 -> depth 0, 1, 2, 1
    assert [v for row, _, _, v in _eval(nesting) if row == 0] == [0, 1, 2, 1]
    joined = _window("task", "Thread i", ((1.0,),), topcompose1=("Join Bursts",))
    assert [(b, e, v) for row, b, e, v in _eval(joined) if row == 0] == [(0, 10, 0), (10, 60, 5), (60, 100, 0)]


def test_values_of_a_level_function_without_a_type_are_not_named():
    from popview.analysis.cfg.paramedir import value_names

    class Definitions:
        states = {1: {"name": "Running"}}
        event_types = {}
    useful = Window("u", 1, level="task", functions={"thread": Function("Useful"), "task": Function("Thread i")})
    assert value_names(useful, Definitions()) == {1: "Running"}              # Thread i keeps the state type
    useful.functions["task"] = Function("Average")                          # a number, not a state
    assert value_names(useful, Definitions()) == {}
