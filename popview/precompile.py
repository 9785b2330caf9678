"""The first run's compiles, shared with a second core.

numba compiles a kernel at its first call, one after the other, in the
process that needs it: on a new machine a command spends most of its first
run compiling, on one core. A helper process compiles the same kernels from
the other end of the list the command will need (recorded in
resources/kernels.json by tests/benchmarks/record_kernels.py), so that the
two meet in the middle: the command then loads from numba's cache what the
helper compiled, and the helper goes on with what other commands need. It
ends with the command.

The helper starts only when a core is free (the load average says so) and
while the command's kernels are not all compiled for this version of popview,
numba and Python: when it has gone through a scenario's kernels it leaves that
scenario's stamp in numba's cache folder, and later commands of the scenario
start no helper (one stamp for all would wait for the window's kernels, which
short commands never leave it the time to compile: it started beside every
command, for nothing). A
kernel the list names wrongly (renamed, new argument types) is skipped: the
list only saves time, it is never needed.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from popview import firstuse
from popview.aot import MANIFEST  # the list (popview.aot builds its kernels ahead of time too)

ENV_OFF = "POPVIEW_PRECOMPILE"           # "0": no helper (the tests: their kernels are compiled already)
SCENARIOS = ("info", "metrics", "window", "archives")   # archives: OTF2 conversions, compiled

_BOOT = ("import os, signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
         "signal.signal(signal.SIGTERM, lambda *_: os._exit(1)); "
         "from popview.precompile import serve; import sys; raise SystemExit(serve(*sys.argv[1:]))")

_helper: list = []      # the running helper of this process, if any


# ---------------------------------------------------------------- signatures as data

def type_to_data(t):
    """A numba argument type as JSON data, or None for a kind this list does not keep."""
    from numba.core import types

    if isinstance(t, types.Array):
        inner = type_to_data(t.dtype)
        return None if inner is None else ["array", inner, t.ndim, t.layout, not t.mutable]
    if isinstance(t, types.UniTuple):
        inner = type_to_data(t.dtype)
        return None if inner is None else ["unituple", inner, t.count]
    if isinstance(t, types.Tuple):
        inner = [type_to_data(x) for x in t.types]
        return None if any(x is None for x in inner) else ["tuple", inner]
    if isinstance(t, (types.Integer, types.Float, types.Boolean, types.NoneType)) and not isinstance(t, types.Literal):
        return ["scalar", str(t)]
    return None


def data_to_type(data):
    """The numba type of type_to_data()'s output (ValueError on anything else)."""
    from numba.core import types

    kind = data[0]
    if kind == "array":
        _, dtype, ndim, layout, readonly = data
        return types.Array(data_to_type(dtype), int(ndim), str(layout), readonly=bool(readonly))
    if kind == "unituple":
        return types.UniTuple(data_to_type(data[1]), int(data[2]))
    if kind == "tuple":
        return types.Tuple([data_to_type(x) for x in data[1]])
    if kind == "scalar":
        found = {"bool": types.boolean, "none": types.none}.get(data[1], getattr(types, str(data[1]), None))
        if isinstance(found, types.Type):
            return found
    raise ValueError(f"not a recorded argument type: {data!r}")


# ---------------------------------------------------------------- recording the list

def record_to(path: str) -> None:
    """Append a JSON line (module, function, argument types) to `path` for each of
    popview's kernels this process compiles, in the order they are needed (a run of
    record_kernels.py sets POPVIEW_RECORD_KERNELS in the commands it times)."""
    from numba.core import event

    class _Recorder(event.Listener):
        def on_start(self, ev):
            func = ev.data["dispatcher"].py_func
            if not func.__module__.startswith("popview."):
                return
            args = [type_to_data(t) for t in ev.data["args"]]
            if any(a is None for a in args):
                return
            with open(path, "a") as out:         # one short line per write: processes may share the file
                out.write(json.dumps([func.__module__, func.__name__, args]) + "\n")

        def on_end(self, ev):
            pass

    event.register("numba:compile", _Recorder())


# ---------------------------------------------------------------- the helper

def manifest() -> dict:
    """{scenario: [[module, function, argument types], ...]} in the order each needs them."""
    try:
        return json.loads(MANIFEST.read_text())["scenarios"]
    except (OSError, ValueError, KeyError):
        return {}


def helper_order(kernels: dict, scenario: str) -> list:
    """What the helper compiles: the scenario's kernels from its last to its first (the
    command compiles from the first), then the other scenarios' kernels."""
    own = list(reversed(kernels.get(scenario, [])))
    rest = [k for name in SCENARIOS if name != scenario for k in kernels.get(name, [])]
    out, seen = [], set()
    for entry in own + rest:
        key = json.dumps(entry)
        if key not in seen:
            seen.add(key)
            out.append(entry)
    return out


def stamp_path(kernels: dict, scenario: str) -> Path | None:
    """The file that says every kernel listed for `scenario` is in numba's cache for this
    version of popview, numba, Python and the listed kernels' source files."""
    from popview._version import __version__

    cache_dir = os.environ.get("NUMBA_CACHE_DIR")
    if not cache_dir or not MANIFEST.exists():
        return None
    h = hashlib.sha1(f"{__version__} {sys.version} {_numba_version()} {MANIFEST.stat().st_mtime_ns}".encode())
    for module in sorted({entry[0] for entries in kernels.values() for entry in entries}):
        path = Path(__file__).parent.joinpath(*module.split(".")[1:])
        try:
            st = path.with_suffix(".py").stat() if path.with_suffix(".py").exists() else (path / "__init__.py").stat()
        except OSError:
            continue
        h.update(f"{module} {st.st_mtime_ns} {st.st_size}".encode())
    return Path(cache_dir) / f"popview-kernels-{h.hexdigest()[:16]}-{scenario}.done"


def _numba_version() -> str:
    """The installed numba, told by its files."""
    from popview.aot import installed

    return installed("numba")


def start_helper(scenario: str) -> bool:
    """Start the helper for a command about to compile `scenario`'s kernels, unless they are
    compiled already, it is switched off, or it runs already. Its compiles are relayed to
    this process's watches (firstuse.relay). Returns whether it started."""
    if _helper or os.environ.get(ENV_OFF) == "0" or getattr(sys, "frozen", False) or os.name != "posix":
        return False
    kernels = manifest()
    stamp = stamp_path(kernels, scenario) if kernels.get(scenario) else None
    if stamp is None or stamp.exists() or not _a_core_is_free():
        return False
    from popview.cache.sidecar import PARENT_ENV

    env = dict(os.environ, **{PARENT_ENV: str(os.getpid())})
    env.pop(firstuse.ENV_TERMINAL, None)          # told here, relayed
    try:
        proc = subprocess.Popen([sys.executable, "-c", _BOOT, scenario, str(MANIFEST)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True, env=env)
    except OSError:
        return False
    _helper.append(proc)
    threading.Thread(target=_relay_from, args=(proc,), daemon=True, name="popview-precompile-relay").start()
    return True


def _a_core_is_free() -> bool:
    """The helper gains time only on a core nothing else uses: on a busy machine (measured:
    load 4-5 on 2 cores) the first `info` took as long with it, for 15 % more CPU. Measured
    now, not by the load average: that one still counts a minute of past work (the install
    just before, a previous run), and kept the helper off on an idle 2-core machine."""
    idle = _idle_cores()
    if idle is not None:
        return idle >= FREE_CORE
    try:
        return os.getloadavg()[0] <= (os.cpu_count() or 1) - 1
    except OSError:
        return True


FREE_CORE = 0.7
"""Idle cores (in core units, over IDLE_SAMPLE_S) from which a core counts as free."""
IDLE_SAMPLE_S = 0.1


def _idle_cores() -> float | None:
    """How many cores sat idle over the last IDLE_SAMPLE_S (from /proc/stat); None where unknown."""
    first = _cpu_times()
    if first is None:
        return None
    time.sleep(IDLE_SAMPLE_S)
    second = _cpu_times()
    if second is None:
        return None
    busy_idle = [b - a for a, b in zip(first, second)]
    total = sum(busy_idle)
    wall_ticks = total / max(os.cpu_count() or 1, 1)
    return busy_idle[1] / wall_ticks if wall_ticks > 0 else None


def _cpu_times(text: str | None = None) -> tuple[int, int] | None:
    """(busy, idle) clock ticks of all cores from /proc/stat's first line (idle and iowait
    count as idle)."""
    try:
        if text is None:
            with open("/proc/stat", encoding="ascii") as f:
                text = f.readline()
        fields = [int(v) for v in text.split()[1:]]
    except (OSError, ValueError):
        return None
    if len(fields) < 5 or not text.startswith("cpu "):
        return None
    idle = fields[3] + fields[4]
    return sum(fields[:8]) - idle, idle


def stop_helper() -> None:
    """End the helper (what it compiled so far stays in numba's cache)."""
    while _helper:
        proc = _helper.pop()
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def build_ahead() -> None:
    """At the end of a command (or the window): when this process loaded numba for popview's
    kernels and no module of them compiled ahead of time exists for this machine (popview.aot),
    start its build in the background; it outlives the command, and later commands run the
    listed kernels from it without importing numba. Never raises."""
    from popview import jit

    if not jit.is_active():
        return
    try:
        from popview import aot

        aot.start_build()
    except Exception:
        pass


def _relay_from(proc) -> None:
    for line in proc.stdout:
        try:
            message = json.loads(line)
            firstuse.relay(message["kernel"], message["phase"])
        except (ValueError, KeyError, TypeError):
            continue
        except Exception:       # a watch that fails (a closed window) must not end the relay
            continue
    proc.stdout.close()


def serve(scenario: str, listed_in: str | None = None) -> int:
    """The helper process: compile the kernels in helper_order() of the list `listed_in`
    (default: popview's), each announced on stdout; leave a scenario's stamp once all its
    kernels are in the cache (the command's own first: its kernels come first)."""
    from popview.cache.sidecar import _end_with_parent

    global MANIFEST
    MANIFEST = Path(listed_in) if listed_in else MANIFEST
    _end_with_parent()
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    firstuse.watch_phases(lambda kernel, phase: channel.write(json.dumps({"kernel": kernel, "phase": phase}) + "\n"))
    kernels = manifest()
    left = {name: {json.dumps(entry) for entry in entries} for name, entries in kernels.items()}
    for entry in helper_order(kernels, scenario):
        compile_one(*entry)
        for name, keys in left.items():
            if keys:
                keys.discard(json.dumps(entry))
                if not keys:
                    _leave_stamp(stamp_path(kernels, name))
    return 0


def _leave_stamp(stamp: Path | None) -> None:
    if stamp is not None:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()


def compile_one(module: str, name: str, args: list) -> bool:
    """Compile (or load from numba's cache) one recorded kernel; False when the record no
    longer fits the code."""
    try:
        found = importlib.import_module(module)
        sig = tuple(data_to_type(a) for a in args)
        getattr(found, name).overloads               # popview.jit's kernels: numba's dispatcher now
        dispatcher = getattr(found, name)
        if sig not in dispatcher.overloads and not in_numba_cache(dispatcher, sig):
            dispatcher.compile(sig)
        return True
    except Exception:           # renamed, retyped, or a compile error the real call would show
        return False


def in_numba_cache(dispatcher, sig) -> bool:
    """Whether numba's cache holds `sig` of `dispatcher` for this machine, told by its
    index alone: loading it (3-12 ms a kernel) is the command's work, not the helper's,
    which then ends in a fraction of a second (a helper that loaded everything was ended
    by every short command before it could leave its stamp, and started again)."""
    cache = getattr(dispatcher, "_cache", None)
    try:
        key = cache._index_key(sig, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:           # numba's private API changed: load or compile as before
        return False
