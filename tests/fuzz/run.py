"""Long fuzz runs: `python -m tests.fuzz.run TARGET --seconds 600 --out DIR`.

Random mutations of the target's seed for a fixed time; every input that ends
in anything but success or InputError is a finding, kept in DIR with its
traceback (one file per unique exception type and place). A watchdog ends the
process with the stacks of every thread if one input runs longer than
--hang seconds (its input is DIR/current.bin). Figures go to DIR/stats.json
(executions, duration, unique findings) and, at the end, to standard output.
"""
from __future__ import annotations

import argparse
import faulthandler
import json
import random
import resource
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

from popview.readers.errors import InputError
from tests.fuzz.targets import TARGETS, prepare, run_full


def signature(exc: BaseException) -> str:
    """Exception type and the innermost popview frame: one finding per bug, not per input."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if "/popview/" in f.filename] or frames
    where = f"{Path(mine[-1].filename).name}:{mine[-1].lineno}" if mine else "?"
    return f"{type(exc).__name__} at {where}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("target", choices=sorted(TARGETS))
    p.add_argument("--seconds", type=float, default=600)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--hang", type=float, default=60, help="seconds after which one input counts as a hang")
    p.add_argument("--memory-gb", type=float, default=6, help="address-space limit: over-allocation shows as MemoryError")
    args = p.parse_args(argv)
    limit = int(args.memory_gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    target = TARGETS[args.target]
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    crash_log = open(out / "fatal.txt", "w")
    faulthandler.enable(crash_log, all_threads=True)
    work = Path(tempfile.mkdtemp(prefix=f"popview-fuzz-{args.target}-"))
    ctx = target.setup(work / "seed")
    seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(32)
    rnd = random.Random(seed)
    findings: Counter = Counter()
    outcomes: Counter = Counter()
    executions, full_runs, started = 0, 0, time.monotonic()
    current = out / "current.bin"
    last_stats = started
    while time.monotonic() - started < args.seconds:
        data = prepare(target, ctx, random.Random(rnd.getrandbits(64)))
        current.write_bytes(data)
        faulthandler.dump_traceback_later(args.hang, exit=True, file=crash_log)
        try:
            target.run(ctx, data)
            outcomes["read"] += 1
            if target.full_every and executions % target.full_every == 0:
                full_runs += 1
                run_full(target, ctx, work / "cache")
        except InputError:
            outcomes["InputError"] += 1
        except Exception as exc:  # noqa: BLE001 -- a finding
            sig = signature(exc)
            if sig not in findings:
                n = len(findings)
                (out / f"finding-{n}.bin").write_bytes(data)
                (out / f"finding-{n}.txt").write_text(f"{sig}\n\n{traceback.format_exc()}")
            findings[sig] += 1
            outcomes["finding"] += 1
        finally:
            faulthandler.cancel_dump_traceback_later()
        executions += 1
        if time.monotonic() - last_stats > 10:
            last_stats = time.monotonic()
            _stats(out, args.target, seed, executions, full_runs, started, findings, outcomes)
    stats = _stats(out, args.target, seed, executions, full_runs, started, findings, outcomes)
    print(json.dumps(stats))
    return 1 if findings else 0


def _stats(out, target, seed, executions, full_runs, started, findings, outcomes) -> dict:
    stats = {"target": target, "seed": seed, "executions": executions, "through_popview_open": full_runs,
             "seconds": round(time.monotonic() - started, 1), "outcomes": dict(outcomes),
             "unique_findings": len(findings), "findings": dict(findings)}
    (out / "stats.json").write_text(json.dumps(stats, indent=1))
    return stats


if __name__ == "__main__":
    sys.exit(main())
