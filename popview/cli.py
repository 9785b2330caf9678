"""The `popview` command: the GUI by default, plus headless sub-commands.

    popview [FILE...]                 open the window (with files)
    popview --demo                    open the window on the demo experiment
    popview info TRACE...             what a trace or profile contains
    popview convert TRACE...          convert into the cache
    popview metrics TRACE...          POP metrics (table / json / csv)
    popview diff A B [-o OUT.cubex]   where two runs differ (A - B per call path)
    popview merge A B ... -o OUT      runs with different counters merged into one .cubex
    popview mean A B ... -o OUT       the mean of repetitions as one .cubex
    popview paramedir TRACE CFG...    Paraver cfg files, written as paramedir writes them
"""
from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

from popview._version import __version__
from popview.failures import one_line

# Sub-command modules: each has add_parser(subparsers) and run(args) -> int, and may have
# quick(args) -> int | None: the answer when it needs no kernels (None: run() answers).
COMMANDS = ("info", "convert", "metrics", "report", "diff", "merge", "mean", "paramedir")
# The kernels each command needs first (popview.precompile).
SCENARIOS = {"info": "info", "convert": "info", "metrics": "metrics", "report": "metrics", "diff": "metrics",
             "merge": "metrics", "mean": "metrics", "paramedir": "info"}


def _command_modules(names=COMMANDS):
    """The sub-commands' modules, every one by default (a missing one is an error naming it,
    never skipped). A command run imports its own module alone: the others may import
    numpy, pandas or the analysis at once, and `popview info` starts in a tenth of a second."""
    return {name: importlib.import_module(f"popview.commands.{name}") for name in names}


USAGE = """popview [-h] [--version] [--demo] [TRACE ...]
       popview {info,convert,metrics,report,diff,merge,mean,paramedir} [-h] ..."""

WINDOW_HELP = """The window: `popview [TRACE ...]` opens traces, profiles, folders of runs (a series)
or a .popview session; it needs a display (on a headless machine: xvfb-run -a popview ...).
The commands above need none; `popview COMMAND -h` describes each."""


def build_parser(mods) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="popview", usage=USAGE, description=__doc__.split("\n")[0],
                                     epilog=WINDOW_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"popview {__version__}")
    parser.add_argument("--demo", action="store_true",
                        help="open the window on a small demo: a hybrid MPI+OpenMP scaling series")
    sub = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND", prog="popview")
    for mod in mods.values():
        mod.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _one_blas_thread()
    if argv[:1] == ["--version"]:
        print(f"popview {__version__}")
        return 0
    if argv and argv[0] in ("-h", "--help"):
        build_parser(_command_modules()).parse_args(argv)
        return 0
    if argv and argv[0] in COMMANDS:          # the window never waits for the commands' imports
        mods = _command_modules((argv[0],))
        if argv[0] in mods:
            args = build_parser(mods).parse_args(argv)
            quick = getattr(mods[args.command], "quick", None)
            if quick is not None and (code := run_command(quick, args)) is not None:
                return code          # answered without kernels: no numba, no compile helper
            from popview.firstuse import announce_on_terminal
            stop_announcing = announce_on_terminal()     # the kernels' first compile is never a silent minute
            from popview import firstuse, precompile
            # first run: a second core compiles, from the command's first compile on (no helper
            # when its kernels are all in numba's cache, nor for inputs run interpreted)
            forget_helper = firstuse.watch_phases(helper_at_first_compile(SCENARIOS.get(args.command, "metrics")))
            try:
                return run_command(mods[args.command].run, args)
            finally:
                forget_helper()
                precompile.stop_helper()
                if not _signalled:               # a job killed by its scheduler starts nothing
                    precompile.build_ahead()    # once: the listed kernels compiled ahead of time
                stop_announcing()
                _ran.append(args.command)
    if (typo := mistyped_command(argv)) is not None:     # not a window to open on a file that is not there
        print(typo, file=sys.stderr)
        return 2
    unknown = [a for a in argv if a.startswith("-") and a != "--demo"]
    if unknown:       # not a file to open: the window takes files and --demo only
        print(f"popview: unknown option {unknown[0]} (the window takes files and --demo; "
              "options such as --cache-dir belong to the commands: see popview --help)", file=sys.stderr)
        return 2
    from popview.gui.app import run_gui  # Qt is imported only for the window

    return run_gui(argv)


def mistyped_command(argv: list[str]) -> str | None:
    """The message for a first word that is no file but close to a command (`popview metric
    run.prv`: the window was started on the files 'metric' and run.prv, or said "no display
    found" on a server), else None."""
    if not argv or argv[0].startswith("-") or os.path.exists(argv[0]):
        return None
    import difflib

    close = difflib.get_close_matches(argv[0], COMMANDS, n=1, cutoff=0.6)
    if not close:
        return None
    return (f"popview: {argv[0]!r} is neither a command nor a file: did you mean `popview {close[0]}`? "
            "(popview --help lists the commands)")


def helper_at_first_compile(scenario: str):
    """on(kernel, phase) for firstuse.watch_phases: starts the compile helper (popview.precompile)
    at the first compile of one of popview's kernels. Not at numba's load: a command whose
    kernels are all in numba's cache gains nothing from it, and the helper started beside
    each such command (1 s of CPU, 0.1 s measuring the idle cores) was ended before it
    compiled anything (10 warm `metrics` runs in a row: not one kernel more in the cache)."""
    import threading

    started = threading.Lock()

    def on(kernel: str, phase: str) -> None:
        if phase == "start" and started.acquire(blocking=False):
            from popview import precompile

            precompile.start_helper(scenario)
    return on


def _one_blas_thread() -> None:
    """numpy's OpenBLAS on one thread in popview's own processes, unless the environment says
    otherwise: popview makes no BLAS call, and OpenBLAS starting its threads and buffers took
    60-120 ms of `import numpy` (0.12-0.18 -> 0.06 s on the 2-core machine), in every command
    that reads a trace. Only before numpy is imported (a library user's process is theirs)."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


class Terminated(KeyboardInterrupt):
    """SIGTERM (timeout, batch schedulers): unwinds like Ctrl-C, so temporary files go."""


_signalled: list[int] = []      # signals received while a command ran


def _terminate(signum, frame):
    _signalled.append(signum)
    raise Terminated()


def _interrupt(signum, frame):
    _signalled.append(signum)
    raise KeyboardInterrupt()


def run_command(run, args) -> int:
    """Run a sub-command: every failure is one line on stderr and exit code 2; Ctrl-C and
    SIGTERM exit with 130 and 143; output cut short by a closed pipe (`| head`) exits 2."""
    handlers = {signal.SIGTERM: _terminate, signal.SIGINT: _interrupt} if _main_thread() else {}
    previous = {signum: signal.signal(signum, handler) for signum, handler in handlers.items()}
    _discard_closed_outputs()
    try:
        code = run(args)
        sys.stdout.flush()           # a closed pipe must fail here, not at interpreter exit
        return code
    except BrokenPipeError:
        _silence_stdout()
        return _fail("output closed before popview finished writing (broken pipe)")
    except Terminated:
        return _fail("terminated", 128 + signal.SIGTERM)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except Exception as exc:  # noqa: BLE001 -- the last line of defence: one line, never a traceback
        if _signalled:        # an interrupt that surfaced as another error (inside a kernel, a library)
            term = _signalled[-1] == signal.SIGTERM
            return _fail("terminated" if term else "interrupted", 128 + _signalled[-1])
        if os.environ.get("POPVIEW_DEBUG"):
            raise
        return _fail(one_line(exc))
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _discard_closed_outputs() -> None:
    """A command started with its output closed (`>&-`: a cron job, a daemon) has
    sys.stdout / sys.stderr None: what it writes is dropped, as print() drops it, the
    same for every command (`metrics` writing tables failed on None.write)."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _fail(message: str, code: int = 2) -> int:
    try:
        print(f"popview: error: {message}", file=sys.stderr, flush=True)
    except OSError:
        pass
    return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


_ran: list[str] = []       # the commands main() ran (not the window)


def run() -> None:
    """The program (`popview`, `python -m popview`): main(); after a command, the process
    ends at once once its threads are joined, its atexit handlers run and its output
    flushed (os._exit): the interpreter's own finalization, tearing down numba's and
    LLVM's state, cost 0.15-0.25 s of CPU after each command, for nothing. The window
    ends as Python ends (Qt's objects and settings are finalized on the way)."""
    code = main()
    if not _ran:
        raise SystemExit(code)
    exit_now(code)


def exit_now(code) -> None:
    import atexit
    import threading

    shutdown = getattr(threading, "_shutdown", None)     # what finalization does first: join threads
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:           # None: started with that output closed
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code if isinstance(code, int) else int(code is not None))


if __name__ == "__main__":
    run()
