"""The first run's compiles: the helper process that compiles kernels from the
other end of a command's list, the list itself, and the compiles of popview's
other processes told in the window and on the terminal."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import popview
from popview import firstuse, precompile

PACKAGE = Path(popview.__file__).resolve().parent
KERNEL = ["popview.cache.order", "location_order",
          [["array", ["scalar", "int32"], 1, "C", False], ["array", ["scalar", "int64"], 1, "C", False]]]


def test_argument_types_survive_the_list():
    from numba.core import types

    for t in (types.Array(types.int64, 1, "C"), types.Array(types.uint8, 2, "A", readonly=True),
              types.UniTuple(types.int32, 3), types.Tuple([types.float64, types.boolean]), types.none,
              types.int64, types.Array(types.bool_, 1, "C")):
        data = json.loads(json.dumps(precompile.type_to_data(t)))
        assert precompile.data_to_type(data) == t
    assert precompile.type_to_data(types.unicode_type) is None      # not kept: the kernel is skipped
    with pytest.raises(ValueError):
        precompile.data_to_type(["scalar", "__class__"])


def test_the_helper_starts_from_the_end_then_does_the_rest():
    a, b, c, d = (["m", name, []] for name in "abcd")
    order = precompile.helper_order({"info": [a, b], "metrics": [a, b, c], "window": [d, a]}, "info")
    assert order == [b, a, c, d]


def test_a_stale_entry_is_skipped_not_raised():
    assert not precompile.compile_one("popview.cache.order", "no_such_kernel", [])
    assert not precompile.compile_one("popview.no_such_module", "kernel", [])
    assert not precompile.compile_one("popview.cache.order", "location_order", [["scalar", "nonsense"]])
    assert not precompile.compile_one("popview.cache.codes", "DENSE_SPAN", [])       # not a kernel


def test_the_recorded_list_names_kernels_that_exist():
    kernels = precompile.manifest()
    assert set(kernels) == set(precompile.SCENARIOS)
    entries = {(m, f) for scenario in kernels.values() for m, f, _ in scenario}
    missing = []
    for module, name in entries:
        try:
            found = getattr(__import__(module, fromlist=[name]), name, None)
        except ModuleNotFoundError:
            found = None
        if not hasattr(found, "py_func"):
            missing.append(f"{module}.{name}")
    assert not missing, f"kernels.json names kernels that are gone (run tests/benchmarks/record_kernels.py): {missing}"


def test_other_processes_compiles_are_counted_as_this_ones():
    seen = []
    stop = firstuse.watch_compiles(lambda kernel, done, started: seen.append((kernel, done, started)))
    try:
        firstuse.relay("cache.pyramid.reduce_kernel", "start")
        firstuse.relay("cache.pyramid.reduce_kernel", "end")
    finally:
        stop()
    firstuse.relay("cache.pyramid.reduce_kernel", "start")          # no watch any more: nobody told
    assert seen == [("cache.pyramid.reduce_kernel", 0, 1), ("cache.pyramid.reduce_kernel", 1, 1)]


def test_the_side_process_compiles_show_as_the_first_use_step(monkeypatch):
    """A compile in the derived-data process is the labelled first-use step in the progress
    (what the window's bar shows), not a silent bar."""
    from popview.cache.progress import Progress
    from popview.cache.sidecar import SideBuilder

    side = SideBuilder.__new__(SideBuilder)
    side._pending, side._fraction = 1, 0.0
    batches = [[{"kind": "progress", "fraction": 0.25, "text": "pyramid"}],
               [{"kind": "compile", "kernel": "cache.pyramid.reduce_kernel", "phase": "start"}],
               [{"kind": "done"}]]
    monkeypatch.setattr(side, "_messages", lambda: batches.pop(0))
    told, relayed = [], []
    stop = firstuse.watch_compiles(lambda kernel, done, started: relayed.append(kernel))
    try:
        side.wait(Progress(lambda fraction, text: told.append((fraction, text))))
    finally:
        stop()
    assert told[1] == (0.25, "preparing popview for first use, once: compiling cache.pyramid.reduce_kernel")
    assert relayed == ["cache.pyramid.reduce_kernel"]


def _helper_env(tmp_path, monkeypatch, manifest):
    path = tmp_path / "kernels.json"
    path.write_text(json.dumps({"scenarios": manifest}))
    monkeypatch.setattr(precompile, "MANIFEST", path)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setenv("PYTHONPATH", str(PACKAGE.parent))
    monkeypatch.delenv("POPVIEW_PRECOMPILE", raising=False)
    monkeypatch.setattr(precompile, "_idle_cores", lambda: 2.0)     # an idle machine


def test_the_helper_compiles_tells_and_leaves_a_stamp(tmp_path, monkeypatch):
    """The helper compiles the listed kernel into numba's cache (a fresh one here), its
    compile is relayed to this process's watches, and a stamp then keeps later runs from
    starting it."""
    manifest = {"info": [KERNEL]}
    _helper_env(tmp_path, monkeypatch, manifest)
    seen = []
    stop = firstuse.watch_compiles(lambda kernel, done, started: seen.append((kernel, done)))
    try:
        assert precompile.start_helper("info")
        assert not precompile.start_helper("info"), "one helper at a time"
        proc = precompile._helper[0]
        assert proc.wait(timeout=300) == 0
        deadline = time.monotonic() + 10
        while (not seen or seen[-1][0] != "cache.order.location_order") and time.monotonic() < deadline:       # the relay thread reads the last lines
            time.sleep(0.05)
    finally:
        precompile.stop_helper()
        stop()
    assert seen[0] == ("cache.order.location_order", 0)              # and the kernels it calls
    assert seen[-1] == ("cache.order.location_order", len(seen) // 2), "every start ends"
    assert list((tmp_path / "numba").rglob("*location_order*.nbi")), "not in numba's cache"
    stamp = precompile.stamp_path(manifest, "info")
    assert stamp.exists()
    assert not precompile.start_helper("info"), "started again although everything is compiled"


def test_a_scenario_done_is_stamped_before_the_others(tmp_path, monkeypatch):
    """The helper stamps the command's scenario as soon as its kernels are in numba's cache:
    ended (by a short command) before the other scenarios' kernels, it is not started again
    beside the next command of that scenario. With one stamp for everything it started beside
    every command of a user who never opened the window, and was ended before its first compile."""
    (tmp_path / "slow_kernels.py").write_text("import time\ntime.sleep(600)\n")     # the window's, never done here
    manifest = {"info": [KERNEL], "window": [["slow_kernels", "kernel", []]]}
    _helper_env(tmp_path, monkeypatch, manifest)
    monkeypatch.setenv("PYTHONPATH", f"{PACKAGE.parent}{os.pathsep}{tmp_path}")
    seen = []
    stop = firstuse.watch_compiles(lambda kernel, done, started: seen.append(kernel))
    try:
        assert precompile.start_helper("info")
        deadline = time.monotonic() + 300
        while "cache.order.location_order" not in seen and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "cache.order.location_order" in seen, "the helper compiled nothing"
        time.sleep(2.0)                      # its stamp, if it leaves one, before the window's kernel
        assert precompile._helper[0].poll() is None, "still on the window's kernels"
    finally:
        precompile.stop_helper()
        stop()
    assert not precompile.start_helper("info"), "started again although the command's kernels are all compiled"
    assert precompile.start_helper("window"), "the window's kernels are not"
    precompile.stop_helper()


def test_a_kernel_in_numba_s_cache_is_not_loaded_by_the_helper(tmp_path):
    """The helper only looks in numba's index for a cached kernel: a second process finds it
    there (True), does not load it (no overload), and compiles what the index lacks."""
    script = ("import sys, json, numpy as np\n"
              "from popview import precompile\n"
              "from popview.cache import order\n"
              "entry = json.loads(sys.argv[1])\n"
              "if sys.argv[2] == 'call':\n"
              "    order.location_order(np.array([1, 0], np.int32), np.array([1, 1]))\n"
              "else:\n"
              "    assert precompile.compile_one(*entry)\n"
              "    sig = tuple(precompile.data_to_type(a) for a in entry[2])\n"
              "    print(precompile.in_numba_cache(order.location_order, sig), len(order.location_order.overloads))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), PYTHONPATH=str(PACKAGE.parent))
    runs = []
    for step in ("helper", "call", "helper"):
        out = subprocess.run([sys.executable, "-c", script, json.dumps(KERNEL), step], env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        runs.append(out.stdout.split())
    assert runs[0] == ["True", "1"], "not cached yet: compiled (and saved) by the helper"
    assert runs[2] == ["True", "0"], "cached: found in the index, not loaded"


def test_no_helper_when_switched_off_or_nothing_is_listed(tmp_path, monkeypatch):
    _helper_env(tmp_path, monkeypatch, {"info": [KERNEL]})
    assert not precompile.start_helper("window")          # nothing listed for it
    monkeypatch.setenv("POPVIEW_PRECOMPILE", "0")
    assert not precompile.start_helper("info")
    assert not precompile._helper


def test_recording_lists_each_compile_with_its_argument_types(tmp_path):
    log = tmp_path / "kernels.jsonl"
    script = ("import numpy as np, popview\n"
              "from popview.cache.order import location_order\n"
              "location_order(np.array([1, 0], np.int32), np.array([1, 1]))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), PYTHONPATH=str(PACKAGE.parent),
               POPVIEW_RECORD_KERNELS=str(log))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert entries[0] == KERNEL
    assert np.all([e[0].startswith("popview.") for e in entries])


def test_no_helper_on_a_busy_machine(tmp_path, monkeypatch):
    _helper_env(tmp_path, monkeypatch, {"info": [KERNEL]})
    monkeypatch.setattr(precompile, "_idle_cores", lambda: 0.2)
    assert not precompile.start_helper("info")


def test_a_free_core_is_measured_now_not_by_the_load_average(monkeypatch):
    """A load average of 1.0 left by a minute of past work kept the helper off on an idle
    2-core machine (first `metrics` 19.9 s instead of 11.5 s)."""
    monkeypatch.setattr(precompile.os, "getloadavg", lambda: (float(os.cpu_count() or 1), 0.0, 0.0))
    monkeypatch.setattr(precompile, "_idle_cores", lambda: 1.6)
    assert precompile._a_core_is_free()
    monkeypatch.setattr(precompile, "_idle_cores", lambda: None)       # no /proc/stat: the load average
    assert not precompile._a_core_is_free()


def test_cpu_times_read_busy_and_idle_ticks():
    assert precompile._cpu_times("cpu  100 5 50 1000 20 3 2 1 0 0\n") == (161, 1020)
    assert precompile._cpu_times("intr 1 2 3") is None
    assert precompile._cpu_times("cpu  x") is None
    idle = precompile._idle_cores()
    assert idle is None or 0.0 <= idle <= (os.cpu_count() or 1) + 0.5


def test_the_command_starts_the_helper_at_its_first_compile_only(tmp_path, monkeypatch):
    """A command starts the helper when one of popview's kernels compiles, not when numba loads:
    a command whose kernels are all compiled (here: run again in the same process) starts none.
    Started at numba's load, it started beside every command and was ended before it compiled
    anything."""
    from popview import cli
    from tests.paraver.prvtext import write_trace

    trace = write_trace(tmp_path / "trace")
    started = []
    monkeypatch.setattr(precompile, "start_helper", lambda scenario: started.append(scenario) or False)
    args = ["metrics", str(trace), "--cache-dir", str(tmp_path / "c")]
    assert cli.main(args) == 0
    started.clear()                 # the first run may have compiled (a fresh numba cache)
    assert cli.main(args) == 0
    assert started == [], "a helper beside a command that compiled nothing"
    on = cli.helper_at_first_compile("info")
    on("cache.order.take", "end")
    assert started == []
    on("cache.order.take", "start")
    on("cache.order.location_order", "start")
    assert started == ["info"], "started at the first compile, once"
