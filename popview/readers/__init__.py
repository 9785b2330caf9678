"""Input formats, each one reader package behind popview.readers.format's
boundary (FORMAT, detect, anchor, source_files, convert). Adding a format =
one package and one line in READERS (or `register(module)` for a plug-in).
"""
from __future__ import annotations

import importlib
from pathlib import Path

from popview.readers.errors import InputError
from popview.readers.files import regular_file
from popview.readers.format import Format

# Reader packages in detection order.
READERS = [
    "popview.readers.paraver",
    "popview.readers.otf2",
    "popview.readers.cube",
]


def register(module: str) -> None:
    """Add a reader package (a plug-in) after the built-in ones."""
    if module not in READERS:
        READERS.append(module)


def modules() -> list:
    """Every reader package, imported (a missing one is an error naming it)."""
    return [importlib.import_module(name) for name in READERS]


def formats() -> list[Format]:
    return [m.FORMAT for m in modules()]


def format_named(name: str) -> Format:
    """The format a cache's Definitions.source_format names."""
    for fmt in formats():
        if fmt.name == name:
            return fmt
    raise InputError(f"unknown format {name!r} (popview reads {', '.join(f.name for f in formats())})")


def reader_for(path: Path):
    """(format name, reader module) for `path`, or InputError saying why not."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file or directory")
    if not path.is_dir():
        regular_file(path)          # devices, pipes and sockets are never read
    for name in READERS:                # imported in turn: the first that knows the file ends the search
        mod = importlib.import_module(name)
        if mod.detect(path):
            return mod.FORMAT.name, mod
    what = "a directory without a trace or profile" if path.is_dir() else f"not {described()}"
    raise InputError(f"{path}: {what}")


def reuses_memory(path: Path) -> bool:
    """Whether `path`'s reader reuses its own buffers (Format.reuses_memory); False for what no
    reader knows (the conversion says why)."""
    try:
        return reader_for(path)[1].FORMAT.reuses_memory
    except InputError:
        return False


def profile_writer():
    """The reader package that writes popview profiles (its FORMAT.profile_suffix and
    export_profile), or InputError when none does."""
    for mod in modules():
        if mod.FORMAT.profile_suffix and hasattr(mod, "export_profile"):
            return mod
    raise InputError("no format popview reads can also be written")


def described() -> str:
    """'a Paraver trace (.prv, .prv.gz), an OTF2 trace (...) or a Cube profile (...)'."""
    examples = [f.example for f in formats()]
    return ", ".join(examples[:-1]) + " or " + examples[-1] if len(examples) > 1 else examples[0]


def file_patterns() -> list[str]:
    return [p for f in formats() for p in f.patterns]


def run_name(source: Path, format_name: str) -> str:
    source = Path(source)
    return format_named(format_name).run_name(source.name, source.parent.name)


__all__ = ["Format", "InputError", "READERS", "described", "file_patterns", "format_named", "formats",
           "reader_for", "register", "run_name"]
