"""The time span of a focus in one run (what the timeline scales each run to)."""
import popview
from popview.analysis.focus import Focus
from popview.analysis.timeline_data import focus_span
from tests.paraver.prvtext import HEADER, write_trace

BODY = """1:1:1:1:1:0:1000:1
1:2:1:2:1:0:1000:1
2:1:1:1:1:100:60000019:1
2:1:1:1:1:300:60000019:0
2:1:1:1:1:500:60000019:1
2:1:1:1:1:700:60000019:0
2:2:1:2:1:150:60000019:1
2:2:1:2:1:350:60000019:0
2:2:1:2:1:550:60000019:1
2:2:1:2:1:800:60000019:0
"""


def test_spans_of_each_focus_kind(tmp_path, cache_dir):
    with popview.open(write_trace(tmp_path, body=BODY, header=HEADER), cache_dir=cache_dir) as exp:
        assert focus_span(exp, Focus.whole()) is None
        assert focus_span(exp, Focus.window(10, 20)) == (10, 20)
        assert focus_span(exp, Focus.on_callpath("main_loop")) == (100, 800)
        assert focus_span(exp, Focus.iterations("main_loop", 1, 1)) == (500, 800)
        assert focus_span(exp, Focus.on_callpath("no_such_function")) is None


def test_stacked_runs_scale_to_their_own_call_path_span(qtbot, tmp_path, cache_dir):
    from popview.gui.state import AppState
    from popview.gui.timeline import TimelinePane

    late = BODY
    for old, new in (("1:1:1:100:", "1:1:1:400:"), ("1:1:1:300:", "1:1:1:450:"),
                     ("1:2:1:150:", "1:2:1:420:"), ("1:2:1:350:", "1:2:1:450:")):
        late = late.replace(old, new)
    state = AppState()
    pane = TimelinePane(state)
    qtbot.addWidget(pane)
    # the window opens runs with their timeline overview built (its opening lane): as here
    a = popview.open(write_trace(tmp_path / "a", body=BODY, header=HEADER), cache_dir=cache_dir, timeline=True)
    b = popview.open(write_trace(tmp_path / "b", body=late, header=HEADER), cache_dir=cache_dir, timeline=True)
    state.add_experiment(a)
    state.add_experiment(b)
    state.set_focus(Focus.on_callpath("main_loop"))
    windows = {view.exp.source.parent.name: view.window() for view in pane.views.values()}
    assert windows == {"a": (100, 800), "b": (400, 800)}
