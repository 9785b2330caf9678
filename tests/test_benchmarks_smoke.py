"""Every benchmark under tests/benchmarks runs at its small size (`--small`,
tests/benchmarks/small.py) on every push, so that a benchmark cannot rot between
the sessions that measure with it: each is run as a process, must exit 0 and
print its figures. The small sizes check that it runs, not how fast (the figures
come from the full sizes, by hand: docs/benchmarks.md)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent / "benchmarks"

# benchmark -> (arguments beside --small, with {tmp} for a scratch folder; what its output must hold)
SMALL = {
    "bench_convert.py": (["--out", "{tmp}"], r"convert: .* MB/s.*\n.*cache: .*\n.*reopen: .* s"),
    "bench_metrics.py": (["--dir", "{tmp}"], r"slowest metric tree: .* ms[\s\S]*5-run series: .* ms"),
    "bench_otf2.py": (["--dir", "{tmp}/archive"], r"end to end: .* events/s"),
    "bench_replay.py": ([], r"second replay:[\s\S]*R = .* s, R_ideal = .* s"),
    "bench_trees.py": ([], r"open metric \+ call tree.*\d"),
    "bench_compression.py": ([], r"zstd3\+shuffle\+fletcher32 \(chosen\) +\d+ +\d+ +[\d.]+[\s\S]*digest of the cache: [\d.]+ s"),
    "bench_algebra.py": ([], r"difference: median [\d.]+ s"),
    "bench_distribution.py": ([], r"box +draw \+ paint: median [\d.]+ s[\s\S]*bars +draw \+ paint: median [\d.]+ s"),
    "bench_cancel.py": (["--out", "{tmp}"], r"uncancelled conversion: [\d.]+ s[\s\S]*cancel at .* s: (stopped|finished)"),
    "bench_dask.py": (["--out", "{tmp}"], r"median wall: Dask 2 workers [\d.]+ s[\s\S]*predicted T\(64\) = [\d.]+ s"),
    "bench_open_stall.py": ([], r"appear: [\d.]+ s\ntimeline: [\d.]+ s\nidle: [\d.]+ s\nstall: \d+ ms"),
    "bench_cfg_timeline.py": (["--out", "{tmp}"], r"first evaluation: .* s[\s\S]*redraw at +full view: median .* ms"),
    "bench_cfg_comms.py": (["--out", "{tmp}"], r"Event Bytes: [\d.]+ s[\s\S]*peak memory [\d.]+ GB"),
    "bench_first_run.py": ([], r"info median [\d.]+ s"),
    "bench_timeline.py": ([], r"timeline overview ready in [\d.]+ s[\s\S]*redraw at full view: +median .* ms"
                              r"[\s\S]*peak memory"),
    "bench_otf2_peers.py": (["--dir", "{tmp}"], r"popview convert +wall +[\d.]+ s"),
    "bench_vs_paramedir.py": (["--out", "{tmp}", "--cores"],
                              r"popview convert +wall +[\d.]+ s .* MB/s[\s\S]*popview convert --timeline +wall +[\d.]+ s"
                              r"[\s\S]*timeline's first use +wall +[\d.]+ s[\s\S]*(speed-up 1 -> 2 cores|SKIPPED 1 vs 2)"),
    "bench_window_sums.py": ([], r"convert --force +wall +[\d.]+ s[\s\S]*first window focus +wall +[\d.]+ s"
                                 r"[\s\S]*second window focus +wall +[\d.]+ s[\s\S]*window sums [\d.]+ MB"),
    "bench_companion_first_use.py": ([], r"first use of the timeline \(in memory\): [\d.]+ s[\s\S]*"
                                         r"first use of the sums \(child\): [\d.]+ s"),
    "bench_phases.py": ([], r"sorting events +[\d.]+ +[\d.]+[\s\S]*total +[\d.]+ +[\d.]+"),
    "bench_startup.py": (["--out", "{tmp}"], r"version +median [\d.]+ s[\s\S]*info \(synthetic, small\) +median [\d.]+ s"
                                             r"[\s\S]*heavy modules loaded by info \(synthetic, small\): none"),
}
WINDOW = r"painted +median .* s"       # bench_startup's window figures, under xvfb-run


def _env(tmp: Path) -> dict:
    return dict(os.environ, QT_QPA_PLATFORM="offscreen", POPVIEW_CACHE_DIR=str(tmp / "popview-cache"),
                POPVIEW_STATE_DIR=str(tmp / "state"), XDG_CONFIG_HOME=str(tmp / "config"))


def _run(args: list[str], tmp: Path, prefix: tuple[str, ...] = ()) -> str:
    out = subprocess.run([*prefix, sys.executable, *args], env=_env(tmp), capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, f"{' '.join(args)} exited {out.returncode}:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def test_every_benchmark_has_a_small_size():
    assert {p.name for p in BENCHMARKS.glob("bench_*.py")} == set(SMALL)
    for name in SMALL:
        text = (BENCHMARKS / name).read_text()
        assert "add_small(" in text or '"--small"' in text, f"{name} has no --small"


@pytest.mark.parametrize("name", sorted(SMALL))
def test_benchmark_runs_at_small_size(name, tmp_path):
    args, expected = SMALL[name]
    window = name == "bench_startup.py" and shutil.which("xvfb-run") is not None
    out = _run([str(BENCHMARKS / name), "--small", *(a.format(tmp=tmp_path) for a in args)], tmp_path,
               prefix=("xvfb-run", "-a") if window else ())
    assert re.search(expected, out), out
    if window:
        assert re.search(WINDOW, out), out
