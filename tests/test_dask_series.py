"""A series prepared on Dask, a task a run (popview.analysis.distributed): the runs are
converted and their focus inputs and replays computed on the workers, and the
metrics equal those computed on one machine."""
from __future__ import annotations

import pytest

distributed = pytest.importorskip("distributed", reason="Dask is optional: pip install 'popview[dask]'")

import popview  # noqa: E402
from popview.analysis import metrics as metrics_module  # noqa: E402
from popview.analysis import replay as replay_module  # noqa: E402
from popview.analysis.distributed import open_runs  # noqa: E402
from popview.analysis.focus import Focus  # noqa: E402
from popview.cli import main  # noqa: E402

pytestmark = [pytest.mark.dask, pytest.mark.shared]
RUNS = ["hyb_1x1", "hyb_1x2", "hyb_2x2"]


def heat_runs(shared_traces):
    return [shared_traces / "popview-heat/extrae" / r / f"{r}.prv" for r in RUNS]


def values(series, model):
    return [{n.id: n.value for _, n in t.walk()} for t in series.trees(model)]


@pytest.mark.parametrize("focus", ["whole", "auto", "window:0.5:1.5"])
def test_runs_prepared_on_workers_give_the_same_metrics(shared_traces, tmp_path, monkeypatch, focus):
    from popview.analysis import autofocus, focus_map

    paths = heat_runs(shared_traces)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as lc, distributed.Client(lc) as client:
        exps = open_runs(paths, client, tmp_path / "dask", Focus.parse(focus))
    try:
        # the driver computes none of them: what the workers sent is used
        monkeypatch.setattr(metrics_module, "gather", lambda *a: pytest.fail("focus inputs recomputed"))
        monkeypatch.setattr(replay_module, "_replay", lambda *a: pytest.fail("replay recomputed"))
        monkeypatch.setattr(autofocus, "propose", lambda *a: pytest.fail("automatic focus recomputed"))
        monkeypatch.setattr(focus_map, "_marker", lambda *a: pytest.fail("time window mapped again"))
        on_dask = values(popview.series(exps, focus=focus), "hybrid-multiplicative")
    finally:
        for e in exps:
            e.close()
    monkeypatch.undo()
    replay_module.clear_cache()
    alone = values(popview.series(paths, cache_dir=tmp_path / "single", focus=focus), "hybrid-multiplicative")
    assert on_dask == alone
    assert any(v is not None for v in on_dask[0].values())


def test_metrics_command_on_a_local_cluster(shared_traces, tmp_path, capsys):
    paths = [str(p) for p in heat_runs(shared_traces)]
    assert main(["metrics", *paths, "--format", "json", "--cache-dir", str(tmp_path / "a"), "--dask", "local:2"]) == 0
    on_dask = capsys.readouterr().out
    replay_module.clear_cache()
    assert main(["metrics", *paths, "--format", "json", "--cache-dir", str(tmp_path / "b")]) == 0
    alone = capsys.readouterr().out
    assert on_dask.replace(str(tmp_path / "a"), "") == alone.replace(str(tmp_path / "b"), "")
