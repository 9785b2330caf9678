"""Record which kernels (and argument types) each first run compiles, in the
order it needs them, into popview/resources/kernels.json: the list the
first-run compile helper (popview.precompile) works from.

    python tests/benchmarks/record_kernels.py [--out FILE] [--synthetic]

Each scenario runs as a fresh process with an empty numba cache:
  info     `popview info` on the EPOCH 16-rank trace,
  metrics  `popview metrics` on it,
  window   `popview --demo` until its three runs are open (offscreen Qt).
Run it again when kernels change; a stale list costs time, never results.
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


def record(args: list[str], trace: Path | None, tmp: str) -> list:
    """The kernels one fresh process compiles for `args` (None: the demo)."""
    log = os.path.join(tmp, "kernels.jsonl")
    env = dict(os.environ, PYTHONPATH=str(HERE), NUMBA_CACHE_DIR=os.path.join(tmp, "numba"),
               POPVIEW_CACHE_DIR=os.path.join(tmp, "cache"), POPVIEW_STATE_DIR=os.path.join(tmp, "state"),
               XDG_CACHE_HOME=os.path.join(tmp, "xdg-cache"), XDG_CONFIG_HOME=os.path.join(tmp, "config"),
               QT_QPA_PLATFORM="offscreen", POPVIEW_RECORD_KERNELS=log, POPVIEW_PRECOMPILE="0")
    if args:
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


def as_text(scenarios: dict) -> str:
    """The list as JSON, one kernel a line (readable diffs when kernels change)."""
    parts = [f"{json.dumps(name)}: [\n" + ",\n".join(json.dumps(k) for k in kernels) + "\n]"
             for name, kernels in scenarios.items()]
    return '{"scenarios": {\n' + ",\n".join(parts) + "\n}}\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "popview" / "resources" / "kernels.json")
    parser.add_argument("--synthetic", action="store_true", help="a small synthetic trace instead of EPOCH's")
    args = parser.parse_args()
    scenarios = {}
    with tempfile.TemporaryDirectory(prefix="popview-record-") as scratch:
        trace = EPOCH16
        if args.synthetic or not trace.exists():
            sys.path.insert(0, str(HERE))
            from popview.testing.synthetic import Shape, write
            trace = Path(scratch) / "small.prv"
            write(trace, Shape(processes=4, iterations=20))
        for name, command in (("info", ["info"]), ("metrics", ["metrics"]), ("window", [])):
            with tempfile.TemporaryDirectory(prefix="popview-record-", dir=scratch) as tmp:
                scenarios[name] = record(command, trace, tmp)
            print(f"{name}: {len(scenarios[name])} kernels", flush=True)
    tmp_out = args.out.with_suffix(".tmp")
    tmp_out.write_text(as_text(scenarios))
    os.replace(tmp_out, args.out)
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
