"""Where numba caches popview's kernels: a folder keyed by the content of their sources.

numba's own cache (`cache=True`) tells a kernel's source by its file alone: by
its size and modification time up to numba 0.67 (a same-size edit whose time
was kept, by `cp -p`, `rsync -t`, `tar` or within the file system's clock
tick, is not seen), by its content from 0.68; and never by the modules the
compiled code also comes from: the constants a kernel reads from another
module are frozen into its code, and the kernels it calls from another file
are linked into it. After such an edit numba served the old code.

So `popview.jit` makes each kernel's dispatcher with numba's cache folder
(config.CACHE_DIR, read when the dispatcher is made) set to
`NUMBA_CACHE_DIR/popview-by-content/<file>-<key>`: <file> names the kernel's
source file (a hash of its path), <key> is the SHA-256 of the content of that
file and of every module it imports at its top level, directly or through
them (popview's modules and the ones beside it; as popview.aot keys its module
by its sources' content). A change to any of them gives a new folder, where
the kernels compile anew; the file's folders of other keys are removed once
unused for an hour (a process still running the old code may still write
there), so the disk holds about one folder per kernel file. An edit of a
module no kernel file imports compiles nothing.

The imports are read from the text by regular expressions (20 ms once a
process for all 28 kernel files and their 89 sources; `ast` took 0.4-0.7 s):
an import in a function is left out (a kernel reads only module globals), an
import at the top of the file, in a top-level `try:` or `if` included, as is
one a docstring or string seems to hold (more files hashed, never fewer).
A kernel whose sources changed after its module was imported (its code in
memory is not the files' content) is compiled without the cache.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import threading
import time
from contextlib import contextmanager
from pathlib import Path

FOLDER = "popview-by-content"    # under numba's cache folder (NUMBA_CACHE_DIR)
FORMAT = 1                       # of the key; a change keys new folders
UNUSED_S = 3600                  # another key's folder unused this long is removed

PACKAGE = Path(__file__).resolve().parent
# Each after a newline (the text is read with one put before it): 4x faster than ^ with re.M.
_IMPORT = re.compile(rb"\n(?P<indent>[ \t]*)(?:from[ \t]+(?P<base>\.*[\w.]*)[ \t]+import[ \t]+"
                     rb"(?P<names>\([^)]*\)|[^\n]*)|import[ \t]+(?P<plain>[^\n]*))")
_DEF = re.compile(rb"\n(?:async[ \t]+def|def|class)[ \t]")
_TOP = re.compile(rb"\n(?=[^ \t\n#)\]}@])")        # a line that starts a top-level statement

_lock = threading.Lock()
_keys: dict[str, tuple[str, int]] = {}              # source file -> (key, its sources' newest mtime)
_cleaned: set[str] = set()


def folder_for(source_file: str, base: str, imported_ns: int) -> str | None:
    """The folder numba caches the kernels of `source_file` in, under `base` (numba's cache
    folder); None when a source changed after `imported_ns` (the module's import: the code in
    memory is not the files'), or the sources cannot be read: then compile without the cache."""
    path = os.path.abspath(source_file)
    try:
        k, newest = key_of(path)
    except OSError:
        return None
    if newest > imported_ns:
        return None
    parent = os.path.join(base, FOLDER)
    prefix = hashlib.sha1(path.encode()).hexdigest()[:12]
    where = os.path.join(parent, f"{prefix}-{k}")
    if path not in _cleaned:
        _cleaned.add(path)
        _remove_others(parent, prefix, where)
    return where


def key_of(path: str) -> tuple[str, int]:
    """(SHA-256 of the content of `path` and of every file it imports at its top level, the
    newest modification time of those files in ns): read once a process. OSError when one
    cannot be read."""
    path = os.path.abspath(path)
    with _lock:
        found = _keys.get(path)
        if found is None:
            h = hashlib.sha256(f"{FORMAT}".encode())
            newest = 0
            for source in sorted(sources_of(path)):
                newest = max(newest, os.stat(source).st_mtime_ns)
                h.update(f"\0{source}\0".encode())
                h.update(_content(source))
            found = _keys[path] = (h.hexdigest()[:24], newest)
        return found


@contextmanager
def cache_dir(config, where: str | None):
    """numba's config.CACHE_DIR set to `where` while a dispatcher is made (not when None)."""
    if where is None:
        yield
        return
    before = config.CACHE_DIR
    config.CACHE_DIR = where
    try:
        yield
    finally:
        config.CACHE_DIR = before


# ---------------------------------------------------------------- the sources

def sources_of(path: str) -> set[str]:
    """`path` and the files of the modules it imports at its top level, directly or through
    them: popview's modules, and the ones in the folder of the file importing them."""
    out, todo = set(), [os.path.abspath(path)]
    while todo:
        current = todo.pop()
        if current in out:
            continue
        out.add(current)
        todo.extend(imported(current) - out)
    return out


_texts: dict[str, bytes] = {}


def _content(path: str) -> bytes:
    text = _texts.get(path)
    if text is None:
        with open(path, "rb") as f:
            text = _texts[path] = f.read()
    return text


_imports: dict[str, frozenset] = {}


def imported(path: str) -> frozenset:
    """The files of the modules `path` imports outside its functions and classes (read once a
    process)."""
    found = _imports.get(path)
    if found is None:
        found = _imports[path] = frozenset(_read_imports(path))
    return found


def _read_imports(path: str) -> set[str]:
    text = b"\n" + _content(path)
    here = os.path.dirname(path)
    package = _package_of(path)
    inside = _def_spans(text)
    out = set()
    for match in _IMPORT.finditer(text):
        if match.group("indent") and _within(inside, match.start()):
            continue
        if match.group("plain") is not None:
            for name in _names(match.group("plain")):
                out |= _files_of(name, here)
            continue
        base = match.group("base").decode()
        level = len(base) - len(base.lstrip("."))
        base = base.lstrip(".")
        if level:
            if package is None:
                continue
            parts = package.split(".")
            if level - 1 > len(parts) - 1:
                continue
            base = ".".join(parts[:len(parts) - (level - 1)] + ([base] if base else []))
        out |= _files_of(base, here)
        for name in _names(match.group("names")):
            out |= _files_of(f"{base}.{name}" if base else name, here, module_only=True)
    out.discard(path)
    return out


def _names(text: bytes) -> list[str]:
    text = re.sub(rb"#[^\n]*", b"", text).replace(b"\\", b" ").strip().strip(b"()")
    return [part.split()[0].decode() for part in text.split(b",") if part.split()]


def _files_of(name: str, here: str, module_only: bool = False) -> set[str]:
    """The file of module `name` when it is popview's or lies in `here` (its package's
    __init__ too unless `module_only`)."""
    parts = name.split(".")
    if parts[0] == "popview":
        root = PACKAGE.joinpath(*parts[1:])
    elif parts[0] and (os.path.exists(os.path.join(here, parts[0] + ".py"))
                       or os.path.isdir(os.path.join(here, parts[0]))):
        root = Path(here).joinpath(*parts)
    else:
        return set()
    module = root.with_suffix(".py") if root != PACKAGE else None
    if module is not None and module.is_file():
        return {str(module)}
    init = root / "__init__.py"
    return {str(init)} if not module_only and init.is_file() else set()


def _package_of(path: str) -> str | None:
    """popview's dotted package of `path` (relative imports), None outside popview."""
    try:
        relative = Path(path).parent.relative_to(PACKAGE.parent)
    except ValueError:
        return None
    return ".".join(relative.parts) if relative.parts and relative.parts[0] == "popview" else None


def _def_spans(text: bytes) -> list[tuple[int, int]]:
    """(start, end) of each top-level function and class: from its line to the next line that
    starts a top-level statement."""
    import bisect

    tops = [m.start() for m in _TOP.finditer(text)]
    spans = []
    for match in _DEF.finditer(text):
        after = bisect.bisect_right(tops, match.start())
        spans.append((match.start(), tops[after] if after < len(tops) else len(text)))
    return spans


def _within(spans: list, offset: int) -> bool:
    import bisect

    at = bisect.bisect_right(spans, (offset, float("inf"))) - 1
    return at >= 0 and spans[at][0] < offset < spans[at][1]


# ---------------------------------------------------------------- bounded disk use

def _remove_others(parent: str, prefix: str, keep: str) -> None:
    """The folders of the same file with other keys, unused for UNUSED_S (their files' newest
    time; a process running the old code writes there until it ends)."""
    try:
        names = [n for n in os.listdir(parent) if n.startswith(prefix + "-")]
    except OSError:
        return
    now = time.time()
    for name in names:
        folder = os.path.join(parent, name)
        if folder == keep or _last_used(folder) > now - UNUSED_S:
            continue
        shutil.rmtree(folder, ignore_errors=True)


def _last_used(folder: str) -> float:
    newest = 0.0
    for root, _dirs, files in os.walk(folder):
        for name in [root, *(os.path.join(root, f) for f in files)]:
            try:
                newest = max(newest, os.stat(name).st_mtime)
            except OSError:
                continue
    return newest
