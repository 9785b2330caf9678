"""A second process that builds one optional derived group while this process
builds another: the builders are independent, and a conversion would
otherwise use one core of the machine.

The child is a fresh interpreter (`python -m popview.cache.sidecar`; in the
bundle, the executable with WORKER_FLAG), never a fork (the GUI converts in
threads) nor a multiprocessing spawn (which re-runs the user's main script).
It is started early, so its imports overlap the sorting, reads the raw
sorted copy of the tables (rawtables.py), writes its group into a side file
the writer then copies into the cache, and talks JSON lines over its pipes.
The side builder must not change the definitions: its copy is thrown away.
A large companion of a finished cache (companion.py) is built the same way, its
cache handed over as an open descriptor: a write failing inside HDF5 there can
crash only the child, which reports the failure (its errno) and leaves at once.

The child ends with its parent, quietly: it ignores Ctrl-C (the parent, which
gets it too, stops it), SIGTERM ends it at once (os._exit: no traceback, no
numba frame unwound by an exception), and it is sent SIGTERM when its parent
dies (Linux's parent-death signal; elsewhere a thread watches the parent). Its
files all lie in the parent's scratch folder, which the parent or, after a
kill -9, the next conversion removes (scratch.py).
"""
from __future__ import annotations

import importlib
import json
import os
import queue
import re
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from popview import firstuse
from popview.cache import heap
from popview.cache.errors import DerivedDataFailed, DerivedProcessEnded
from popview.cache.progress import Progress
from popview.model.definitions import Definitions
from popview.threads import Pool, interrupts_held

# Below this many staged records a second process costs more than it saves.
MIN_ROWS = 2_000_000
WORKER_FLAG = "--popview-derived-worker"
PARENT_ENV = "POPVIEW_DERIVED_PARENT"
PRELOAD_ENV = "POPVIEW_DERIVED_PRELOAD"      # the modules the child imports first (default: _PRELOAD)
PR_SET_PDEATHSIG = 1
_REPORT_EVERY = 0.25    # seconds between the child's progress messages
_PRELOAD = ("popview.cache.pyramid", "popview.cache.cumulative")


# Ctrl-C and SIGTERM are settled before anything is imported (a KeyboardInterrupt there
# would print a traceback).
_BOOT = ("import os, signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
         "signal.signal(signal.SIGTERM, lambda *_: os._exit(1)); "
         "from popview.cache.sidecar import serve; raise SystemExit(serve())")


def worker_command() -> list[str]:
    if getattr(sys, "frozen", False):
        return [sys.executable, WORKER_FLAG]
    return [sys.executable, "-c", _BOOT]


class SideBuilder:
    """Handle on the child process: submit builds (run in order), then wait for them."""

    def __init__(self, preload: tuple[str, ...] | None = None, pass_fds: tuple[int, ...] = ()):
        """`preload`: the modules the child imports before its first job (default: the
        builders'); `pass_fds`: descriptors the child inherits (a companion's cache: companion.py)."""
        env = dict(os.environ, **{PARENT_ENV: str(os.getpid())})
        env.pop(firstuse.ENV_TERMINAL, None)          # its compiles are told here (relayed), not by the child
        if preload is not None:
            env[PRELOAD_ENV] = ",".join(preload)
        self._proc = None
        try:
            with interrupts_held():      # a Ctrl-C as it starts is raised once it is known here
                self._proc = subprocess.Popen(worker_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                              close_fds=True, pass_fds=pass_fds, env=env)
        except BaseException:
            if self._proc is not None:   # started, but no owner to stop it: stopped here
                self._stop()
            raise
        self._buffer = b""
        self._pending = 0
        self._fraction = 0.0
        # the jobs are written by a thread: a job (the definitions, the call paths: 90 KB on
        # the EPOCH runs) is larger than the pipe, and the child reads it only once its
        # imports are done, so writing it here blocked the conversion 0.35 s on 143 MB
        self._sender = Pool(1, thread_name_prefix="popview-side-jobs")

    def submit(self, module: str, src: Path, dst: Path, defs: Definitions, options: dict | None = None) -> None:
        """Run module.build(RawTables(src), defs, progress, dst=..., **options) in the child."""
        self.submit_job({"module": module, "src": str(src), "dst": str(dst), "options": options or {},
                         "definitions": defs.to_json_dict(),
                         "callpath_parent": list(map(int, defs.callpath_parent)),
                         "callpath_region": list(map(int, defs.callpath_region))})

    def submit_job(self, job: dict) -> None:
        """Send `job` (a build above, or a companion's: companion.run_job) to the child."""
        self._sender.submit(self._send, json.dumps(job).encode() + b"\n")    # the job as it is now
        self._pending += 1

    def _send(self, payload: bytes) -> None:
        """In the sender's thread. A child that ended cannot be written to: wait() tells why
        (it reads the end of its output)."""
        try:
            self._proc.stdin.write(payload)
            self._proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def no_more_jobs(self) -> None:
        """Let the child exit as soon as its last job is done (its exit then overlaps
        this process's work instead of being waited for at the end)."""
        try:
            self._sender.submit(self._end_jobs)
        except RuntimeError:         # closed already
            pass

    def _end_jobs(self) -> None:
        try:
            self._proc.stdin.close()
        except BrokenPipeError:
            pass

    def wait(self, progress: Progress) -> None:
        """Relay the child's progress until every build submitted is done; a failure
        is raised here."""
        while self._pending:
            progress.check()
            for message in self._messages():
                if message["kind"] == "progress":
                    self._fraction = message["fraction"]
                    progress(self._fraction, message["text"])
                elif message["kind"] == "compile":       # the child's first use: said, not a silent bar
                    firstuse.relay(message["kernel"], message["phase"])
                    progress(self._fraction, f"{firstuse.LABEL}: compiling {message['kernel']}")
                elif message["kind"] == "done":
                    self._pending -= 1
                elif message.get("errno"):        # a full disk, say: raised as what it is
                    raise OSError(message["errno"], f"building derived data failed: {message['text']}",
                                  message.get("filename"))
                else:
                    raise DerivedDataFailed(f"building derived data failed: {message['text']}")

    def _messages(self) -> list[dict]:
        fd = self._proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], 0.1)
        if not ready:
            return []
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            code = self._proc.wait()
            raise DerivedProcessEnded(f"the derived-data process ended without a result ({exit_reason(code)})")
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        return [json.loads(line) for line in lines if line.strip()]

    def close(self) -> None:
        """Stop the child: told there is no more work, then asked to stop if it still
        runs (so it removes its scratch files)."""
        self.no_more_jobs()
        try:
            self._proc.wait(timeout=0 if self._pending else 2)
        except subprocess.TimeoutExpired:
            pass
        self._stop(self._sender)

    def _stop(self, sender: Pool | None = None) -> None:
        """The child ended (asked to stop if it still runs) and waited for, `sender` shut
        down, the pipes closed."""
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        self._proc.wait()
        if sender is not None:
            sender.shutdown()         # its last write failed with the child, or was done
        for pipe in (self._proc.stdin, self._proc.stdout):
            try:
                pipe.close()
            except BrokenPipeError:
                pass


def errno_of(exc: BaseException) -> int | None:
    """The errno of a failure: an OSError's, or the one HDF5 tells in the text of the
    RuntimeError h5py raises for some failed writes (`... errno = 28, error message = ...`)."""
    if isinstance(exc, OSError) and exc.errno:
        return exc.errno
    found = re.search(r"\berrno = (\d+)", str(exc)) if isinstance(exc, RuntimeError) else None
    return int(found.group(1)) if found else None


def exit_reason(code: int) -> str:
    """`exit code 1`, or the signal that ended a process (`killed by SIGSEGV`, exit code -11)."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}, exit code {code}"
        except ValueError:
            pass
    return f"exit code {code}"


def available() -> bool:
    """Pipes are polled with select(): POSIX only; elsewhere everything runs in one process."""
    return os.name == "posix"


def serve() -> int:
    """Child process: import the builders, run the jobs sent one after the other,
    report back on each."""
    _end_with_parent()
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                      # whatever else is printed must not garble the channel
    last = [0.0]

    def send(**message) -> None:
        channel.write(json.dumps(message) + "\n")

    firstuse.watch_phases(lambda kernel, phase: send(kind="compile", kernel=kernel, phase=phase))
    preload = os.environ.get(PRELOAD_ENV)
    for name in (preload.split(",") if preload is not None else _PRELOAD):
        if name:
            importlib.import_module(name)
    heap.keep_freed_memory()

    def report(fraction: float, text: str) -> None:
        if time.monotonic() - last[0] >= _REPORT_EVERY:
            last[0] = time.monotonic()
            send(kind="progress", fraction=fraction, text=text)

    for line in _lines_read_ahead(sys.stdin):
        try:
            _run(json.loads(line), report)
            heap.release_free_memory()    # the next job's peak comes while the other process peaks
            send(kind="done")
        except Exception as exc:      # reported to the parent, which raises it
            send(kind="error", text=f"{type(exc).__name__}: {exc}", errno=errno_of(exc),
                 filename=getattr(exc, "filename", None) if isinstance(exc, OSError) else None)
            channel.flush()
            # gone at once: after a write failure inside HDF5 (a full disk), releasing the failed
            # file's objects at the interpreter's exit crashes (SIGSEGV in H5D_close)
            _leave(1)
    _leave(0)      # the work is done and written: no interpreter teardown for the parent to wait for
    return 0


def _leave(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    os._exit(code)


def _end_with_parent() -> None:
    """Quiet on Ctrl-C, gone at once on SIGTERM, and gone when the parent is. SIGTERM keeps
    the system's default action: a Python handler runs only between bytecodes, so a child
    inside a long kernel, a compile or an HDF5 call outlived its parent and held its
    stderr open (a `popview convert` killed under load did not end for a minute)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    parent = int(os.environ.get(PARENT_ENV, "0") or 0)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass
    if parent and os.getppid() != parent:          # the parent died before the signal was asked for
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if parent and os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="popview-parent-watch").start()


def _lines_read_ahead(stream):
    """The stream's lines, read by a thread as they come: a job sent while another runs
    must not block its sender on a full pipe (the definitions can be larger than one)."""
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return iter(lines.get, None)


def _run(job: dict, report) -> None:
    if "companion" in job:
        from popview.cache.companion import run_job

        run_job(job, Progress(report))
        return
    from popview.cache.integrity import writing
    from popview.cache.rawtables import RawTables

    defs = Definitions.from_json_dict(job["definitions"], job["callpath_parent"], job["callpath_region"])
    with writing(job["dst"], "w") as target:
        importlib.import_module(job["module"]).build(RawTables(Path(job["src"])), defs, Progress(report),
                                                     dst=target, **job["options"])


if __name__ == "__main__":
    raise SystemExit(serve())
