"""Kernels compiled ahead of time: a conversion that never imports numba.

numba's fixed cost is about 0.45 s of every command that runs a kernel
compiled: importing it (0.2 s), starting its CPU target at the first kernel
(0.13 s), then 3-12 ms to load each cached kernel, all holding the GIL while
the parse threads wait. popview.precompile's first-run helper also builds,
once per machine, an extension module of the kernels listed in
resources/kernels.json (numba's `pycc`, a C compiler): its own file in numba's
cache folder, keyed by the versions of popview, numba, numpy and Python, the
host CPU and the list. `popview.jit` calls its functions at a kernel's compiled
calls while numba is not loaded, for the argument types the module was built
for (dtype, dimensions, layout, writeable; `signature_of`), and numba's
dispatcher for anything else. Loading the module takes about a millisecond.

Each function is compiled with its kernel's own options (`nogil` releases the
GIL, `_nrt=False` of refcount_free, fastmath, error model...), the kernels it
calls with theirs, for the host CPU and its features. The module's index (JSON,
written last, by rename) names its file and that file's SHA-256, and the
SHA-256 of the content of every source its code comes from: the files holding
a kernel and the modules they import names from (their constants are frozen
into the compiled code). A module whose hash or any of whose sources differ is
not used (the next build replaces it): a same-size edit whose modification
time was kept (cp -p, rsync -t, tar, an edit within the file system's clock
tick), or a constant changed in a module without kernels, is seen. Where the
build cannot run (no C compiler, a numba release without pycc, a compile
error) it leaves a note of why in the folder and is not tried again for that
key: everything runs through numba as before.

POPVIEW_AOT=0, or numba's debugging settings (NUMBA_SETTINGS): neither built nor used.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import warnings
from pathlib import Path

ENV = "POPVIEW_AOT"
MANIFEST = Path(__file__).with_name("resources") / "kernels.json"     # the kernels built (precompile's list)
FORMAT = 2                   # of the index; a change keys a new module (2: the sources by content)
PREFIX = "popview_aot_"

_lock = threading.Lock()
_table: dict | None = None   # (module, function) -> {argument types: compiled function}; {} when none


NUMBA_SETTINGS = ("NUMBA_DISABLE_JIT", "NUMBA_BOUNDSCHECK", "NUMBA_OPT", "NUMBA_DEBUGINFO")
"""numba's settings that change what a kernel's call does (run as Python, check bounds, another
optimisation level, debugging): where one is set numba serves every kernel, and nothing is built
(a module built under one would serve every later process)."""


def enabled() -> bool:
    return os.environ.get(ENV) != "0" and not any(os.environ.get(name) for name in NUMBA_SETTINGS)


def folder() -> Path | None:
    """Where the module and its index live: beside numba's cache (popview/__init__ sets it)."""
    cache = os.environ.get("NUMBA_CACHE_DIR")
    return Path(cache) / "popview-aot" if cache else None


# ---------------------------------------------------------------- the key

def host_cpu() -> str:
    """The CPU model and its feature flags (code built for them may not run on another)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 16)
    except OSError:
        import platform

        return f"{platform.machine()} {platform.processor()}"
    wanted, found = ("vendor_id", "model name", "flags", "Features", "CPU part", "isa"), {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        name = name.strip()
        if name in wanted and name not in found:
            found[name] = value.strip()
        if not line.strip() and found:        # the first processor only
            break
    return json.dumps(found, sort_keys=True)


def key(manifest_path: Path | None = None) -> str:
    """What the module is built for: this copy of popview, numba, numpy, Python, the host CPU, the
    kernels' list."""
    from popview._version import __version__

    manifest_path = manifest_path or MANIFEST
    h = hashlib.sha256(f"{FORMAT} {__version__} {sys.version} {sys.implementation.cache_tag}".encode())
    h.update(str(Path(__file__).resolve().parent).encode())        # this copy of popview (its sources)
    h.update(f"{installed('numba')} {installed('numpy')} {installed('llvmlite')}".encode())
    h.update(host_cpu().encode())
    try:
        h.update(Path(manifest_path).read_bytes())
    except OSError:
        h.update(b"no manifest")
    return h.hexdigest()[:24]


def installed(package: str) -> str:
    """An installed package, told by its files and its version (the name of its metadata folder
    beside it, `numba-0.60.0.dist-info`: importlib.metadata takes a tenth of a second)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    try:
        st = os.stat(spec.origin)
    except (AttributeError, TypeError, OSError):
        return "?"
    site = Path(spec.origin).parent.parent
    try:
        versions = sorted(name for name in os.listdir(site)
                          if name.startswith(f"{package}-") and name.endswith((".dist-info", ".egg-info")))
    except OSError:
        versions = []
    return f"{spec.origin} {st.st_mtime_ns} {st.st_size} {' '.join(versions)}"


def index_path(k: str) -> Path | None:
    where = folder()
    return None if where is None else where / f"popview-aot-{k}.json"


def failure_path(k: str) -> Path | None:
    where = folder()
    return None if where is None else where / f"popview-aot-{k}.failed"


# ---------------------------------------------------------------- argument types without numba

def signature_of(args) -> tuple | None:
    """The argument types numba's dispatcher would give `args`, as type_to_data() writes them
    (tuples, not lists), or None for a kind the module never holds. About 1 µs an array."""
    out = []
    for value in args:
        found = _type_of(value)
        if found is None:
            return None
        out.append(found)
    return tuple(out)


_C, _F, _ALIGNED, _WRITEABLE = 0x1, 0x2, 0x100, 0x400     # numpy's NPY_ARRAY_* flag bits (flags.num)
_dtype_types: dict = {}                                   # dtype -> ("scalar", name), or None when not kept
_np: list = []


def _numpy():
    if not _np:
        import numpy

        _np.append(numpy)
    return _np[0]


_KEPT = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
         "float64"}                                       # numba's names of numpy's (native) kinds kept


def _dtype_type(dtype):
    try:
        return _dtype_types[dtype]
    except KeyError:
        found = ("scalar", dtype.name) if dtype.kind in "biuf" and dtype.isnative and dtype.name in _KEPT \
            and dtype.fields is None and dtype.subdtype is None else None
        _dtype_types[dtype] = found
        return found


def _type_of(value):
    """Exact types only: numba types a subclass otherwise (an IntEnum member is its own type, a
    MaskedArray is refused) or not at all."""
    np = _numpy()
    kind = type(value)
    if kind is np.ndarray or kind is np.memmap:          # numba types a memmap as an ndarray
        inner = _dtype_type(value.dtype)
        bits = value.flags.num
        if inner is None or not bits & _ALIGNED:
            return None
        layout = "C" if bits & _C else "F" if bits & _F else "A"
        return ("array", inner, value.ndim, layout, not bits & _WRITEABLE)
    if kind is bool or kind is np.bool_:
        return ("scalar", "bool")
    if kind is int:
        if -(1 << 63) <= value < (1 << 63):
            return ("scalar", "int64")
        return ("scalar", "uint64") if 0 <= value < (1 << 64) else None
    if kind is float:
        return ("scalar", "float64")
    if isinstance(value, (np.integer, np.floating)):     # numba types these by their dtype
        return _dtype_type(value.dtype)
    if value is None:
        return ("scalar", "none")
    if kind is tuple:
        inner = signature_of(value)
        if inner is None:
            return None
        if inner and all(t == inner[0] for t in inner):
            return ("unituple", inner[0], len(inner))
        return ("tuple", inner)
    return None


def _frozen(data):
    """JSON's lists as tuples: type_to_data()'s output comparable with signature_of()'s."""
    if isinstance(data, list):
        return tuple(_frozen(x) for x in data)
    return data


# ---------------------------------------------------------------- loading

def functions() -> dict:
    """{(module, function name): {argument types: compiled function}} of the module built for
    this key, loaded once a process; {} when there is none, it is switched off, or it fails
    (`status()` says why)."""
    global _table
    if _table is None:
        with _lock:
            if _table is None:
                _table = _load()
    return _table


def reset() -> None:
    """Forget the loaded table (tests)."""
    global _table
    with _lock:
        _table = None


_why = ["not looked for yet"]


def status() -> str:
    """Why this process uses the module or not ("used: N kernels", or the reason)."""
    return _why[0]


def _load() -> dict:
    try:
        if not enabled():
            why = [f"{name}={os.environ[name]}" for name in NUMBA_SETTINGS if os.environ.get(name)]
            return _note({}, f"switched off ({', '.join(why) or ENV + '=0'})")
        path = index_path(key())
        if path is None:
            return _note({}, "no cache folder")
        try:
            index = json.loads(path.read_text())
        except FileNotFoundError:
            failed = failure_path(key())
            return _note({}, f"not built: {failed.read_text().strip()}" if failed.exists() else "not built")
        except (OSError, ValueError) as exc:
            return _note({}, f"unreadable index {path}: {exc}")
        so = path.parent / str(index.get("file", ""))
        try:
            fd = os.open(so, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            return _note({}, f"module unreadable: {exc}")
        try:
            why = _distrust(index, path.parent, fd)
            if why:
                return _note({}, why)
            module = _import_from(index["module"], so, fd)
        finally:
            os.close(fd)
        table: dict = {}
        for mod, name, args, symbol in index["kernels"]:
            table.setdefault((mod, name), {})[_frozen(args)] = getattr(module, symbol)
        return _note(table, f"used: {len(index['kernels'])} kernels from {so}")
    except Exception as exc:            # a damaged index or module: numba as before
        return _note({}, f"not loaded: {type(exc).__name__}: {exc}")


def _note(table: dict, why: str) -> dict:
    _why[0] = why
    return table


def _distrust(index: dict, where: Path, fd: int | None = None) -> str:
    """Why the index cannot be trusted ("" when it can): another format, its module file not
    whole (SHA-256; of the file open as `fd` when given), a source of its code changed since
    (its content: _sources)."""
    if index.get("format") != FORMAT or not str(index.get("file", "")).startswith(PREFIX):
        return "an index of another format"
    for source, digest in index.get("sources", []):
        try:
            found = _content_digest(source)
        except OSError:
            return f"source gone: {source}"
        if found != digest:
            return f"source changed since the build: {source}"
    try:
        if fd is None:
            data = (where / index["file"]).read_bytes()
        else:
            with os.fdopen(os.dup(fd), "rb") as f:
                f.seek(0)
                data = f.read()
    except OSError as exc:
        return f"module unreadable: {exc}"
    if hashlib.sha256(data).hexdigest() != index.get("sha256"):
        return f"module damaged (its SHA-256 is not the index's): {where / index['file']}"
    return ""


def _import_from(name: str, so: Path, fd: int):
    """The extension module of the file open as `fd`, the one whose hash was checked: loaded through
    /proc/self/fd (its path may name another file by now: a build's rename, or anyone's), or by
    its path where there is no /proc."""
    import importlib.machinery
    import importlib.util

    by_fd = f"/proc/self/fd/{fd}"
    origin = by_fd if os.path.exists(by_fd) else str(so)
    loader = importlib.machinery.ExtensionFileLoader(name, origin)
    spec = importlib.util.spec_from_file_location(name, origin, loader=loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        module.__file__ = str(so)
    except (AttributeError, TypeError):
        pass
    return module


def is_built(k: str | None = None) -> bool:
    """Whether a trusted module exists for this key (sources unchanged)."""
    path = index_path(k or key())
    if path is None:
        return False
    try:
        return not _distrust(json.loads(path.read_text()), path.parent)
    except (OSError, ValueError, TypeError, AttributeError):
        return False


# ---------------------------------------------------------------- building

def entries(manifest: dict) -> list:
    """The distinct [module, function, argument types] of every scenario, in order."""
    out, seen = [], set()
    for kernels in manifest.values():
        for entry in kernels:
            text = json.dumps(entry)
            if text not in seen:
                seen.add(text)
                out.append(entry)
    return out


def build(where: Path | None = None, manifest_path: Path | None = None, target_cpu: str | None = None) -> Path:
    """Compile the listed kernels into a new module in `where` (default: folder()) and write its
    index last; returns the index's path. Imports numba; raises when the module cannot be built."""
    import importlib
    import shutil
    import tempfile

    from popview import jit, precompile

    manifest_path = Path(manifest_path or MANIFEST)
    k = key(manifest_path)
    where = Path(where or folder())
    where.mkdir(parents=True, exist_ok=True)
    listed = entries(json.loads(manifest_path.read_text())["scenarios"])

    jit.activate()                               # the modules hold numba's dispatchers from here
    from numba.core import compiler as numba_compiler
    from numba.core import typing

    with warnings.catch_warnings():              # "pending deprecation" since numba 0.57: see docs/cache.md
        warnings.simplefilter("ignore")
        from numba.pycc import CC                # ImportError where a numba release has none
        from numba.pycc import compiler as pycc_compiler

    modules = {}
    for mod in dict.fromkeys(entry[0] for entry in listed):
        try:
            modules[mod] = importlib.import_module(mod)
        except Exception:
            continue
    sources = _sources()     # as imported, before the compiles: a file edited during the build is seen
    exports, kernels, dispatchers = {}, [], {}
    for mod, name, args in listed:
        try:
            dispatcher = getattr(modules[mod], name)
            sig = tuple(precompile.data_to_type(a) for a in args)
            dispatcher.compile(sig)              # from numba's cache mostly; a stale entry fails here
        except Exception:
            continue
        symbol = f"k{len(kernels)}"
        exports[symbol] = pycc_compiler.ExportEntry(symbol, typing.signature(None, *sig), dispatcher.py_func)
        dispatchers[id(dispatcher.py_func)] = dispatcher
        kernels.append([mod, name, args, symbol])
    if not kernels:
        raise RuntimeError("no listed kernel compiles")

    module_name = f"{PREFIX}{k[:12]}_{os.urandom(4).hex()}"
    scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=where))
    try:
        cc = CC(module_name, source_module="popview")
        cc.output_dir = str(scratch)
        cc._exported_functions.update(exports)   # export()'s decorator wants the return type up front
        with _kernel_flags(pycc_compiler, numba_compiler, dispatchers), _host_target(cc, target_cpu):
            cc.compile()
        built = scratch / cc.output_file
        digest = hashlib.sha256(built.read_bytes()).hexdigest()
        final = where / cc.output_file
        os.replace(built, final)
        index = {"format": FORMAT, "key": k, "package": _package(), "cpu": _cpu_digest(), "module": module_name, "file": final.name, "sha256": digest,
                 "sources": sources, "kernels": kernels}
        path = index_path(k) if where == folder() else where / f"popview-aot-{k}.json"
        tmp = scratch / "index.json"
        tmp.write_text(json.dumps(index))
        os.replace(tmp, path)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    _remove_replaced(where, k, final.name)
    failed = where / f"popview-aot-{k}.failed"
    if failed.exists():                          # a build that failed before (no compiler then)
        failed.unlink()
    return path


class _kernel_flags:
    """During a pycc build: each exported kernel compiled with its dispatcher's own flags and
    locals (pycc gives all the same flags: the GIL held, numba's reference counting on)."""

    def __init__(self, pycc_compiler, numba_compiler, dispatchers: dict):
        self.pycc, self.numba, self.dispatchers = pycc_compiler, numba_compiler, dispatchers

    def __enter__(self):
        original = self.original = self.pycc.compile_extra
        numba_compiler, dispatchers = self.numba, self.dispatchers

        def compile_extra(typingctx, targetctx, func, args, return_type, flags, locals, library=None,
                          pipeline_class=numba_compiler.Compiler):
            dispatcher = dispatchers[id(func)]
            own = numba_compiler.Flags()
            dispatcher.targetdescr.options.parse_as_flags(own, dispatcher.targetoptions)
            own.no_compile = flags.no_compile
            own.no_cpython_wrapper, own.no_cfunc_wrapper = flags.no_cpython_wrapper, flags.no_cfunc_wrapper
            pipeline = getattr(getattr(dispatcher, "_compiler", None), "pipeline_class", pipeline_class)
            return original(typingctx, targetctx, func, args, return_type, own, locals=dict(dispatcher.locals),
                            library=library, pipeline_class=pipeline)

        self.pycc.compile_extra = compile_extra
        return self

    def __exit__(self, *exc):
        self.pycc.compile_extra = self.original


class _host_target:
    """The code built for this CPU and its features, as numba's JIT does (pycc's default is the
    architecture's generic model, several times slower on some kernels)."""

    def __init__(self, cc, target_cpu: str | None):
        self.cc, self.target_cpu = cc, target_cpu

    def __enter__(self):
        import llvmlite.binding as ll
        from numba.core.codegen import AOTCPUCodegen

        self.codegen = AOTCPUCodegen
        self.original = AOTCPUCodegen.__dict__.get("_customize_tm_features")
        if self.target_cpu is None:
            features = ll.get_host_cpu_features().flatten()
            AOTCPUCodegen._customize_tm_features = lambda self: features
            self.cc.target_cpu = ll.get_host_cpu_name()
        else:
            self.cc.target_cpu = self.target_cpu
        return self

    def __exit__(self, *exc):
        if self.original is not None:
            self.codegen._customize_tm_features = self.original


def _sources() -> list:
    """[path, SHA-256 of its content] of every source the module's code comes from: the files
    holding a kernel (lazy kernels made so far: popview's, and a list's own modules) and the
    modules they import names from, popview's or beside them (a constant a kernel reads from
    a module without kernels, such as model/states.py's FORK_JOIN in the OTF2 kernel, is
    frozen into its code). Other packages are keyed by their versions (key)."""
    from popview import jit

    files = set()
    for lazy in list(jit._lazy):
        code = getattr(lazy.py_func, "__code__", None)
        if code is not None and os.path.exists(code.co_filename):
            files.add(os.path.abspath(code.co_filename))
    for kernel_file in sorted(files):
        files |= _imported_files(kernel_file)
    return [[source, _content_digest(source)] for source in sorted(files)]


def _imported_files(path: str) -> set[str]:
    """The files of the modules `path` imports (import, from ... import), when they are
    popview's or lie in its folder: modules loaded already (sys.modules), nothing imported."""
    import ast

    try:
        tree = ast.parse(Path(path).read_bytes(), path)
    except (OSError, SyntaxError, ValueError):
        return set()
    here = os.path.dirname(path)
    package = _module_of(path)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level and package is not None:
                parent = package.rsplit(".", node.level)[0] if package.count(".") >= node.level else ""
                base = f"{parent}.{base}".strip(".")
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}     # from package import module
    mine = _package()
    out = set()
    for name in names:
        file = getattr(sys.modules.get(name), "__file__", None)
        if file and file.endswith(".py"):
            file = os.path.abspath(file)
            if file != os.path.abspath(path) and (file.startswith(mine + os.sep) or os.path.dirname(file) == here):
                out.add(file)
    return out


def _module_of(path: str) -> str | None:
    """The name of the loaded module whose file is `path`."""
    for name, module in list(sys.modules.items()):
        if os.path.abspath(getattr(module, "__file__", None) or "") == path:
            return name
    return None


def _content_digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _package() -> str:
    return str(Path(__file__).resolve().parent)


def _cpu_digest() -> str:
    return hashlib.sha256(host_cpu().encode()).hexdigest()[:16]


def _remove_replaced(where: Path, k: str, keep: str) -> None:
    """Earlier modules of this key, and the modules and indexes of other keys built from this copy
    of popview for this CPU (a process that loaded one keeps its mapping). Other copies' are
    theirs, and other CPUs' (a home folder shared by a cluster's different nodes) too."""
    doomed = [p for p in where.glob(f"{PREFIX}{k[:12]}_*") if p.name != keep]
    for index in where.glob("popview-aot-*.json"):
        if index.name == f"popview-aot-{k}.json":
            continue
        try:
            other = json.loads(index.read_text())
        except (OSError, ValueError):
            continue
        if other.get("package") == _package() and other.get("cpu") == _cpu_digest():
            doomed += [where / str(other.get("file", "")), index]
    for path in doomed:
        if path.name.startswith((PREFIX, "popview-aot-")):
            try:
                path.unlink()
            except OSError:
                pass


# ---------------------------------------------------------------- the background build

_BOOT = ("import os, signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
         "from popview.aot import build_in_background; raise SystemExit(build_in_background())")
_started: list = []


def wanted() -> bool:
    """Whether a build would help: switched on, and no module (nor a failed build) for this key."""
    if not enabled() or os.environ.get("POPVIEW_PRECOMPILE") == "0" or os.name != "posix" \
            or getattr(sys, "frozen", False) or folder() is None:
        return False
    k = key()
    failed = failure_path(k)
    return not is_built(k) and not (failed is not None and failed.exists())


def start_build() -> bool:
    """Start the build in a process of its own that outlives the command (it takes 30-60 s of
    one core, niced; one at a time: a lock in the folder), when wanted(). Returns whether it
    started."""
    if _started or not wanted():
        return False
    import subprocess

    where = folder()
    try:
        where.mkdir(parents=True, exist_ok=True)
        if _building(where):
            return False
        log_path = where / "build.log"
        big = log_path.exists() and log_path.stat().st_size > (1 << 20)
        with open(log_path, "wb" if big else "ab") as log:          # the last builds' output
            proc = subprocess.Popen([sys.executable, "-c", _BOOT], stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=log, close_fds=True, start_new_session=True)
    except OSError:
        return False
    _started.append(proc)
    return True


def _building(where: Path) -> bool:
    """Whether a build holds the folder's lock now (no second process started for nothing)."""
    import fcntl

    try:
        with open(where / "build.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(lock, fcntl.LOCK_UN)
    except OSError:
        return True
    return False


def build_in_background(wait_for_a_free_core: bool = True) -> int:
    """The build process: niced, alone (a lock), only when a core is free (a batch job's node whose
    cores are all busy, a loaded login node: not now, a later command tries again); leaves the
    module or a note of why not."""
    import fcntl
    import traceback

    try:
        os.nice(10)
    except OSError:
        pass
    if wait_for_a_free_core:
        from popview.precompile import _a_core_is_free

        if not _a_core_is_free():
            print("no core free: not built now", flush=True)
            return 2
    where = folder()
    where.mkdir(parents=True, exist_ok=True)
    with open(where / "build.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0                                # another process builds it
        k = key()
        if is_built(k):
            return 0
        try:
            build()
        except Exception as exc:
            traceback.print_exc()
            note = failure_path(k)
            tmp = note.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(f"{type(exc).__name__}: {exc}".strip()[:2000] + "\n")
            os.replace(tmp, note)
            return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """python -m popview.aot [build|status]: build the module now (in this process), or say
    whether a process would use it and why."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["build"]:
        import fcntl

        where = folder()
        where.mkdir(parents=True, exist_ok=True)
        with open(where / "build.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)           # after a background build (each removed the other's module)
            k = key()
            print(index_path(k) if is_built(k) else build())
        return 0
    functions()
    print(status())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
