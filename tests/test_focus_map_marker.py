"""A time window carried to the other runs of a series as iterations: the
iterations' region must repeat over the run, and its whole visits must fill
the window. EPOCH 4x1 + 16x1, `--focus window:0.5:1`: the window became
"MPI_Comm_rank iterations 2-2" (three calls, all in the first 0.53 s of 6 s),
a 0.4 ms focus in one run and 8 us in the other: global efficiency 0.7 %,
instruction scalability 0.4 %, "weak scaling guessed ... 255"."""
from __future__ import annotations

import pytest

import popview
from popview.analysis.focus import Focus
from popview.analysis.focus_map import carry
from tests.paraver.prvtext import HEADER, write_trace

# two ranks Running throughout; MPI_Send (p2p value 3) at 10, 20 and 500 only; MPI_Allreduce (10)
# at 100, 300, 550, 750, 950 (50 ns each)
SENDS = (10, 20, 500)
ALLREDUCES = (100, 300, 550, 750, 950)


def _body() -> str:
    lines = ["1:1:1:1:1:0:1000:1", "1:2:1:2:1:0:1000:1"]
    for task in (1, 2):
        for t in SENDS:
            lines += [f"2:{task}:1:{task}:1:{t}:50000001:3", f"2:{task}:1:{task}:1:{t + 5}:50000001:0"]
        for t in ALLREDUCES:
            lines += [f"2:{task}:1:{task}:1:{t}:50000002:10", f"2:{task}:1:{task}:1:{t + 50}:50000002:0"]
    return "\n".join(sorted(lines, key=lambda line: int(line.split(":")[5]))) + "\n"


def test_a_window_is_carried_by_a_region_that_repeats_over_the_run(tmp_path, cache_dir):
    a = popview.open(write_trace(tmp_path / "a", body=_body(), header=HEADER), cache_dir=cache_dir)
    b = popview.open(write_trace(tmp_path / "b", body=_body(), header=HEADER), cache_dir=cache_dir)
    mapped, note = carry(a, Focus.window(400, 900), [a, b])
    # was MPI_Send iterations 2-2: the rarest call every master makes equally often, 5 ns of the window
    assert mapped == Focus.iterations("MPI_Allreduce", 2, 3), (mapped, note)


def test_a_window_its_iterations_barely_fill_is_not_carried(tmp_path, cache_dir):
    a = popview.open(write_trace(tmp_path / "a", body=_body(), header=HEADER), cache_dir=cache_dir)
    b = popview.open(write_trace(tmp_path / "b", body=_body(), header=HEADER), cache_dir=cache_dir)
    mapped, note = carry(a, Focus.window(520, 700), [a, b])          # one allreduce (50 of 180 ns)
    assert mapped is None and "fill at least half of it" in note


@pytest.mark.shared
def test_epoch_window_is_not_carried_by_three_early_calls(shared_traces, tmp_path):
    d = shared_traces / "pypop/mpi/epoch_example_traces"
    a = popview.open(d / "epoch_4proc.prv.gz", cache_dir=tmp_path)
    b = popview.open(d / "epoch_16proc.prv.gz", cache_dir=tmp_path)
    mapped, note = carry(a, Focus.window(500_000_000, 1_000_000_000), [a, b])
    assert mapped is None, mapped              # MPI_Comm_rank iterations 2-2 before


def test_report_refuses_a_window_without_equivalent_as_a_user_error(tmp_path, cache_dir, capsys):
    """`popview report --focus window:...` on a series whose window has no equivalent printed
    "unexpected ValueError: ... (set POPVIEW_DEBUG=1 to see where)"."""
    from popview.cli import main
    a = write_trace(tmp_path / "a", body=_body(), header=HEADER)
    b = write_trace(tmp_path / "b", body=_body(), header=HEADER)
    assert main(["report", str(a), str(b), "--focus", "window:0.00000052:0.0000007", "--cache-dir",
                 str(cache_dir), "-o", str(tmp_path / "r.html")]) != 0
    err = capsys.readouterr().err
    assert "fill at least half of it" in err and "unexpected" not in err, err
