"""The cfg engine's record-by-record functions on a large trace: Event Bytes, in-transit
messages joined into bursts, a controlled derived window, a stack of composed values.

    python tests/benchmarks/bench_cfg_comms.py [--trace TRACE] [--out DIR] [--small]

Without --trace: the 1 GB make_big_epoch trace (as bench_cfg_timeline.py makes it, under --out,
default /tmp/popview-bench); --small: a small synthetic run (the size CI runs). The windows are
written here (no cfg file needed): parami's p2p_size window (Event Bytes of MPI point-to-point
and other calls), 2dt_brwds' burst window (Recv Negative Messages, Sign, Join Bursts),
received_from_delayed's controlled: clear by with Event Bytes as data and the MPI call as
control, and the MPI call composed by Sign then Stacked Val. Times each evaluation twice in one
process (after reading the columns), and prints the load average and the peak memory.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

from bench_cfg_timeline import big_epoch, synthetic_trace
from small import add_small

MPI_TYPES = (50000001.0, 50000003.0)


def views():
    from popview.analysis.cfg import CfgView, Criterion, Derivation, Function, Window

    def single(name, position, function, **compose):
        window = Window(name, position, functions={"thread": Function(function)},
                        compose={slot: Function(f) for slot, f in compose.items()})
        window.filters.criteria["evt_type"] = Criterion("[x,y]", MPI_TYPES)
        window.filters.logical, window.filters.physical = True, False
        return window

    event_bytes = single("Event Bytes", 1, "Event Bytes")
    mpi = single("MPI call", 2, "Last Evt Val")
    cleared = Window("Event Bytes cleared by the MPI call", 3, derivation=Derivation("controlled: clear by", (1, 2)))
    bursts = single("Recv Negative Messages in bursts", 4, "Recv Negative Messages", compose_thread="Sign",
                    topcompose2="Join Bursts")
    stack = single("MPI call stacked", 5, "Last Evt Val", compose_thread="Sign", topcompose2="Stacked Val")
    return CfgView("bench", "3.4", "new", windows=[event_bytes, mpi, cleared, bursts, stack])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trace", type=Path, help="a trace (default: the 1 GB make_big_epoch trace)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/popview-bench"), help="where traces and caches go")
    parser.add_argument("--synthetic-iterations", type=int, default=0, help="a synthetic run of N iterations instead")
    add_small(parser, synthetic_iterations=20)
    args = parser.parse_args()
    import popview
    from popview.analysis.cfg.evaluate import TraceColumns, evaluate_window

    if args.trace is not None:
        trace = args.trace
    elif args.synthetic_iterations:
        trace = synthetic_trace(args.out, args.synthetic_iterations)
    else:
        trace = big_epoch(args.out)
    print(f"trace: {trace}; load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    start = time.perf_counter()
    exp = popview.open(trace, cache_dir=args.out / "cache")
    columns = TraceColumns.from_cache(exp.reader, exp.definitions)
    n_messages = len(columns.messages["size"]) if columns.messages is not None else 0
    print(f"open + columns: {time.perf_counter() - start:.1f} s ({len(columns.events['time'])} events, "
          f"{len(columns.states['begin'])} states, {n_messages} messages)")
    view = views()
    for window in view.windows:
        times = []
        for _ in range(2):
            start = time.perf_counter()
            timeline = evaluate_window(view, window.position, columns)
            times.append(time.perf_counter() - start)
        print(f"{window.name}: {times[0]:.2f} s, again {times[1]:.2f} s ({len(timeline.value)} intervals)")
    exp.close()
    print(f"load average {os.getloadavg()[0]:.1f}; peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
