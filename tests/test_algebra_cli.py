"""`popview merge`, `popview mean` and `popview diff -o`: the combined profile written as a
.cubex and read back; closed forms: the mean of N copies is the copy, the merge of runs with
disjoint counters is the run that had them all, the difference of a run with itself is zero."""
from __future__ import annotations

import json

import numpy as np
import pytest

from popview.cli import main
from popview.readers.cube.export import write_cubex
from popview.model.profile import MetricDef, MetricValues, Profile
from popview.readers.cube import load
from popview.testing.synthetic_profile import small_definitions, small_profile


def with_metrics(p: Profile, keep: list[str], extra: dict[str, np.ndarray]) -> Profile:
    metrics = [m for m in p.metrics if m.id in keep]
    values = {k: v for k, v in p.values.items() if k in keep}
    for ident, dense in extra.items():
        metrics.append(MetricDef(ident, ident, "#", f"counter {ident}"))
        values[ident] = MetricValues.from_dense(dense)
    return Profile(p.regions, p.callpath_parent, p.callpath_region, p.n_locations, metrics, values)


@pytest.fixture
def runs(tmp_path):
    """The small synthetic run as a .cubex, and two runs that measured one counter each."""
    base = small_profile()
    rng = np.random.default_rng(5)
    shape = (base.n_callpaths, base.n_locations)
    ins = np.where(base.matrix("time") > 0, rng.integers(1, 10**9, shape), 0).astype(float)
    cyc = np.where(base.matrix("time") > 0, rng.integers(1, 10**9, shape), 0).astype(float)
    d = small_definitions()
    paths = {}
    for name, prof in {"run": base,
                       "ins": with_metrics(base, ["time", "visits"], {"PAPI_TOT_INS": ins}),
                       "cyc": with_metrics(base, ["time", "visits"], {"PAPI_TOT_CYC": cyc}),
                       "all": with_metrics(base, ["time", "visits"], {"PAPI_TOT_INS": ins, "PAPI_TOT_CYC": cyc})
                       }.items():
        paths[name] = str(tmp_path / f"{name}.cubex")
        write_cubex(paths[name], prof, d)
    paths["cache"] = str(tmp_path / "cache")
    return paths


def stored(path) -> Profile:
    return load(path)[1]


def test_mean_of_copies_is_the_copy(runs, tmp_path, capsys):
    out = str(tmp_path / "mean.cubex")
    assert main(["mean", runs["run"], runs["run"], runs["run"], "-o", out, "--cache-dir", runs["cache"]]) == 0
    assert "mean of 3 runs" in capsys.readouterr().out
    run, mean = stored(runs["run"]), stored(out)
    assert sorted(mean.values) == sorted(run.values)
    for ident in run.values:
        np.testing.assert_allclose(mean.matrix(ident), run.matrix(ident), rtol=1e-12, err_msg=ident)


def test_merge_of_disjoint_counters_is_the_run_with_all(runs, tmp_path, capsys):
    out = str(tmp_path / "merged.cubex")
    assert main(["merge", runs["ins"], runs["cyc"], "-o", out, "--cache-dir", runs["cache"],
                 "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    info = doc["written"]
    assert doc["runs"][0]["source"] == out and doc["models"]          # the result's metrics, as `metrics`
    assert info["operation"] == "merge" and info["callpaths_not_in_every_run"] == 0
    assert {"PAPI_TOT_INS", "PAPI_TOT_CYC", "time", "visits"} <= set(info["metrics"])
    merged, full = stored(out), stored(runs["all"])
    assert sorted(merged.values) == sorted(full.values)
    for ident in full.values:
        np.testing.assert_array_equal(merged.matrix(ident), full.matrix(ident), err_msg=ident)
    assert merged.metric("PAPI_TOT_CYC").unit == "#"


def test_diff_of_a_run_with_itself_is_zero_everywhere(runs, tmp_path, capsys):
    out = str(tmp_path / "zero.cubex")
    assert main(["diff", runs["run"], runs["run"], "-o", out, "--cache-dir", runs["cache"]]) == 0
    captured = capsys.readouterr()
    assert "(no call path differs)" in captured.out and "wrote" in captured.err
    zero = stored(out)
    assert sorted(zero.values) == sorted(stored(runs["run"]).values)
    for ident in zero.values:
        assert not np.any(zero.matrix(ident)), ident


def test_diff_output_is_a_minus_b(runs, tmp_path, capsys):
    out = str(tmp_path / "d.cubex")
    assert main(["diff", runs["all"], runs["ins"], "-o", out, "--cache-dir", runs["cache"], "--format", "json"]) == 0
    json.loads(capsys.readouterr().out)                    # stdout stays the listing
    d = stored(out)
    assert "PAPI_TOT_CYC" not in d.values                  # not in both runs
    assert not np.any(d.matrix("PAPI_TOT_INS")) and not np.any(d.matrix("time"))


@pytest.mark.parametrize("argv, message", [
    (["mean", "{run}", "-o", "{tmp}/m.cubex"], "needs at least two runs"),
    (["merge", "{run}", "{run}", "-o", "{tmp}/m.txt"], "must end in .cubex"),
    (["merge", "{run}", "{run}", "-o", "{tmp}/nowhere/m.cubex"], "does not exist"),
    (["diff", "{run}", "{run}", "-o", "{tmp}/m.prv"], "must end in .cubex"),
    (["mean", "{run}", "{tmp}/missing.cubex", "-o", "{tmp}/m.cubex"], "missing.cubex"),
])
def test_errors_are_one_line_with_exit_2(runs, tmp_path, capsys, argv, message):
    argv = [a.format(run=runs["run"], tmp=tmp_path) for a in argv] + ["--cache-dir", runs["cache"]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith("popview: error:")
    assert not (tmp_path / "m.cubex").exists()


def test_mean_refuses_different_shapes_then_collapses(runs, tmp_path, capsys):
    wide = small_profile()
    narrow = Profile(wide.regions, wide.callpath_parent, wide.callpath_region, 2, wide.metrics[:1],
                     {"time": MetricValues.from_dense(wide.matrix("time")[:, :2])})
    path = str(tmp_path / "narrow.cubex")
    write_cubex(path, narrow)
    out = str(tmp_path / "m.cubex")
    assert main(["mean", runs["run"], path, "-o", out, "--cache-dir", runs["cache"]]) == 2
    assert "different numbers of locations (5, 2)" in capsys.readouterr().err
    assert main(["mean", runs["run"], path, "-o", out, "--cache-dir", runs["cache"], "--collapse", "run"]) == 0
    assert "flat system tree" in capsys.readouterr().out
    m = stored(out)
    assert m.n_locations == 1
    expected = (wide.matrix("time").sum(axis=1) + narrow.matrix("time").sum(axis=1)) / 2
    np.testing.assert_allclose(m.exclusive_totals("time"), expected, rtol=1e-12)


def test_tealeaf_difference_as_cubex(shared_traces, tmp_path, capsys):
    base = shared_traces / "archer2-scalasca" / "scorep_tea_leaf_baseline_8x12_trace" / "scout.cubex"
    opt = shared_traces / "archer2-scalasca" / "scorep_tea_leaf_optimized_8x12_trace" / "scout.cubex"
    if not (base.is_file() and opt.is_file()):
        pytest.skip("the TeaLeaf 8x12 pair is not available")
    out = tmp_path / "tealeaf-diff.cubex"
    assert main(["diff", str(opt), str(base), "--cache-dir", str(tmp_path / "c"), "--format", "json", "--top", "1",
                 "-o", str(out)]) == 0
    first = json.loads(capsys.readouterr().out)["callpaths"][0]
    d = stored(out)
    cp = d.find(first["callpath"])
    assert cp is not None and d.exclusive_totals("time")[cp] == pytest.approx(first["a_minus_b"], rel=1e-9)
    pycubexr = pytest.importorskip("pycubexr")
    with pycubexr.CubexParser(out) as cube:
        values = cube.get_metric_values(cube.get_metric_by_name("time"))
        total = sum(values.cnode_values(c).sum() for c in cube.all_cnodes())
    assert total == pytest.approx(d.exclusive_totals("time").sum(), rel=1e-9)


def test_mean_of_a_trace_is_its_profile_with_its_system_tree(tmp_path, capsys):
    """A trace's profile (built at conversion) exports too, with the trace's processes."""
    from popview.experiment import open as open_experiment
    from popview.testing.synthetic import Shape, write

    trace = tmp_path / "run.prv"
    write(trace, Shape(processes=2, iterations=3, work_ns=1_000_000))
    out, cache = str(tmp_path / "mean.cubex"), str(tmp_path / "cache")
    assert main(["mean", str(trace), str(trace), "-o", out, "--cache-dir", cache]) == 0
    assert "system tree of the first run" in capsys.readouterr().out
    with open_experiment(trace, cache) as exp:
        p, defs = exp.profile(), exp.definitions
        parsed, m, _ = load(out)
        assert [x.name for x in parsed.processes] == [x.name for x in defs.processes]
        assert m.n_locations == p.n_locations and m.n_callpaths == p.n_callpaths
        for ident in p.values:
            np.testing.assert_allclose(m.exclusive_totals(ident), p.exclusive_totals(ident), rtol=1e-12,
                                       err_msg=ident)


# ---------------------------------------------------------------- the result's metrics, as `popview metrics`
def _metric_values(doc: dict, run: int = 0) -> dict:
    out = {}
    for model, tree in doc["runs"][run]["models"].items():
        stack = list(tree["metrics"])
        while stack:
            n = stack.pop()
            out[(model, n["id"])] = n["value"]
            stack.extend(n.get("children", []))
    return out


def test_mean_of_copies_has_the_metrics_of_the_copy(runs, tmp_path, capsys):
    out = str(tmp_path / "mean.cubex")
    assert main(["metrics", runs["run"], "--cache-dir", runs["cache"], "--format", "json", "--no-replay"]) == 0
    copy = json.loads(capsys.readouterr().out)
    assert main(["mean", runs["run"], runs["run"], "-o", out, "--cache-dir", runs["cache"], "--format", "json"]) == 0
    mean = json.loads(capsys.readouterr().out)
    assert set(mean) >= {"written", "focus", "reference", "models", "runs"} and mean["models"] == copy["models"]
    a, b = _metric_values(mean), _metric_values(copy)
    assert a.keys() == b.keys() and any(v is not None for v in a.values())
    for key, v in b.items():
        assert a[key] == pytest.approx(v, rel=1e-9, abs=1e-12) if v is not None else a[key] is None, key


def test_merge_csv_is_the_metrics_csv_and_the_summary_goes_to_stderr(runs, tmp_path, capsys):
    out = str(tmp_path / "merged.cubex")
    assert main(["merge", runs["ins"], runs["cyc"], "-o", out, "--cache-dir", runs["cache"], "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == "run,source,model,metric,name,kind,value,unit,reason,bound"
    assert all(line.split(",")[1] == out for line in captured.out.splitlines()[1:])
    assert "wrote" in captured.err and "merge of 2 runs" in captured.err
    # the merged run has both counters: IPC is computed, as for the run that measured both
    assert main(["merge", runs["ins"], runs["cyc"], "-o", out, "--cache-dir", runs["cache"], "--format", "json",
                 "--model", "computation"]) == 0
    merged = _metric_values(json.loads(capsys.readouterr().out))
    assert main(["metrics", runs["all"], "--cache-dir", runs["cache"], "--format", "json",
                 "--model", "computation"]) == 0
    full = _metric_values(json.loads(capsys.readouterr().out))
    assert merged[("computation", "ipc")] == pytest.approx(full[("computation", "ipc")], rel=1e-12)


def test_collapsed_to_the_run_no_efficiency_is_measured(runs, tmp_path, capsys):
    out = str(tmp_path / "m.cubex")
    assert main(["mean", runs["run"], runs["run"], "-o", out, "--cache-dir", runs["cache"], "--collapse", "run",
                 "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    tree = next(iter(doc["runs"][0]["models"].values()))
    stack, seen = list(tree["metrics"]), 0
    while stack:
        n = stack.pop()
        stack.extend(n.get("children", []))
        if n["kind"] in ("efficiency", "scalability"):
            seen += 1
            assert n["value"] is None and "collapsed to one value per run" in n["reason"], n["id"]
    assert seen


def test_diff_metrics_are_a_minus_b_of_each_runs_metrics(tmp_path, capsys):
    """`popview diff --show metrics`: A, B (the reference) and A - B, in percentage points; the
    written difference, opened, gives the same A - B (its metrics are its sources' difference)."""
    from popview.testing.synthetic import Shape, write
    slow, fast = tmp_path / "slow.prv", tmp_path / "fast.prv"
    write(slow, Shape(processes=2, iterations=4, work_ns=2_000_000, rank_weights=(1.0, 1.6)))
    write(fast, Shape(processes=2, iterations=4, work_ns=1_000_000))
    cache, out = str(tmp_path / "c"), str(tmp_path / "d.cubex")
    assert main(["diff", str(fast), str(slow), "--show", "metrics", "--format", "json", "--cache-dir", cache,
                 "-o", out, "--model", "pop-mpi"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["label"] for r in doc["runs"]][-1] == "A - B" and len(doc["runs"]) == 3
    a, b, d = (_metric_values(doc, i) for i in range(3))
    checked = 0
    for key, v in d.items():
        if a[key] is not None and b[key] is not None:
            assert v == pytest.approx(a[key] - b[key], abs=1e-12), key
            checked += 1
    assert checked >= 3 and d[("pop-mpi", "load_balance")] > 0          # the balanced run is better
    root = doc["runs"][2]["models"]["pop-mpi"]["metrics"][0]
    assert root["kind"] == "difference" and root["unit"] == "pp"
    assert main(["metrics", out, "--cache-dir", cache, "--format", "json", "--model", "pop-mpi"]) == 0
    reopened = _metric_values(json.loads(capsys.readouterr().out))
    for key in (("pop-mpi", "load_balance"), ("pop-mpi", "parallel_efficiency")):
        assert reopened[key] == pytest.approx(d[key], abs=1e-12), key


def test_a_difference_without_its_runs_has_no_efficiencies(runs, tmp_path, capsys):
    import shutil
    a = tmp_path / "a.cubex"
    shutil.copy(runs["run"], a)
    out = str(tmp_path / "d.cubex")
    assert main(["diff", str(a), runs["run"], "-o", out, "--cache-dir", runs["cache"]]) == 0
    a.unlink()
    capsys.readouterr()
    assert main(["metrics", out, "--cache-dir", runs["cache"], "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    root = next(iter(doc["runs"][0]["models"].values()))["metrics"][0]
    assert root["value"] is None
    assert "no efficiency follows" in root["reason"] and "not at hand" in root["reason"]


def test_the_report_of_a_difference_shows_differences(tmp_path, capsys):
    """`popview report` on a written difference: A - B in percentage points, never rated."""
    from popview.testing.synthetic import Shape, write
    slow, fast = tmp_path / "slow.prv", tmp_path / "fast.prv"
    write(slow, Shape(processes=2, iterations=4, work_ns=2_000_000, rank_weights=(1.0, 1.6)))
    write(fast, Shape(processes=2, iterations=4, work_ns=1_000_000))
    cache, out, html = str(tmp_path / "c"), str(tmp_path / "d.cubex"), tmp_path / "r.html"
    assert main(["diff", str(fast), str(slow), "-o", out, "--cache-dir", cache]) == 0
    assert main(["report", out, "-o", str(html), "--cache-dir", cache]) == 0
    text = html.read_text()
    assert " pp<" in text or " pp " in text
    assert "Load balance of A - Load balance of B" in text
    assert "Excellent" not in text and "Good<" not in text            # a difference is not rated
