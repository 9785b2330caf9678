"""popview.jit: numba's private _nrt option only on the releases it is known for,
a plain njit elsewhere, with the same results; kernels that import numba only
when one runs compiled, and run as Python in interpreted mode."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from popview import jit

REPO = Path(__file__).resolve().parents[1]


def _total(a):
    s = 0
    for i in range(len(a)):
        s += a[i]
    return s


def test_tested_range_and_beyond():
    assert jit.refcount_free_supported((0, 60)) and jit.refcount_free_supported((0, 68))
    assert not jit.refcount_free_supported((0, 69)) and not jit.refcount_free_supported((1, 0))
    assert not jit.refcount_free_supported((0, 59))


def test_the_installed_numba_is_in_the_tested_range():
    """pyproject.toml's bounds on numba and jit.TESTED must agree."""
    assert jit.refcount_free_supported()


def test_fallback_compiles_the_same_kernel(monkeypatch):
    a = np.arange(1000, dtype=np.int64)
    fast = jit.refcount_free(cache=False)(_total)
    assert fast(a) == a.sum()                     # made (compiled) while the option is supported
    monkeypatch.setattr(jit, "refcount_free_supported", lambda release=None: False)
    plain = jit.refcount_free(cache=False)(_total)
    assert fast(a) == plain(a) == a.sum()
    assert plain.targetoptions.get("_nrt", True) is True
    assert fast.targetoptions.get("_nrt") is False


MODES = """
import sys, threading
import numpy as np
from popview import jit

@jit.njit(cache=False, python=lambda a: -1)
def inner(a):
    return 1

@jit.njit(cache=False)
def outer(a):
    return inner(a) + 10

a = np.zeros(3)
seen = []
with jit.interpreted():
    assert jit.is_interpreted()
    assert outer(a) == 9, "the Python copy calls the other kernel's Python version"
    worker = threading.Thread(target=jit.carry(lambda: seen.append((jit.is_interpreted(), outer(a)))))
    worker.start()
    worker.join()
    with jit.interpreted(False):
        assert not jit.is_interpreted()
    assert jit.is_interpreted()
assert seen == [(True, 9)], seen
assert "numba" not in sys.modules and not jit.is_active()
hooks = []
forget = jit.when_active(lambda: hooks.append("forgotten"))
forget()
jit.when_active(lambda: hooks.append("ran"))
assert outer(a) == 11 and jit.is_active() and hooks == ["ran"]
assert type(outer).__name__ == "CPUDispatcher", "the module holds numba's dispatcher"
with jit.interpreted():
    assert outer(a) == 11, "numba loaded: compiled whatever the mode"
    assert jit.as_python(outer)(a) == 9
jit.when_active(lambda: hooks.append("at once"))
assert hooks == ["ran", "at once"]
print("ok")
"""


def test_modes_in_a_fresh_process():
    """Interpreted calls (nested, on a worker thread) import no numba; the first compiled call
    loads it, runs the hooks, and puts dispatchers in the modules."""
    run = subprocess.run([sys.executable, "-c", MODES], capture_output=True, text=True, timeout=300, env=_env())
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def _env() -> dict:
    """The compiled side through numba's dispatchers (popview.aot's module, which would run the
    listed kernels without numba, is compared with them in tests/test_aot.py)."""
    return dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""), POPVIEW_AOT="0")


def test_a_small_otf2_conversion_never_imports_numba(tmp_path):
    """The whole conversion of a small archive in a fresh process: kernels run as Python, numba
    is not imported, and the cache equals the compiled conversion's dataset by dataset."""
    from popview.testing.otf2_writer import write_trace

    written = write_trace(tmp_path / "trace", ranks=2, iterations=40, threads=2)
    script = (
        "import json, sys\n"
        "from popview.readers import otf2\n"
        "from popview.experiment import convert\n"
        "otf2.INTERPRETED_BYTES = int(sys.argv[3])\n"
        "path, _ = convert(sys.argv[1], sys.argv[2], force=True)\n"
        "print(json.dumps([str(path), 'numba' in sys.modules]))\n")
    env = _env()
    out = {}
    for mode, limit in (("interpreted", 1 << 40), ("compiled", 0)):
        run = subprocess.run([sys.executable, "-c", script, str(written.anchor), str(tmp_path / mode), str(limit)],
                             capture_output=True, text=True, env=env, timeout=600)
        assert run.returncode == 0, run.stderr[-2000:]
        out[mode] = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["interpreted"][1] is False, "numba imported by an interpreted conversion"
    assert out["compiled"][1] is True
    assert_same_datasets(Path(out["interpreted"][0]), Path(out["compiled"][0]))


def assert_same_datasets(a: Path, b: Path) -> None:
    import h5py
    import hdf5plugin  # noqa: F401 -- the caches' Zstd filter

    def items(path):
        found = {}
        with h5py.File(path, "r") as f:
            f.visititems(lambda name, obj: found.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
            found["/attrs"] = {k: str(f.attrs[k]) for k in f.attrs}
        return found
    x, y = items(a), items(b)
    assert sorted(x) == sorted(y) and len(x) > 50
    for name, value in x.items():
        if name == "/attrs":
            assert value == y[name]
            continue
        assert value.dtype == y[name].dtype and value.shape == y[name].shape, name
        assert np.array_equal(value, y[name], equal_nan=value.dtype.kind == "f"), name


@pytest.mark.parametrize("size", [0, 1, 2, 3, 7, 8, 4097, 70_001])
def test_numpy_stand_ins_equal_the_kernels(size):
    """The python= versions of the shuffles and of Fletcher32's sums give the kernels' results."""
    from popview.cache import chunks, integrity

    rng = np.random.default_rng(size)
    raw = rng.integers(0, 256, size * 8, dtype=np.uint8)
    for kernel in (chunks._shuffle8, chunks._shuffle4):
        out_c, out_p = np.zeros_like(raw), np.zeros_like(raw)
        kernel(raw, out_c)
        jit.as_python(kernel)(raw, out_p)
        assert np.array_equal(out_c, out_p)
    for data in (raw[:size], raw, np.zeros(size, np.uint8), np.full(size, 255, np.uint8)):
        assert int(jit.as_python(integrity.fletcher32)(data)) == int(integrity.fletcher32(data))


CONVERT_ALL = """
import json, sys, threading
from popview.readers import otf2
from popview.experiment import convert
limit, cache, anchors = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
otf2.INTERPRETED_BYTES = limit
out = {}
def one(i, anchor):
    try:
        out[anchor] = str(convert(anchor, f"{cache}/{i}", force=True)[0])
    except Exception as exc:
        out[anchor] = f"error: {type(exc).__name__}: {exc}"
threads = [threading.Thread(target=one, args=(i, a)) for i, a in enumerate(anchors)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps([out, "numba" in sys.modules]))
"""


def test_the_real_small_archives_convert_the_same_both_ways(shared_traces, tmp_path):
    """Every OTF2 archive of ../shared/traces under the interpreted limit, converted at once in
    threads of one process with the kernels run as Python, gives the compiled conversion's cache
    dataset by dataset (ping-pong with and without PAPI counters, TraceR's 32 and 64 ranks,
    Score-P's hybrid runs: threads, OpenMP workers waiting for their links, metrics); an archive
    that cannot convert fails the same way both ways."""
    from popview.readers import otf2

    small = []
    for anchor in sorted(shared_traces.rglob("*.otf2")):
        if sum(Path(f).stat().st_size for f in otf2.source_files(otf2.anchor(anchor))) <= otf2.INTERPRETED_BYTES:
            small.append(str(anchor))
    assert len(small) >= 5, small
    runs = {}
    for mode, limit in (("interpreted", otf2.INTERPRETED_BYTES), ("compiled", 0)):
        run = subprocess.run([sys.executable, "-c", CONVERT_ALL, str(limit), str(tmp_path / mode), *small],
                             capture_output=True, text=True, env=_env(), timeout=900)
        assert run.returncode == 0, run.stderr[-2000:]
        runs[mode] = json.loads(run.stdout.strip().splitlines()[-1])
    assert runs["interpreted"][1] is False, "numba imported while converting small archives"
    assert runs["compiled"][1] is True
    converted = 0
    for anchor in small:
        a, b = runs["interpreted"][0][anchor], runs["compiled"][0][anchor]
        if a.startswith("error: ") or b.startswith("error: "):    # archer2's archive lacks its event files
            assert a == b, anchor
            continue
        assert_same_datasets(Path(a), Path(b))
        converted += 1
    assert converted >= 5, runs


def test_the_analysis_kernels_release_the_gil():
    """The analysis runs in the window's worker threads (the Advisor's replay, the trees, the cfg
    views): a kernel holding the GIL stalls the window's event loop for as long as it runs (a
    replay's backtrack stalled it 230 ms opening the 1 GB trace)."""
    import importlib
    import pkgutil

    import popview.analysis
    from popview import jit

    holding, seen = [], 0
    for info in pkgutil.walk_packages(popview.analysis.__path__, "popview.analysis."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            # a lazy kernel, or its numba dispatcher once an earlier test ran a kernel compiled
            options = obj.options if isinstance(obj, jit.Kernel) else getattr(obj, "targetoptions", None)
            if options is None or getattr(obj, "py_func", None) is None or obj.py_func.__module__ != info.name:
                continue
            seen += 1
            if not options.get("nogil"):
                holding.append(f"{info.name}.{name}")
    assert seen >= 30, seen
    assert not holding, holding
