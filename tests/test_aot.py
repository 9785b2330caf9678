"""Kernels compiled ahead of time (popview.aot): the module built from a list of kernels, used
without numba for the argument types it holds, numba's dispatcher for the rest, the same
results; a damaged or stale module, a build without a C compiler or without numba's pycc:
everything as before."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import popview
from popview import aot, precompile

REPO = Path(popview.__file__).resolve().parents[1]

KERNELS = '''
import numpy as np
from popview.jit import njit, refcount_free
from aotconst import OFFSET


@refcount_free
def _cell(a, i):
    return a[i] * 3 + OFFSET


@njit(cache=True, nogil=True)
def spin(a, rounds):
    """Seconds of work without the GIL."""
    total = 0
    for _ in range(rounds):
        for i in range(a.size):
            total = total * 6364136223846793005 + _cell(a, i)
    return total


@njit(cache=True)
def spin_holding(a, rounds):
    """The same work, holding the GIL (numba's default)."""
    total = 0
    for _ in range(rounds):
        for i in range(a.size):
            total = total * 6364136223846793005 + _cell(a, i)
    return total


@njit(cache=True, nogil=True)
def stats(a, scale):
    """A tuple back, with arrays allocated inside (numba's reference counting)."""
    out = np.empty(a.size, np.float64)
    for i in range(a.size):
        out[i] = a[i] * scale
    return out, out.sum(), a.size, (a > 2).astype(np.int32)


@refcount_free
def checked(n):
    if n < 0:
        raise ValueError("negative count")
    return n * 2


@njit(cache=True)
def divided(a, b, i):
    """numba's Python error model: ZeroDivisionError; an index out of bounds is not checked."""
    return a[i] // b, a[i] % b, a[i] / b
'''

I64 = ["array", ["scalar", "int64"], 1, "C", False]
LISTED = [["aotkernels", "spin", [I64, ["scalar", "int64"]]],
          ["aotkernels", "spin_holding", [I64, ["scalar", "int64"]]],
          ["aotkernels", "stats", [I64, ["scalar", "float64"]]],
          ["aotkernels", "checked", [["scalar", "int64"]]],
          ["aotkernels", "divided", [I64, ["scalar", "int64"], ["scalar", "int64"]]]]

BUILD = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from popview import aot, precompile
aot.MANIFEST = Path(sys.argv[2])
print(aot.build(target_cpu=sys.argv[3] if len(sys.argv) > 3 else None))
"""

USE = """
import json, sys, threading, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from popview import aot, precompile
aot.MANIFEST = Path(sys.argv[2])
import numpy as np
import aotkernels as k
a = np.arange(5, dtype=np.int64)
out = {}
arr, total, n, big = k.stats(a, 0.5)
out["stats"] = [arr.tolist(), float(total), int(n), big.tolist(), str(big.dtype)]
out["checked"] = k.checked(21)
try:
    k.checked(-1)
except ValueError as exc:
    out["raised"] = str(exc)
out["spin"] = int(k.spin(a, 3))
out["divided"] = [float(x) for x in k.divided(a, -2, 3)]
for b in (0, -0):
    try:
        k.divided(a, b, 1)
    except ZeroDivisionError as exc:
        out.setdefault("zero", []).append(str(exc))


def longest_pause(kernel, data, rounds):
    # the longest the main thread waited for the GIL while `kernel` ran in another thread
    done, stamps = [], [time.perf_counter()]
    thread = threading.Thread(target=lambda: done.append(kernel(data, rounds)))
    thread.start()
    while not done:
        stamps.append(time.perf_counter())
    thread.join()
    return max(np.diff(stamps)), stamps[-1] - stamps[0]


if sys.argv[3] == "gil":
    data = np.arange(2_000_000, dtype=np.int64)
    out["nogil"] = longest_pause(k.spin, data, 100)
    out["holding"] = longest_pause(k.spin_holding, data, 100)
out["numba_before_fallback"] = "numba" in sys.modules
out["status"] = aot.status()
out["int32"] = int(k.spin(a.astype(np.int32), 3))          # not in the module: numba's dispatcher
out["numba"] = "numba" in sys.modules
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def kernels_dir(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("aotkernels")
    (where / "aotkernels.py").write_text(textwrap.dedent(KERNELS))
    (where / "aotconst.py").write_text("OFFSET = 1     # a constant the kernels read: frozen into their code\n")
    (where / "kernels.json").write_text(json.dumps({"scenarios": {"info": LISTED}}))
    return where


def _env(numba_cache: Path, **extra) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(numba_cache), POPVIEW_PRECOMPILE="0",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop(aot.ENV, None)
    return {**env, **extra}


def _run(script: str, *args, env: dict, check=True) -> subprocess.CompletedProcess:
    run = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True,
                         env=env, timeout=900)
    if check:
        assert run.returncode == 0, run.stderr[-3000:]
    return run


def _needs_a_compiler() -> None:
    """Skip where no C compiler builds a module (the fallback is tested without one)."""
    import shutil
    import sysconfig

    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}) to build a module; the fallback without one is tested")


@pytest.fixture(scope="module")
def built(kernels_dir, tmp_path_factory) -> Path:
    """The test kernels' module, built once (numba's cache of its own)."""
    _needs_a_compiler()
    cache = tmp_path_factory.mktemp("numba")
    _run(BUILD, kernels_dir, kernels_dir / "kernels.json", env=_env(cache))
    return cache


def _use(kernels_dir, cache, mode="plain", **extra) -> dict:
    run = _run(USE, kernels_dir, kernels_dir / "kernels.json", mode, env=_env(cache, **extra))
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_the_module_runs_the_listed_kernels_without_numba_and_numba_the_rest(kernels_dir, built):
    out = _use(kernels_dir, built)
    assert out["status"].startswith("used: 5 kernels"), out["status"]
    assert out["numba_before_fallback"] is False            # the listed types: never imported
    assert out["numba"] is True                             # an int32 array: numba's dispatcher
    jit_out = _use(kernels_dir, built, POPVIEW_AOT="0")      # every call through numba
    assert jit_out["status"].startswith("switched off") and jit_out["numba_before_fallback"] is True
    for name in ("stats", "checked", "raised", "spin", "int32", "divided", "zero"):
        assert out[name] == jit_out[name], name
    assert out["stats"][4] == "int32" and out["raised"] == "negative count"
    assert out["divided"] == [-2.0, -1.0, -1.5] and out["zero"] == ["integer division by zero"] * 2


def test_a_nogil_kernel_lets_other_threads_run_and_the_others_keep_the_gil(kernels_dir, built):
    """pycc holds the GIL in every function; the module's keep their kernels' nogil option."""
    out = _use(kernels_dir, built, mode="gil")
    assert out["numba_before_fallback"] is False, out["status"]
    pause, ran = out["nogil"]
    assert ran > 0.2 and pause < 0.5 * ran, out["nogil"]           # the main thread ran meanwhile
    pause, ran = out["holding"]
    assert ran > 0.05 and pause > 0.5 * ran, out["holding"]        # it waited for the whole kernel


def test_each_kernel_is_compiled_with_its_own_options():
    """The build gives pycc's compile each kernel's flags: nogil, numba's reference counting off
    for refcount_free, fastmath..., and its locals."""
    import warnings

    from numba.core import compiler as numba_compiler

    from popview import jit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from numba.pycc import compiler as pycc_compiler

    free = jit.refcount_free(lambda a: a)
    fast = jit.njit(fastmath=True, nogil=True, locals={"x": "int64"})(lambda a: a)
    seen = []

    class Fake:
        @staticmethod
        def compile_extra(typingctx, targetctx, func, args, return_type, flags, locals, library=None,
                          pipeline_class=None):
            seen.append((func, flags, locals))

    # a kernel made once numba is active (an earlier test ran one compiled) is its dispatcher already
    dispatchers = {id(k.py_func): k.materialize() if hasattr(k, "materialize") else k for k in (free, fast)}
    pycc_flags = numba_compiler.Flags()
    pycc_flags.no_compile, pycc_flags.nrt = True, True
    with aot._kernel_flags(Fake, numba_compiler, dispatchers):
        for kernel in (free, fast):
            Fake.compile_extra(None, None, kernel.py_func, (), None, pycc_flags, {})
    (_, f_free, _), (_, f_fast, loc) = seen
    assert f_free.nrt is False and f_free.release_gil is False and f_free.no_compile
    assert f_fast.nrt is True and f_fast.release_gil is True and f_fast.fastmath and f_fast.no_compile
    assert "x" in loc and f_fast.enable_pyobject is False
    assert pycc_compiler.compile_extra is not Fake.compile_extra


def test_argument_types_are_numbas():
    """signature_of() gives what numba's typeof gives, for the kinds the list keeps."""
    from numba import typeof

    a = np.arange(12, dtype=np.int64)
    readonly = a.view()
    readonly.flags.writeable = False
    values = [a, a.astype(np.int32), a.astype(np.uint8), a.astype(np.float64), a > 3, readonly,
              a.reshape(3, 4), a.reshape(3, 4).T, a[::2], np.asfortranarray(a.reshape(3, 4)), a[:0],
              5, -(1 << 63), (1 << 63), 2.5, True, np.int32(3), np.uint64(7), np.float32(1.5), np.bool_(True),
              None, (1, 2, 3), (1, 2.5), (a, a)]
    for value in values:
        expected = precompile.type_to_data(typeof(value))
        assert aot.signature_of([value]) == (aot._frozen(json.loads(json.dumps(expected))),), value
    assert aot.signature_of([1 << 64]) is None and aot.signature_of(["text"]) is None
    swapped = a.astype(">i8")
    assert aot.signature_of([swapped]) is None           # numba types it otherwise: left to numba


def test_no_argument_gets_a_signature_numbas_dispatcher_would_not_give_it(tmp_path):
    """For every kind of argument a caller could pass, signature_of() is None (numba's dispatcher
    decides) or exactly the types the dispatcher compiles a call for: a module's
    function is never chosen for other types than numba would compile for. An IntEnum member
    was typed int64 (numba: its IntEnum type) and a MaskedArray as an array (numba refuses it: the
    module's function ran on its data, the mask ignored); float16, which numba types but does
    not compile on the CPU, was kept."""
    import collections
    import enum

    from numba import njit

    class Level(enum.IntEnum):
        HIGH = 3

    class Count(int):
        pass

    class Ratio(float):
        pass

    pair = collections.namedtuple("pair", "a b")
    a = np.arange(12, dtype=np.int64)
    readonly = a.view()
    readonly.flags.writeable = False
    unaligned = np.zeros(100, np.uint8)[1:65].view(np.int64)
    mapped = np.memmap(tmp_path / "mapped", dtype=np.int64, mode="w+", shape=(4,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        matrix = np.matrix([[1, 2]])
    values = {
        "IntEnum": Level.HIGH, "int subclass": Count(4), "float subclass": Ratio(2.0), "namedtuple": pair(1, 2),
        "empty tuple": (), "nested tuple": ((1, 2), (3, 4)), "mixed nested": ((1, 2), (3.0, 4)),
        "int and np.int64": (1, np.int64(2)), "int32 and int": (np.int32(1), 2), "tuple of arrays": (a, a[::2]),
        "tuple with None": (None, 1), "list": [1, 2], "bytes": b"ab", "str": "s", "complex": 1j,
        "unaligned": unaligned, "memmap": mapped, "matrix": matrix,
        "recarray": np.rec.array([(1, 2.0)], dtype=[("a", "i8"), ("b", "f8")]),
        "masked": np.ma.array([1, 2], mask=[0, 1]), "structured": np.zeros(3, dtype=[("a", "i8")]),
        "subarray field": np.zeros(3, dtype=[("a", "i8", (2,))]), "datetime64": np.zeros(3, "M8[s]"),
        "timedelta64 scalar": np.timedelta64(5, "s"), "datetime64 scalar": np.datetime64(5, "s"),
        "float16": np.zeros(3, np.float16), "float16 scalar": np.float16(1), "longdouble": np.longdouble(1),
        "longdouble array": np.zeros(2, np.longdouble), "complex array": np.zeros(2, complex),
        "metadata dtype": np.zeros(3, np.dtype("i8", metadata={"x": 1})), "0-d": np.array(5),
        "0-d readonly": readonly[:1].reshape(()), "F": np.asfortranarray(a.reshape(3, 4)),
        "A": a.reshape(3, 4)[:, ::2], "1x1": a[:1].reshape(1, 1), "empty 2-d": np.zeros((0, 3)),
        "strided single": a[::5][:1], "bool array": a > 3, "readonly bool": readonly > 3, "readonly": readonly,
        "np.bool_": np.bool_(True), "bool": True, "2**63": 1 << 63, "-2**63": -(1 << 63), "2**64": 1 << 64,
        "2**31": 1 << 31, "intc": np.intc(3), "longlong": np.longlong(3), "uint64": np.uint64(1 << 63),
        "ulonglong array": np.zeros(2, np.ulonglong), "int8": np.int8(1), "float": 2.5, "np.float64": np.float64(2),
        "float32": np.float32(1.5), "byte-swapped": a.astype(">i8"), "byte-swapped float": a.astype(">f8"),
        "objects": np.array([None]), "bytes array": np.zeros(3, "S3"), "unicode array": np.zeros(2, "U2"),
    }
    wrong = {}
    for name, value in values.items():
        @njit
        def probe(x):
            return 0

        try:                                             # what numba's dispatcher compiles for it
            with warnings.catch_warnings():              # a reflected list's deprecation
                warnings.simplefilter("ignore")
                probe(value)
            numba_type = precompile.type_to_data(probe.signatures[0][0])
        except Exception:                                # numba refuses it: so must the module
            numba_type = None
        expected = None if numba_type is None else aot._frozen(json.loads(json.dumps(numba_type)))
        found = aot.signature_of([value])
        if found is not None and found != (expected,):
            wrong[name] = (found, expected)
        elif found is not None:
            assert aot.signature_of([(value, value)]) == (("unituple", expected, 2),), name
    assert not wrong


EDITED = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from popview import aot, precompile
aot.MANIFEST = Path(sys.argv[2])
from numba.pycc import CC


def edit():
    source = Path(sys.argv[1]) / "aotkernels.py"   # a kernel edited while the build compiles the old one
    text = source.read_text()
    if "n * 20" not in text:
        source.write_text(text.replace("return n * 2", "return n * 20"))


def edited_meanwhile(original):
    def run(*args):
        edit()
        return original(*args)
    return run


if sys.argv[3] == "pycc":                 # as pycc compiles the module
    CC.compile = edited_meanwhile(CC.compile)
else:                                     # as numba's dispatchers compile the listed kernels, before
    precompile.data_to_type = edited_meanwhile(precompile.data_to_type)
print(aot.build())
"""


@pytest.mark.parametrize("during", ["pycc", "numba"])
def test_a_kernel_edited_during_the_build_makes_the_module_untrusted(kernels_dir, tmp_path, during):
    """The index keeps the kernels' sources as the build imported them: a file edited during the
    build (a developer's next change, within the build's minute) is not taken for the module's.
    The sources were hashed after numba's dispatchers had compiled the listed kernels (a cold
    numba cache: most of the minute): an edit then was taken for the module's."""
    import shutil

    _needs_a_compiler()
    where, cache = tmp_path / "kernels", tmp_path / "numba"
    shutil.copytree(kernels_dir, where)
    _run(EDITED, where, where / "kernels.json", during, env=_env(cache))
    out = _use(where, cache)
    assert out["status"].startswith("source changed since the build"), out["status"]
    assert out["checked"] == 420


@pytest.mark.parametrize("setting", ["NUMBA_BOUNDSCHECK=1", "NUMBA_DISABLE_JIT=1", "NUMBA_OPT=0"])
def test_numbas_debugging_settings_are_served_by_numba(kernels_dir, built, setting, monkeypatch):
    """A user asking numba to check bounds, run the kernels as Python or optimise otherwise gets
    numba for every kernel (the module was compiled without), and no module is built under it."""
    name, value = setting.split("=")
    if name != "NUMBA_DISABLE_JIT":                      # as Python the test's kernels overflow
        out = _use(kernels_dir, built, **{name: value})
        assert out["status"] == f"switched off ({setting})" and out["numba_before_fallback"] is True
        assert out["checked"] == 42 and out["raised"] == "negative count"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(built))
    monkeypatch.setenv("POPVIEW_PRECOMPILE", "1")
    monkeypatch.setattr(aot, "MANIFEST", kernels_dir / "kernels.json")
    monkeypatch.setenv(name, value)
    assert not aot.enabled() and not aot.wanted()
    aot.reset()
    try:
        assert aot.functions() == {} and aot.status() == f"switched off ({setting})"
    finally:
        aot.reset()


def test_a_damaged_or_stale_module_is_not_used(kernels_dir, built, tmp_path):
    import shutil

    cache = tmp_path / "numba"
    shutil.copytree(built, cache)
    folder = cache / "popview-aot"
    so = next(folder.glob(f"{aot.PREFIX}*"))
    data = bytearray(so.read_bytes())
    data[len(data) // 2] ^= 0xFF
    so.write_bytes(bytes(data))
    out = _use(kernels_dir, cache)
    assert "damaged" in out["status"] and out["numba_before_fallback"] is True
    assert out["spin"] == _use(kernels_dir, built)["spin"]
    so.unlink()                                           # gone
    assert "unreadable" in _use(kernels_dir, cache)["status"]

    shutil.rmtree(cache)
    shutil.copytree(built, cache)
    index = next(folder.glob("popview-aot-*.json"))
    entry = json.loads(index.read_text())
    entry["sources"].append([str(kernels_dir / "aotkernels.py"), "0" * 64])  # a kernel's source changed
    index.write_text(json.dumps(entry))
    out = _use(kernels_dir, cache)
    assert out["status"].startswith("source changed") and out["numba_before_fallback"] is True
    index.write_text("{not json")
    assert out["spin"] == _use(kernels_dir, cache)["spin"]


SWAPPED = """
import json, os, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from popview import aot
aot.MANIFEST = Path(sys.argv[2])
checked = aot._distrust


def check_then_swap(index, where, *rest):
    why = checked(index, where, *rest)
    so = where / index["file"]                 # another file put in its place once its hash is checked
    other = so.with_name("other.tmp")
    other.write_bytes(b"not the module that was checked" * 1000)
    os.replace(other, so)
    return why


aot._distrust = check_then_swap
import numpy as np
import aotkernels as k
print(json.dumps([k.checked(21), aot.status(), "numba" in sys.modules]))
"""


def test_the_module_imported_is_the_file_whose_hash_was_checked(kernels_dir, built, tmp_path):
    """A file renamed over the module's path between its hash check and its import (a build of
    another process, anyone) is not the one imported: the process runs the file it checked."""
    import shutil

    cache = tmp_path / "numba"
    shutil.copytree(built, cache)
    run = _run(SWAPPED, kernels_dir, kernels_dir / "kernels.json", env=_env(cache))
    value, status, numba_loaded = json.loads(run.stdout.strip().splitlines()[-1])
    assert status.startswith("used: 5 kernels"), status
    assert value == 42 and not numba_loaded
    so = next((cache / "popview-aot").glob(f"{aot.PREFIX}*"))
    assert so.read_bytes().startswith(b"not the module")                 # the swap did happen


THREADS = """
import json, sys, threading
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from popview import aot
aot.MANIFEST = Path(sys.argv[2])
import numpy as np
import aotkernels as k
loads, load = [], aot._load


def counted():
    loads.append(threading.get_ident())
    return load()


aot._load = counted
start, results = threading.Barrier(8), {}


def first_call(i):
    start.wait()
    results[i] = k.checked(i)


threads = [threading.Thread(target=first_call, args=(i,)) for i in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps([len(loads), [results[i] for i in range(8)], aot.status(), "numba" in sys.modules]))
"""


def test_threads_calling_kernels_at_once_load_the_module_once(kernels_dir, built):
    """The first lookup of the module by several threads at once: loaded once, every call right,
    numba not loaded."""
    run = _run(THREADS, kernels_dir, kernels_dir / "kernels.json", env=_env(built))
    loads, results, status, numba_loaded = json.loads(run.stdout.strip().splitlines()[-1])
    assert loads == 1 and results == [2 * i for i in range(8)] and not numba_loaded, status
    assert status.startswith("used: 5 kernels")


NAMESAKES = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from popview import aot
from popview.jit import njit
aot.MANIFEST = Path(sys.argv[2])
import aotkernels as k


def make():
    def checked(n):                             # the listed kernel's module and name, other code
        return n + 1000
    checked.__module__ = "aotkernels"
    return njit(cache=False)(checked)


def checked(n):
    return n + 2000


checked.__module__ = "aotkernels"
namesake = make() if sys.argv[3] == "nested" else njit(cache=False)(checked)
print(json.dumps([namesake(21), k.checked(21), aot.status()]))     # the first call of this process
"""


@pytest.mark.parametrize("case", ["nested", "module-level"])
def test_a_kernel_named_as_a_listed_one_is_not_given_its_function(kernels_dir, built, case):
    """The module's functions stand for the module-level kernels the build compiled: a kernel
    made in a function, or another function given the listed one's module and name, runs its own
    code (it ran the listed kernel's: 42 for 1021)."""
    run = _run(NAMESAKES, kernels_dir, kernels_dir / "kernels.json", case, env=_env(built))
    namesake, listed, status = json.loads(run.stdout.strip().splitlines()[-1])
    assert namesake == (1021 if case == "nested" else 2021) and listed == 42, status


BACKGROUND = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from popview import aot, precompile
aot.MANIFEST = Path(sys.argv[2])
if sys.argv[3] == "no pycc":
    sys.modules["numba.pycc"] = None          # a numba release without it
print(aot.build_in_background(wait_for_a_free_core=False), aot.wanted())
"""


@pytest.mark.parametrize("case", ["no compiler", "no pycc"])
def test_without_a_c_compiler_or_pycc_everything_runs_through_numba(kernels_dir, tmp_path, case):
    cache = tmp_path / "numba"
    extra = {"CC": str(tmp_path / "no-such-cc"), "LDSHARED": str(tmp_path / "no-such-cc")} \
        if case == "no compiler" else {}
    env = _env(cache, **extra)
    env["POPVIEW_PRECOMPILE"] = "1"                      # wanted() reads it
    run = _run(BACKGROUND, kernels_dir, kernels_dir / "kernels.json", case, env=env)
    assert run.stdout.split() == ["1", "False"], run.stdout + run.stderr[-2000:]    # failed, not tried again
    notes = list((cache / "popview-aot").glob("*.failed"))
    assert len(notes) == 1 and notes[0].read_text().strip()
    assert not list((cache / "popview-aot").glob(f"{aot.PREFIX}*"))       # nothing half-written
    out = _use(kernels_dir, cache)
    assert out["status"].startswith("not built: ") and out["numba_before_fallback"] is True
    assert out["checked"] == 42 and out["raised"] == "negative count"
    if case == "no compiler":                           # a compiler installed since: a build by hand
        _run(BUILD, kernels_dir, kernels_dir / "kernels.json", env=_env(cache))
        assert not list((cache / "popview-aot").glob("*.failed"))
        assert _use(kernels_dir, cache)["status"].startswith("used: 5 kernels")


CONVERT = """
import json, sys
from popview import aot
from popview.experiment import convert
from popview.readers import otf2
otf2.INTERPRETED_BYTES = 0                # an OTF2 archive compiled, as bigger ones are
out = [str(convert(anchor, f"{sys.argv[1]}/{i}", force=True)[0]) for i, anchor in enumerate(sys.argv[2:])]
print(json.dumps([out, "numba" in sys.modules, aot.status()]))
"""


def _popview_module_built() -> None:
    """popview's own module for this tree, in the folder beside numba's cache the tests use (built
    once: 30-60 s; again when a kernel's source changes)."""
    if not aot.is_built():
        _needs_a_compiler()
    if not aot.is_built():
        run = subprocess.run([sys.executable, "-m", "popview.aot", "build"], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=1800)
        assert run.returncode == 0, run.stderr[-3000:]
    assert aot.is_built()


def _convert_both_ways(tmp_path: Path, *traces: Path) -> None:
    from tests.cachecompare import differences

    _popview_module_built()
    out = {}
    for mode in ("ahead", "numba"):
        env = dict(os.environ, PYTHONPATH=str(REPO), POPVIEW_PRECOMPILE="0")
        if mode == "numba":
            env[aot.ENV] = "0"
        run = _run(CONVERT, tmp_path / mode, *traces, env=env)
        out[mode] = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["ahead"][2].startswith("used: ") and out["ahead"][1] is False, out["ahead"]
    assert out["numba"][1] is True
    for a, b in zip(out["ahead"][0], out["numba"][0]):
        assert not differences(Path(a), Path(b)), a


def test_a_paraver_conversion_through_the_module_gives_numbas_cache(tmp_path):
    from popview.testing.synthetic import Shape, write

    trace = tmp_path / "small.prv"
    write(trace, Shape(processes=4, threads=2, iterations=30))
    _convert_both_ways(tmp_path, trace)


@pytest.mark.shared
def test_a_real_trace_converts_the_same_through_the_module(shared_traces, tmp_path):
    trace = shared_traces / "pypop" / "mpi" / "epoch_example_traces" / "epoch_16proc.prv.gz"
    if not trace.exists():
        pytest.skip(f"{trace} absent")
    _convert_both_ways(tmp_path, trace)


def test_an_otf2_conversion_through_the_module_gives_numbas_cache(tmp_path):
    from popview.testing.otf2_writer import write_trace

    written = write_trace(tmp_path / "trace", ranks=3, iterations=60, threads=2)
    _convert_both_ways(tmp_path, written.anchor)


@pytest.mark.shared
def test_real_otf2_archives_convert_the_same_through_the_module(shared_traces, tmp_path):
    """Score-P's hybrid run (threads, OpenMP), TraceR's 64-rank stencil, the mi300 metric run."""
    found = [shared_traces / p for p in ("popview-heat/scorep/hyb_2x2/traces.otf2",
                                         "tracer-stencil4d/traces-64/traces.otf2",
                                         "fastotf2/simple-mi300-example-run/traces.otf2")]
    found = [p for p in found if p.exists()]
    if not found:
        pytest.skip("no real OTF2 archive")
    _convert_both_ways(tmp_path, *found)


def test_a_command_that_loaded_numba_starts_one_detached_build(kernels_dir, tmp_path, monkeypatch):
    """precompile.build_ahead() at a command's end: nothing while numba is not loaded (every kernel
    ran from the module, or none ran); else one build process of its own session, once."""
    from popview import jit

    started = []

    class Popen:
        def __init__(self, cmd, **kwargs):
            started.append((cmd, kwargs))

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setenv("POPVIEW_PRECOMPILE", "1")
    monkeypatch.delenv(aot.ENV, raising=False)
    monkeypatch.setattr(aot, "MANIFEST", kernels_dir / "kernels.json")
    monkeypatch.setattr(aot, "_started", [])
    monkeypatch.setattr(subprocess, "Popen", Popen)
    monkeypatch.setattr(jit, "_active", False)
    precompile.build_ahead()
    assert started == []
    monkeypatch.setattr(jit, "_active", True)
    precompile.build_ahead()
    precompile.build_ahead()
    assert len(started) == 1
    cmd, kwargs = started[0]
    assert cmd[:2] == [sys.executable, "-c"] and "build_in_background" in cmd[2]
    assert kwargs["start_new_session"] and kwargs["stdin"] == subprocess.DEVNULL
    monkeypatch.setattr(aot, "_started", [])
    import fcntl

    with open(tmp_path / "numba" / "popview-aot" / "build.lock", "a") as lock:     # a build runs
        fcntl.flock(lock, fcntl.LOCK_EX)
        precompile.build_ahead()
    assert len(started) == 1
    monkeypatch.setenv(aot.ENV, "0")                     # switched off: no build
    precompile.build_ahead()
    assert len(started) == 1


BACKGROUND_OK = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from popview import aot, precompile
aot.MANIFEST = Path(sys.argv[2])
t = time.perf_counter()
code = aot.build_in_background(wait_for_a_free_core=False)
print(code, aot.is_built(), aot.wanted(), round(time.perf_counter() - t, 2))
"""


def test_the_background_build_runs_alone_and_once(kernels_dir, tmp_path):
    import fcntl

    cache = tmp_path / "numba"
    (cache / "popview-aot").mkdir(parents=True)
    env = {**_env(cache), "POPVIEW_PRECOMPILE": "1"}
    with open(cache / "popview-aot" / "build.lock", "w") as lock:       # another process builds
        fcntl.flock(lock, fcntl.LOCK_EX)
        out = _run(BACKGROUND_OK, kernels_dir, kernels_dir / "kernels.json", env=env).stdout.split()
        assert out[:3] == ["0", "False", "True"]
    out = _run(BACKGROUND_OK, kernels_dir, kernels_dir / "kernels.json", env=env).stdout.split()
    assert out[:3] == ["0", "True", "False"]
    assert not list((cache / "popview-aot").glob(".build-*"))
    out = _run(BACKGROUND_OK, kernels_dir, kernels_dir / "kernels.json", env=env).stdout.split()
    assert out[:3] == ["0", "True", "False"]                              # built: nothing to do


BY_HAND = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from popview import aot
aot.MANIFEST = Path(sys.argv[2])
raise SystemExit(aot.main(["build"]))
"""


def test_a_build_by_hand_waits_for_the_background_one(kernels_dir, tmp_path):
    """`python -m popview.aot build` while a background build holds the folder's lock waits for
    it (two builds at once each removed the other's module: the index of one named the file the
    other had removed), then finds the module built."""
    import fcntl
    import time

    _needs_a_compiler()
    if not Path("/proc/locks").exists():
        pytest.skip("no /proc/locks to see a process wait for a lock")
    cache = tmp_path / "numba"
    (cache / "popview-aot").mkdir(parents=True)
    with open(cache / "popview-aot" / "build.lock", "w") as lock:       # a background build
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.Popen([sys.executable, "-c", BY_HAND, str(kernels_dir), str(kernels_dir / "kernels.json")],
                                env=_env(cache), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline, waiting = time.monotonic() + 60, False
            while not waiting and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)                           # a waiter on a lock: "N: -> FLOCK ... PID ..."
                waiting = any("->" in line and f" {proc.pid} " in line
                              for line in Path("/proc/locks").read_text().splitlines())
            assert waiting, "the build by hand did not wait for the lock"
            assert not list((cache / "popview-aot").glob("*.json"))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err[-2000:]
    assert out.strip().endswith(".json") and Path(out.strip()).exists()
    again = _run(BY_HAND, kernels_dir, kernels_dir / "kernels.json", env=_env(cache)).stdout.strip()
    assert again == out.strip() and len(list((cache / "popview-aot").glob(f"{aot.PREFIX}*"))) == 1


def test_the_background_build_waits_for_a_free_core(kernels_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setenv("POPVIEW_PRECOMPILE", "1")
    monkeypatch.delenv(aot.ENV, raising=False)
    monkeypatch.setattr(aot, "MANIFEST", kernels_dir / "kernels.json")
    monkeypatch.setattr(precompile, "_a_core_is_free", lambda: False)
    monkeypatch.setattr(os, "nice", lambda n: 0)
    assert aot.build_in_background() == 2
    assert not (tmp_path / "numba" / "popview-aot").exists() or not list((tmp_path / "numba" / "popview-aot").iterdir())
    assert aot.wanted()                                  # no note: a later command tries again


def test_a_new_build_removes_this_copys_older_modules_for_this_cpu_only(tmp_path):
    def index(k, package, cpu):
        so = tmp_path / f"{aot.PREFIX}{k[:12]}_0000.so"
        so.write_bytes(b"x")
        (tmp_path / f"popview-aot-{k}.json").write_text(json.dumps({"package": package, "cpu": cpu, "file": so.name}))
        return so

    mine = index("a" * 24, aot._package(), aot._cpu_digest())
    older = index("b" * 24, aot._package(), aot._cpu_digest())
    other_cpu = index("c" * 24, aot._package(), "another node's")
    other_copy = index("d" * 24, "/elsewhere/popview", aot._cpu_digest())
    stale_same_key = tmp_path / f"{aot.PREFIX}{'a' * 12}_1111.so"
    stale_same_key.write_bytes(b"x")
    aot._remove_replaced(tmp_path, "a" * 24, mine.name)
    assert mine.exists() and other_cpu.exists() and other_copy.exists()
    assert not older.exists() and not (tmp_path / f"popview-aot-{'b' * 24}.json").exists()
    assert not stale_same_key.exists()


def _without_numbas_cache_of_the_kernels(cache: Path) -> None:
    """numba's own cache of the test kernels removed: it knows a source by its modification time
    and size, and does not watch the modules a kernel reads constants from (numba's documented
    limit), so after the edits below it would serve the old code too; without it numba compiles
    what the files now say."""
    doomed = [f for f in cache.rglob("aotkernels.*") if f.suffix in (".nbi", ".nbc")]
    assert doomed
    for f in doomed:
        f.unlink()


@pytest.mark.parametrize("edit", ["same size and time", "a constant's module"])
def test_an_edited_kernel_source_does_not_load_the_old_module(kernels_dir, built, tmp_path, edit):
    """The index knew the kernels' files by modification time and size only, and only the files
    holding a kernel: a kernel edited to the same size with its time kept (cp -p, rsync -t, tar,
    two edits within the file system's clock tick), or a constant changed in the module the
    kernels import it from, left the old compiled module in use -- the old code's results,
    silently. The index now keeps each source's content (SHA-256), the constants' modules too."""
    import shutil

    cache = tmp_path / "numba"
    shutil.copytree(built, cache)
    before = _use(kernels_dir, cache)
    assert before["status"].startswith("used: 5 kernels")
    name = "aotkernels.py" if edit == "same size and time" else "aotconst.py"
    source = kernels_dir / name
    text, st = source.read_bytes(), source.stat()
    edited = text.replace(b'"negative count"', b'"negative COUNT"') if edit == "same size and time" \
        else text.replace(b"OFFSET = 1", b"OFFSET = 7")
    assert edited != text and len(edited) == len(text)
    try:
        source.write_bytes(edited)
        if edit == "same size and time":
            os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
            assert source.stat().st_mtime_ns == st.st_mtime_ns and source.stat().st_size == st.st_size
        _without_numbas_cache_of_the_kernels(cache)
        out = _use(kernels_dir, cache)
        assert out["status"] == f"source changed since the build: {source}", out["status"]
        assert out["numba_before_fallback"] is True                 # the module not used: numba
        if edit == "same size and time":
            assert (before["raised"], out["raised"]) == ("negative count", "negative COUNT")
        else:
            assert out["spin"] != before["spin"]                     # what OFFSET = 7 computes
            jit_out = _use(kernels_dir, cache, POPVIEW_AOT="0")
            assert out["spin"] == jit_out["spin"]
    finally:
        source.write_bytes(text)
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
