"""Dask distributed, the optional engine of conversions and series larger than one
machine (`pip install popview[dask]`; docs/dask.md).

`connect(spec)` gives a client for what `--dask` names: `local` (a LocalCluster
of one single-threaded worker process per core), `local:N` (N workers), a
scheduler's address (`tcp://host:8786`, a dask-jobqueue cluster's
`scheduler_address`), or a `distributed.Client` / cluster object made by the
caller. `in_order` runs tasks on it and yields their results in submission
order: progress comes from the futures, a cancel cancels them, and a task
whose worker died is rerun by Dask; when Dask gives up on it (it killed
`distributed.scheduler.allowed-failures` + 1 workers) the error says so in
one line.
"""
from __future__ import annotations

import os
import re
import threading
import time
import warnings
from collections import deque
from contextlib import contextmanager

from popview.cache.progress import Progress

POLL_S = 0.2          # how often a cancel is looked for while waiting on a future
DRAIN_S = 60.0        # how long a cancel waits for the tasks already running to end


_LOCAL = re.compile(r"^local(:[1-9][0-9]*)?$")
_ADDRESS = re.compile(r"^([a-z]+://)?[A-Za-z0-9_.\-\[\]:]+:[0-9]+$")


def spec_problem(text: str) -> str | None:
    """Why `text` names no cluster (None when it does): local, local:N (N at least 1) or a
    scheduler's address (host:port, with its protocol or not)."""
    if text.startswith("local"):
        return None if _LOCAL.match(text) else "local:N takes a number of workers, at least 1"
    return None if _ADDRESS.match(text) else "not local, local:N or a scheduler's address such as tcp://host:8786"


class ClusterError(RuntimeError):
    """The Dask cluster could not run the work (unreachable, a task that kills its workers)."""


def available() -> bool:
    """Whether Dask distributed is installed, found without importing it: the import takes
    0.4-0.7 s, which the window's start (its File menu asks) and the CLI need not pay."""
    import importlib.util

    try:
        return importlib.util.find_spec("distributed") is not None
    except (ImportError, ValueError):
        return False


def require() -> None:
    """Import Dask distributed, or say how to install it (a broken installation included)."""
    if not available():
        raise ClusterError("--dask needs Dask distributed: pip install 'popview[dask]'")
    try:
        import distributed  # noqa: F401
    except ImportError as exc:
        raise ClusterError(f"--dask needs Dask distributed: pip install 'popview[dask]' ({exc})") from None


@contextmanager
def connect(spec):
    """A distributed.Client for `spec` (see the module's text); a LocalCluster made here is
    closed on exit, a client or cluster given by the caller is left as it was."""
    require()
    from distributed import Client

    if isinstance(spec, Client):
        yield spec
        return
    if hasattr(spec, "scheduler_address"):          # a LocalCluster, SLURMCluster... of the caller's
        with Client(spec) as client:
            yield client
        return
    text = str(spec)
    if text.startswith("local"):
        from distributed import LocalCluster

        if (why := spec_problem(text)) is not None:
            raise ClusterError(f"--dask {text}: {why}")
        n = int(text.split(":", 1)[1]) if ":" in text else (os.cpu_count() or 1)
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
                Client(cluster) as client:
            yield client
        return
    try:
        client = Client(text, timeout="20s")
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"--dask {text}: cannot reach the Dask scheduler: {exc}") from None
    with client:
        yield client


def workers(client) -> int:
    return max(1, len(client.scheduler_info(n_workers=-1).get("workers", {})))


def in_order(client, tasks, progress: Progress, window: int, what: str, total: float | None = None):
    """Results of `tasks`, an iterable of (function, args, weight), in their order; at most
    `window` submitted and unfinished at once. `progress` gets the weight done over `total`
    (default: over the weight submitted so far), and its cancel cancels every future."""
    pending: deque = deque()
    done = 0.0
    submitted = 0.0
    source = iter(tasks)
    more = True
    try:
        while True:
            while more and len(pending) < window:
                item = next(source, None)
                if item is None:
                    more = False
                    break
                fn, args, weight = item
                pending.append((_submit(client, fn, args), weight))
                submitted += weight
            if not pending:
                return
            future, weight = pending[0]
            finished = threading.Event()
            future.add_done_callback(lambda _: finished.set())
            while True:
                progress.check()
                # an event, not distributed.wait's timeout: that exception's traceback sits in a
                # reference cycle that kept this frame, and so its futures' results, until a collection
                finished.wait(POLL_S)
                running = sum(w for f, w in pending if f.done())
                progress((done + running) / max(total or submitted, 1e-9), what)
                if future.done():
                    break
            pending.popleft()
            result = _result(future, what)
            future = None                 # the result is the caller's: the task's data may go
            yield result
            done += weight
    finally:
        if pending:
            futures = [f for f, _ in pending]
            client.cancel(futures)
            _drain(client, {f.key for f in futures})
            # again: a cancel (a call of its own) can reach the scheduler before the submission
            # of a task just submitted (the batched stream), which it then misses
            client.cancel(futures)


def _submit(client, fn, args):
    """A task whose arguments carry its data (a decompressed block of a .prv.gz, tens of
    MB): sent once, to one worker, so Dask's advice to scatter repeated large graphs does
    not apply, and its warning would only alarm the user."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
        return client.submit(fn, *args, pure=False)


# A worker's task states (distributed.worker_state_machine) in which it runs or may start running.
_MAY_RUN = {"waiting", "ready", "constrained", "executing", "long-running", "cancelled", "resumed"}


def _drain(client, keys: set, timeout: float = DRAIN_S) -> None:
    """Wait until none of `keys` still runs on a worker: a cancelled task that had started
    runs to its end (Dask does not interrupt it), and its files must be written before the
    conversion removes its scratch folder. Gives up after `timeout` (a later conversion then
    removes what it wrote: popview.cache.scratch)."""
    def running(dask_worker, keys):
        """Keys this worker runs or may still start (a release not yet handled)."""
        tasks = dask_worker.state.tasks
        return [k for k in keys if k in tasks and tasks[k].state in _MAY_RUN]

    deadline, clean = time.monotonic() + timeout, 0
    while time.monotonic() < deadline and clean < 2:     # twice: a task on its way to a worker shows later
        try:
            busy = client.run(running, keys=keys)
        except Exception:  # noqa: BLE001 - workers gone, a client closing: nothing more to wait for
            return
        clean = 0 if any(busy.values()) else clean + 1
        time.sleep(POLL_S / 2)


def _result(future, what: str):
    try:
        return future.result()
    except Exception as exc:
        if type(exc).__name__ == "KilledWorker":
            raise ClusterError(f"{what}: Dask workers died running one of its tasks ({exc}); "
                               "abandoned, no cache written") from None
        raise
