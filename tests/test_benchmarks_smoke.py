"""Every benchmark under tests/benchmarks runs at a small size on every push, so
that a benchmark cannot rot between the sessions that measure with it: each is
run as a process, must exit 0 and print its figures. The sizes here check that
it runs, not how fast (the figures come from the full sizes, by hand)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent / "benchmarks"

# benchmark -> (arguments at the small size, with {tmp} for a scratch folder; what its output must hold)
SMALL = {
    "bench_convert.py": (["--out", "{tmp}", "--synthetic-mb", "2", "--pandas-mb", "1"],
                         r"convert: .* MB/s.*\n.*cache: .*\n.*reopen: .* s"),
    "bench_metrics.py": (["--records", "1e5", "--series-iterations", "5", "--dir", "{tmp}"],
                         r"slowest metric tree: .* ms[\s\S]*5-run series: .* ms"),
    "bench_otf2.py": (["--events", "20000", "--ranks", "2", "--dir", "{tmp}/archive"],
                      r"end to end: .* events/s"),
    "bench_replay.py": (["{tmp}/replay.h5", "50"], r"second replay:[\s\S]*R = .* s, R_ideal = .* s"),
    "bench_trees.py": (["--callpaths", "300", "--locations", "64", "--repeat", "2"],
                       r"open metric \+ call tree.*\d"),
    "bench_compression.py": (["{cache}", "--rows", "20000"], r"zstd3\+shuffle\+fletcher32 \(chosen\) +\d+ +\d+ +[\d.]+[\s\S]*digest of the cache: [\d.]+ s"),
    "bench_algebra.py": (["--callpaths", "2000", "--locations", "100", "--per-callpath", "5", "--repeat", "1"],
                         r"difference: median [\d.]+ s"),
    "bench_cancel.py": (["--out", "{tmp}", "--synthetic-iterations", "300", "--points", "2"],
                        r"uncancelled conversion: [\d.]+ s[\s\S]*cancel at .* s: (stopped|finished)"),
    "bench_cfg_timeline.py": (["--synthetic-iterations", "100", "--out", "{tmp}", "--repeat", "2"],
                              r"first evaluation: .* s[\s\S]*redraw at +full view: median .* ms"),
    "bench_first_run.py": (["--only", "info", "--synthetic", "--keep-numba-cache"], r"info median [\d.]+ s"),
}
TIMELINE = r"redraw at full view: +median .* ms[\s\S]*peak memory"
STARTUP = r"painted +median .* s"


def _env(tmp: Path) -> dict:
    return dict(os.environ, QT_QPA_PLATFORM="offscreen", POPVIEW_CACHE_DIR=str(tmp / "popview-cache"),
                POPVIEW_STATE_DIR=str(tmp / "state"), XDG_CONFIG_HOME=str(tmp / "config"))


def _run(args: list[str], tmp: Path, prefix: tuple[str, ...] = ()) -> str:
    out = subprocess.run([*prefix, sys.executable, *args], env=_env(tmp), capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, f"{' '.join(args)} exited {out.returncode}:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def _small_cache(tmp: Path) -> Path:
    """A converted synthetic trace: the input of the benchmarks that read a cache."""
    import popview
    from popview.testing.synthetic import Shape, write

    prv = tmp / "small.prv"
    write(prv, Shape(processes=4, threads=2, iterations=200))
    exp = popview.open(prv, cache_dir=tmp / "cache")
    path = exp.cache_path
    exp.close()
    return path


def test_every_benchmark_has_a_small_size():
    listed = set(SMALL) | {"bench_timeline.py", "bench_startup.py"}
    assert {p.name for p in BENCHMARKS.glob("bench_*.py")} == listed


@pytest.mark.parametrize("name", sorted(SMALL))
def test_benchmark_runs_at_small_size(name, tmp_path):
    args, expected = SMALL[name]
    cache = _small_cache(tmp_path) if "{cache}" in args else None
    args = [a.format(tmp=tmp_path, cache=cache) for a in args]
    out = _run([str(BENCHMARKS / name), *args], tmp_path)
    assert re.search(expected, out), out


def test_timeline_benchmark_runs_at_small_size(tmp_path):
    cache = str(tmp_path / "timeline.h5")
    script = str(BENCHMARKS / "bench_timeline.py")
    _run([script, "make", cache, "--locations", "64", "--iterations", "200"], tmp_path)
    out = _run([script, "run", cache], tmp_path)
    assert re.search(TIMELINE, out), out


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="bench_startup needs a display: xvfb-run is not installed")
def test_startup_benchmark_runs_once_under_xvfb(tmp_path):
    out = _run([str(BENCHMARKS / "bench_startup.py"), "--runs", "1"], tmp_path, prefix=("xvfb-run", "-a"))
    assert re.search(STARTUP, out), out
