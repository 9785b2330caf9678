"""Record which kernels (and argument types) each first run compiles, in the
order it needs them, into popview/resources/kernels.json: the list the
first-run compile helper (popview.precompile) works from.

    python tests/benchmarks/record_kernels.py [--out FILE] [--synthetic] [--only SCENARIO ...]

Each scenario runs as a fresh process with an empty numba cache:
  info     `popview info` on the EPOCH 16-rank trace,
  metrics  `popview metrics` on it,
  window   `popview --demo` until its three runs are open (offscreen Qt),
  otf2     `popview convert` of OTF2 archives with the kernels compiled (not run as
           Python as small archives are): a synthetic one (threads, counters) and
           ../shared/traces' Score-P hybrid, TraceR stencil and mi300 metric runs.
Run it again when kernels change; a stale list costs time, never results (the
first-run helper and the kernels compiled ahead of time, popview.aot, skip an
entry that no longer compiles). `--only` records those scenarios again and keeps
the others from the existing list.
Reads ../shared/traces (--synthetic, or when absent: a small synthetic trace).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_first_run import EPOCH16, HERE, PROBE  # noqa: E402


OTF2_REAL = ("popview-heat/scorep/hyb_2x2/traces.otf2", "tracer-stencil4d/traces-64/traces.otf2",
             "fastotf2/simple-mi300-example-run/traces.otf2")
OTF2 = """
import sys
from popview import cli
from popview.readers import otf2
otf2.INTERPRETED_BYTES = 0            # compiled, as archives over the limit are
cache = sys.argv[1]
for anchor in sys.argv[2:]:
    code = cli.main(["convert", anchor, "--force", "--cache-dir", cache])
    if code:
        raise SystemExit(f"{anchor}: exit {code}")
"""


def otf2_archives(scratch: Path) -> list[str]:
    """A synthetic archive (two threads a rank, counters) and the real ones present."""
    sys.path.insert(0, str(HERE))
    from popview.testing.otf2_writer import write_trace

    written = write_trace(scratch / "otf2", ranks=4, iterations=200, threads=2)
    shared = HERE.parent / "shared" / "traces"
    return [str(written.anchor)] + [str(shared / p) for p in OTF2_REAL if (shared / p).exists()]


def record(args: list[str], trace: Path | None, tmp: str) -> list:
    """The kernels one fresh process compiles for `args` (None: the demo; ["-c", SCRIPT, ...]:
    that script)."""
    log = os.path.join(tmp, "kernels.jsonl")
    env = dict(os.environ, PYTHONPATH=str(HERE), NUMBA_CACHE_DIR=os.path.join(tmp, "numba"),
               POPVIEW_CACHE_DIR=os.path.join(tmp, "cache"), POPVIEW_STATE_DIR=os.path.join(tmp, "state"),
               XDG_CACHE_HOME=os.path.join(tmp, "xdg-cache"), XDG_CONFIG_HOME=os.path.join(tmp, "config"),
               QT_QPA_PLATFORM="offscreen", POPVIEW_RECORD_KERNELS=log, POPVIEW_PRECOMPILE="0")
    if args[:1] == ["-c"]:
        cmd = [sys.executable, *args[:2], os.path.join(tmp, "cache"), *args[2:]]
    elif args:
        cmd = [sys.executable, "-m", "popview", *args, str(trace), "--cache-dir", os.path.join(tmp, "cache")]
    else:
        cmd = [sys.executable, "-c", PROBE, repr(time.time())]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL)
    if out.returncode:
        raise SystemExit(f"{' '.join(cmd[:4])} failed:\n{out.stderr[-2000:]}")
    seen, kernels = set(), []
    for line in Path(log).read_text().splitlines():
        if line not in seen:
            seen.add(line)
            kernels.append(json.loads(line))
    return kernels


U8_READ, U8_WRITE = ["array", ["scalar", "uint8"], 1, "C", True], ["array", ["scalar", "uint8"], 1, "C", False]
I64, F64 = ["scalar", "int64"], ["scalar", "float64"]
# Kernels of paths the scenarios' small trace does not reach, with the types they are called with:
# columns of three chunks or more are read through cache/chunk_reads.py (every larger trace); a
# window's sums past a checkpoint (analysis/window_index.py).
BEYOND_SMALL = {"metrics": [["popview.cache.chunk_reads", "_unshuffle8", [U8_READ, U8_WRITE]],
                            ["popview.cache.chunk_reads", "_unshuffle4", [U8_READ, U8_WRITE]],
                            ["popview.analysis.window_index", "slab_sums",
                             [["array", I64, 2, "C", False], ["array", F64, 2, "C", False], I64, I64, I64]]]}
BEYOND_SMALL["window"] = BEYOND_SMALL["metrics"]


def with_beyond_small(name: str, kernels: list) -> list:
    return kernels + [k for k in BEYOND_SMALL.get(name, []) if k not in kernels]


def as_text(scenarios: dict) -> str:
    """The list as JSON, one kernel a line (readable diffs when kernels change)."""
    parts = [f"{json.dumps(name)}: [\n" + ",\n".join(json.dumps(k) for k in kernels) + "\n]"
             for name, kernels in scenarios.items()]
    return '{"scenarios": {\n' + ",\n".join(parts) + "\n}}\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "popview" / "resources" / "kernels.json")
    parser.add_argument("--synthetic", action="store_true", help="a small synthetic trace instead of EPOCH's")
    parser.add_argument("--only", action="append", choices=("info", "metrics", "window", "archives"),
                        help="record this scenario again, keep the others of --out (repeat for several)")
    args = parser.parse_args()
    scenarios = {}
    if args.only and args.out.exists():
        scenarios = json.loads(args.out.read_text())["scenarios"]
    with tempfile.TemporaryDirectory(prefix="popview-record-") as scratch:
        trace = EPOCH16
        if args.synthetic or not trace.exists():
            sys.path.insert(0, str(HERE))
            from popview.testing.synthetic import Shape, write
            trace = Path(scratch) / "small.prv"
            write(trace, Shape(processes=4, iterations=20))
        for name, command in (("info", ["info"]), ("metrics", ["metrics"]), ("window", []),
                              ("archives", ["-c", OTF2])):
            if args.only and name not in args.only:
                continue
            if name == "archives":
                command = command + otf2_archives(Path(scratch))
            with tempfile.TemporaryDirectory(prefix="popview-record-", dir=scratch) as tmp:
                scenarios[name] = with_beyond_small(name, record(command, trace, tmp))
            print(f"{name}: {len(scenarios[name])} kernels", flush=True)
    tmp_out = args.out.with_suffix(".tmp")
    tmp_out.write_text(as_text(scenarios))
    os.replace(tmp_out, args.out)
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
