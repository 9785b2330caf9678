"""`popview info TRACE...`: what a trace or profile contains."""
from __future__ import annotations

import json

from popview.commands.common import ProgressBar, add_cache_dir, add_paths, expand_runs, guarded
from popview.experiment import open as open_experiment, stored_info


def add_parser(sub) -> None:
    p = sub.add_parser("info", help="summarise a trace or profile")
    add_paths(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_cache_dir(p)


def format_duration(ns: int) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.6g} {unit}"
    return f"{ns} ns"


_UNIT_NAMES = {1.0: "ns", 1000.0: "us", 1e6: "ms", 1e9: "s"}


def _clock(unit_ns: float) -> str:
    """ns, us...; else the tick and the timer's rate (Score-P's 2,095,197,216 Hz timer read
    "0.4772820393056498 ns")."""
    if unit_ns in _UNIT_NAMES:
        return _UNIT_NAMES[unit_ns]
    return f"{unit_ns:.6g} ns, a {1 / unit_ns:.6g} GHz timer" if unit_ns > 0 else f"{unit_ns} ns"


def render(info: dict) -> str:
    rec = info["records"]
    if info["duration_ns"] or any(rec.values()):
        duration = f"{format_duration(info['duration_ns'])} (source clock unit: {_clock(info['source_unit_ns'])})"
    else:
        duration = "not recorded (a profile has no timestamps)"
    lines = [
        f"{info['source']}",
        f"  format      {info['format']} ({info['tool']})" + (f", recorded {info['date']}" if info["date"] else ""),
        f"  duration    {duration}",
        f"  shape       {_count(info['processes'], 'process', 'processes')} x "
        f"{_count(info['threads_per_process'], 'thread')}, {_count(info['nodes'], 'node')}, "
        f"{_count(info['applications'], 'application')}",
        "  locations   " + ", ".join(f"{n} {k}" for k, n in info["locations"].items()),
        "  records     " + ", ".join(f"{n:,} {k}" for k, n in rec.items()),
        f"  regions     {info['regions']} regions, {info['callpaths']} call paths",
        f"  paradigms   {', '.join(info['paradigms']) or 'none detected'}",
        f"  counters    {', '.join(info['counters']) or 'none'}",
    ]
    if info.get("topologies"):
        topo = info["topologies"]
        shown = ", ".join(t or "unnamed" for t in topo[:4]) + (f" and {len(topo) - 4} more" if len(topo) > 4 else "")
        lines.append(f"  topologies  {len(topo)}: {shown}")
    if info.get("metrics"):
        lines.append(f"  metrics     {len(info['metrics'])}: {', '.join(info['metrics'][:12])}" +
                     (" ..." if len(info["metrics"]) > 12 else ""))
    flags = [k.replace("_", " ") for k, v in info["flags"].items() if v is True and k != "pcf"]
    if flags:
        lines.append(f"  flags       {', '.join(flags)}")
    if info["warnings"]:
        lines.append(f"  warnings    {len(info['warnings'])}")
        lines += [f"    - {w}" for w in info["warnings"]]
    return "\n".join(lines)


@guarded
def quick(args) -> int | None:
    """The answer when every run is converted already, from their caches' stored summaries
    (popview.cache.summary: no HDF5, numpy or kernels), else None."""
    out = []
    for path in expand_runs(args.paths):
        if (info := stored_info(path, args.cache_dir)) is None:
            return None
        out.append(info)
    _show(out, args.json)
    return 0


@guarded
def run(args) -> int:
    out = []
    for path in expand_runs(args.paths):
        info = stored_info(path, args.cache_dir)       # a converted run: its cache's summary, read at once
        if info is None:
            with open_experiment(path, args.cache_dir, ProgressBar(str(path))) as exp:
                info = exp.info()
        out.append(info)
        if not args.json:
            print(render(info))
    if args.json:
        _show(out, True)
    return 0


def _show(out: list[dict], as_json: bool) -> None:
    if as_json:
        print(json.dumps(out if len(out) > 1 else out[0], indent=2))
    else:
        for info in out:
            print(render(info))


def _count(n, one: str, many: str | None = None) -> str:
    """'1 process', '2 processes': a count of things (the threads per process may be a range)."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
