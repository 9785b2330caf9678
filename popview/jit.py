"""numba behind one door: kernels that load numba only when one runs compiled.

`njit(**options)` and `refcount_free` stand for `numba.njit(cache=True, ...)`
but import nothing: numba (about 0.35 s of imports, 0.15-0.2 s to start its
CPU target, then 3-12 ms to load each cached kernel) loads at the first call
of a kernel in compiled mode. Then every kernel becomes its numba dispatcher
at once, in the globals of every module (`activate`), so kernels compiled
afterwards see dispatchers where they call each other, as with numba.njit
written directly. numba caches each kernel file's kernels in a folder keyed by
the content of the file and of the modules it imports (popview.kernel_cache).

Before that, a compiled call whose argument types the ahead-of-time module
holds (popview.aot: the kernels of resources/kernels.json, built once per
machine) runs its function there, numba not imported; any other call loads
numba as above. The results are the same (tests compare whole caches).

A thread inside `interpreted()` runs the kernels as plain Python instead
(copies of the functions whose globals name the other kernels' Python
versions, or the numpy stand-in given as njit(python=...)): for small inputs
(an OTF2 archive of a few thousand events) that is cheaper than numba's fixed
cost, and numba is never imported. Worker threads take the mode of the thread
that gave them the work through `carry`. Once numba is loaded in the process
its cost is paid: the modules hold dispatchers, and every call runs compiled
whatever the mode. The results are the same (tests compare whole caches both
ways).

`refcount_free` compiles without numba's reference counting of arrays
(`_nrt=False`): for helpers called once per record (an integer of a Paraver
line, an OTF2 event, a pyramid cell) the atomic counting costs more than the
work (measured 1.5-2x on the parsers). `_nrt` is private; it is known to work
in the numba releases pyproject.toml allows (0.60-0.68). On any other release
it falls back to a plain njit: the same results, slower.
"""
from __future__ import annotations

import functools
import sys
import threading
import time
import types
from contextlib import contextmanager

TESTED = ((0, 60), (0, 68))        # numba releases (major, minor) known to honour _nrt=False

_lock = threading.RLock()
_local = threading.local()
_lazy: list = []                   # every Kernel / Intrinsic made so far
_by_compiled: dict[int, object] = {}   # id(dispatcher or intrinsic) -> its lazy object
_python_globals: dict[str, dict] = {}  # module name -> the globals of its kernels' Python copies
_hooks: list = []                  # called once numba is active
_active = False


def numba_release() -> tuple[int, int]:
    import numba

    major, minor = numba.__version__.split(".")[:2]
    return int(major), int(minor)


def refcount_free_supported(release: tuple[int, int] | None = None) -> bool:
    return TESTED[0] <= (release or numba_release()) <= TESTED[1]


# ---------------------------------------------------------------- the two modes

def is_active() -> bool:
    """Whether numba is loaded for the kernels (some kernel ran compiled)."""
    return _active


def is_interpreted() -> bool:
    return getattr(_local, "interpreted", False)


@contextmanager
def interpreted(on: bool = True):
    """Within: this thread runs the kernels as Python (`on`), or compiled (not `on`)."""
    before = is_interpreted()
    _local.interpreted = bool(on)
    try:
        yield
    finally:
        _local.interpreted = before


def carry(fn):
    """fn to run on another thread in the mode of the calling thread."""
    if not is_interpreted():
        return fn

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with interpreted():
            return fn(*args, **kwargs)
    return run


def when_active(hook):
    """hook() once numba is active: now if it is, else at the first compiled call.
    Returns a function that cancels a hook not run yet."""
    with _lock:
        if not _active:
            _hooks.append(hook)
            return lambda: _hooks.remove(hook) if hook in _hooks else None
    hook()
    return lambda: None


SCANNED = ("popview", "__main__")     # the modules whose kernels (own or imported) activate() replaces


def activate() -> None:
    """Load numba: every kernel made so far becomes its dispatcher, in the globals of
    the modules that hold it (popview's, and a script's own)."""
    global _active
    with _lock:
        if _active:
            return
        for lazy in list(_lazy):
            lazy.materialize()
        for module_name, module in list(sys.modules.items()):
            if not module_name.startswith(SCANNED):        # every module would cost 8 ms
                continue
            names = getattr(module, "__dict__", None)
            if not isinstance(names, dict):
                continue
            for name, value in list(names.items()):
                if isinstance(value, _Lazy):
                    names[name] = value.materialize()
        _active = True
        hooks = list(_hooks)
        _hooks.clear()
    for hook in hooks:
        hook()


# ---------------------------------------------------------------- the lazy objects

class _Lazy:
    """A kernel or intrinsic before numba loads: its Python function and how to compile it."""

    def __init__(self, fn):
        self.py_func = fn
        self._compiled = None
        self._python = None
        functools.update_wrapper(self, fn)
        with _lock:
            _lazy.append(self)

    def _make(self):
        raise NotImplementedError

    def compiled(self):
        """The numba object (loads numba on the first one)."""
        if self._compiled is None:
            self.materialize()
            activate()
        return self._compiled

    def materialize(self):
        with _lock:
            if self._compiled is None:
                made = self._make()
                _by_compiled[id(made)] = self
                self._compiled = made
        return self._compiled

    def python(self):
        """The function run in interpreted mode."""
        if self._python is None:
            self._python = self._python_function()
        return self._python

    def _python_function(self):
        fn = self.py_func
        copy = types.FunctionType(fn.__code__, _globals_of(fn), fn.__name__, fn.__defaults__, fn.__closure__)
        copy.__kwdefaults__, copy.__qualname__, copy.__doc__ = fn.__kwdefaults__, fn.__qualname__, fn.__doc__
        return copy

    def __reduce__(self):
        return _resolve, (self.py_func.__module__, self.py_func.__qualname__)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.py_func.__module__}.{self.py_func.__qualname__}>"


class Kernel(_Lazy):
    """numba.njit(**options)(fn), made at its first compiled call."""

    def __init__(self, fn, options: dict, refcount_free: bool = False, python=None):
        self.options, self.refcount_free, self._python_impl = options, refcount_free, python
        self._ahead = None           # {argument types: the ahead-of-time compiled function}, once looked up
        self._made_ns = time.time_ns()      # its sources changed after this: not cached (kernel_cache)
        super().__init__(fn)

    def _python_function(self):
        return self._python_impl or super()._python_function()

    def _make(self):
        import numba

        from popview import kernel_cache

        options = dict(self.options)
        if self.refcount_free and refcount_free_supported():
            options["_nrt"] = False
        where = None
        if options.get("cache") and numba.config.CACHE_DIR:
            where = kernel_cache.folder_for(self.py_func.__code__.co_filename, numba.config.CACHE_DIR,
                                            self._made_ns)
            options["cache"] = where is not None
        with kernel_cache.cache_dir(numba.config, where):
            return numba.njit(**options)(self.py_func)

    def __call__(self, *args, **kwargs):
        if getattr(_local, "interpreted", False):
            import numpy as np

            with np.errstate(all="ignore"):      # integers wrap silently, as compiled
                return self.python()(*args, **kwargs)
        if not _active and not kwargs:
            ahead = self._ahead
            if ahead is None:
                ahead = self._ahead = _ahead_of_time(self)
            if ahead:
                found = ahead.get(_signature_of[0](args))
                if found is not None:
                    return found(*args)
        return self.compiled()(*args, **kwargs)

    def __getattr__(self, name):
        """The dispatcher's attributes (signatures, overloads, targetoptions, compile...)."""
        if name.startswith("__") or name in ("_compiled", "_python", "_python_impl", "options", "refcount_free",
                                             "py_func", "_ahead", "_made_ns"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)


class Intrinsic(_Lazy):
    """numba.extending.intrinsic(definition) in compiled kernels; `python` in interpreted ones."""

    def __init__(self, definition, python):
        self._python_impl = python
        super().__init__(definition)

    def _make(self):
        from numba.extending import intrinsic

        return intrinsic(self.py_func)

    def _python_function(self):
        return self._python_impl

    def __call__(self, *args):
        return self._python_impl(*args)


_signature_of: list = []            # popview.aot.signature_of, once a kernel has looked the module up


def _ahead_of_time(kernel) -> dict:
    """{argument types: function} of the kernel in the ahead-of-time compiled module (popview.aot),
    {} if none. The module's functions are the module-level kernels the build found by module and
    name: a kernel made elsewhere under the same names (in a function, or another function given
    them) is not one of them."""
    from popview import aot

    fn = kernel.py_func
    if fn.__qualname__ != fn.__name__ or getattr(sys.modules.get(fn.__module__), fn.__name__, None) is not kernel:
        return {}
    if not _signature_of:
        _signature_of.append(aot.signature_of)
    return aot.functions().get((fn.__module__, fn.__name__), {})


def _resolve(module: str, qualname: str):
    obj = sys.modules.get(module) or __import__(module, fromlist=["_"])
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def as_python(value):
    """The interpreted stand-in of a kernel or intrinsic (lazy or compiled), else None."""
    if isinstance(value, _Lazy):
        return value.python()
    lazy = _by_compiled.get(id(value))
    return None if lazy is None else lazy.python()


def _globals_of(fn) -> dict:
    """The module globals of fn with every kernel replaced by its Python copy (made once a module)."""
    name = fn.__module__
    with _lock:
        found = _python_globals.get(name)
        if found is not None:
            return found
        source = fn.__globals__
        out = dict(source)
        _python_globals[name] = out          # before filling: kernels of this module refer to it
        for key, value in source.items():
            if isinstance(value, _Lazy) or id(value) in _by_compiled:
                out[key] = as_python(value)
        return out


# ---------------------------------------------------------------- decorators

def _decorate(fn, options: dict, refcount_free: bool):
    python = options.pop("python", None)
    options = {"cache": True, **options}

    def make(f):
        kernel = Kernel(f, options, refcount_free, python)
        return kernel.materialize() if _active else kernel
    return make(fn) if fn is not None else make


def njit(fn=None, **options):
    """`numba.njit(cache=True, **options)`, compiled at its first compiled call. Use as @njit or
    @njit(...); njit(python=g) runs g (the same results by numpy) in interpreted mode."""
    return _decorate(fn, options, False)


def refcount_free(fn=None, **options):
    """`numba.njit(cache=True, _nrt=False, **options)` where the option is known to work,
    else `numba.njit(cache=True, **options)`. Use as @refcount_free or @refcount_free(...)."""
    return _decorate(fn, options, True)


def intrinsic(python):
    """`numba.extending.intrinsic`, with `python` the same operation for interpreted kernels."""
    def make(definition):
        lazy = Intrinsic(definition, python)
        return lazy.materialize() if _active else lazy
    return make
