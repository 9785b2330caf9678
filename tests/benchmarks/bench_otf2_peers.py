"""OTF2 conversion side by side with two peers, each a fresh process, in turn A B A B:

- `otf2-print --silent` (the OTF2 library reading every event and printing
  nothing) on the 10 M-event archive bench_otf2.py writes;
- pipit (hpcgroup/pipit, `Trace.from_otf2`: every event into a pandas table)
  on the small real OTF2 archives in ../shared/traces.

popview's figure is `popview convert --force`: the whole cache (events,
call paths, derived data, checksums). Prints the median wall, CPU seconds,
joint peak resident memory and the ratios popview / peer pair by pair, of the
wall and of the CPU (the steadier figure on a loaded machine). Both run with
Python's bytecode cache on, as an installed package runs (a shell with
PYTHONDONTWRITEBYTECODE=1 would otherwise have each compile its own source,
0.2 s of popview's start, every run).

    python tests/benchmarks/bench_otf2_peers.py [--events 10000000] [--runs 3] [--dir DIR]
    python tests/benchmarks/bench_otf2_peers.py --small     # seconds: what CI runs

otf2-print comes with Debian's otf2-tools (.ci/run installs it). pipit is on
no package registry under its name (PyPI's `pipit` is an unrelated
placeholder): give its source folder as POPVIEW_PIPIT=/path/to/pipit (the
folder holding the `pipit` package), or have it importable. A missing peer
is skipped with the reason.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))
from ahead import installed_env, ready  # noqa: E402
from bench_vs_paramedir import REPO, SHARED, figures, ratio_line, timed  # noqa: E402

REAL = ("pipit/ping-pong-otf2", "pipit/ping-pong-otf2-papi", "tracer-stencil4d/traces-64",
        "popview-heat/scorep/hyb_2x2", "apex-otf2/OTF2_archive", "fastotf2/simple-mi300-example-run")
WARM_UP = True          # a run of each first, not counted (not at --small: its figures measure nothing)
PIPIT_READ = "import sys, pipit; t = pipit.Trace.from_otf2(sys.argv[1]); print(len(t.events))"


def anchor(folder: Path) -> Path:
    found = sorted(folder.glob("*.otf2"))
    if not found:
        raise FileNotFoundError(f"{folder}: no .otf2 anchor")
    return found[0]


def pipit_env() -> tuple[dict | None, str]:
    """The environment pipit imports in, or None and why not."""
    env = installed_env()
    where = os.environ.get("POPVIEW_PIPIT")
    if where:
        env["PYTHONPATH"] = where + os.pathsep + env.get("PYTHONPATH", "")
    probe = subprocess.run([sys.executable, "-c", "import pipit; pipit.Trace.from_otf2"], env=env,
                           capture_output=True, text=True)
    if probe.returncode:
        return None, ("pipit (hpcgroup/pipit) not importable: PyPI's `pipit` is a placeholder; set "
                      "POPVIEW_PIPIT to its source folder")
    return env, ""


def pair(name: str, size_note: str, pop_cmd: list[str], peer_name: str, peer_cmd: list[str] | None,
         peer_env: dict | None, runs: int) -> None:
    env = installed_env(PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    pop, peer = [], []
    if peer_cmd:
        try:
            first = timed(peer_cmd, peer_env)        # a warm-up, or the first counted run
        except RuntimeError as exc:                  # pipit reads only archives named traces.otf2
            print(f"\n{name}: {peer_name} cannot read it ({str(exc).splitlines()[-1][-200:]})")
            peer_cmd = None
        else:
            peer += [] if WARM_UP else [first]
    if WARM_UP:                                      # page cache, numba's cached kernels
        timed(pop_cmd, env)
    for i in range(runs):
        pop.append(timed(pop_cmd, env))
        if peer_cmd and len(peer) < runs:
            peer.append(timed(peer_cmd, peer_env))
    print(f"\n{name} ({size_note}), {runs} interleaved runs each (load {os.getloadavg()[0]:.1f} at the end)")
    for label, rs in [("popview convert", pop)] + ([(peer_name, peer)] if peer else []):
        print(figures(label, rs))
    if peer:
        print(ratio_line(pop, peer, f"popview / {peer_name}"))
        print(cpu_ratio_line(pop, peer, f"popview / {peer_name}"))


def cpu_ratio_line(num: list[dict], den: list[dict], label: str) -> str:
    """The CPU seconds' ratio num / den, pair by pair: median, min, max."""
    ratios = sorted(a["cpu"] / b["cpu"] for a, b in zip(num, den))
    return (f"  {label} CPU, pair by pair: median {statistics.median(ratios):.2f} "
            f"(min {ratios[0]:.2f}, max {ratios[-1]:.2f})")


def main() -> int:
    global WARM_UP
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "popview-bench-otf2-peers")
    ap.add_argument("--small", action="store_true", help="a 100 k-event archive and one real one, one run (CI)")
    ap.add_argument("--only", choices=("synthetic", "real"), help="one half: the synthetic archive or the real ones")
    args = ap.parse_args()
    if args.small:
        args.events, args.runs, WARM_UP = 100_000, 1, False
    args.dir.mkdir(parents=True, exist_ok=True)
    cache = args.dir / "cache"
    print(f"{os.cpu_count()} cores, Python {sys.version.split()[0]}, load {os.getloadavg()[0]:.1f}")
    print(f"kernels compiled ahead of time: {ready(REPO, build=not args.small)}")   # as after a first run

    if args.only != "real":
        synthetic(args, cache)
    if args.only != "synthetic":
        real(args, cache)
    return 0


def popview_cmd(cache: Path) -> list[str]:
    return [sys.executable, "-m", "popview", "convert", "--force", "--cache-dir", str(cache)]


def synthetic(args, cache: Path) -> None:
    sys.path.insert(0, str(REPO))
    import bench_otf2

    archive = args.dir / f"synthetic-{args.events}"
    total = bench_otf2.generate(archive, args.events, 8)
    printer = shutil.which("otf2-print")
    if not printer:
        print("SKIPPED otf2-print: not installed (Debian's otf2-tools)")
    pop = popview_cmd(cache)
    pair(f"synthetic OTF2 archive ({archive.name})", f"{total:,} events", pop + [str(anchor(archive))],
         "otf2-print --silent", [printer, "--silent", str(anchor(archive))] if printer else None, None, args.runs)


def real(args, cache: Path) -> None:
    pop = popview_cmd(cache)
    env, why = pipit_env()
    if env is None:
        print(f"\nSKIPPED pipit: {why}")
    folders = [SHARED / "traces" / r for r in (REAL[-1:] if args.small else REAL)]
    for folder in folders:
        if not folder.exists():
            print(f"\nSKIPPED {folder}: absent (../shared/traces)")
            continue
        pair(str(folder.relative_to(SHARED / "traces")), f"{sum(f.stat().st_size for f in folder.rglob('*') if f.is_file()) / 1e6:.1f} MB",
             pop + [str(anchor(folder))], "pipit", [sys.executable, "-c", PIPIT_READ, str(folder)] if env else None,
             env, args.runs)


if __name__ == "__main__":
    raise SystemExit(main())
