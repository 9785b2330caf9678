"""The OTF2 library's Python bindings behind one door.

popview reads definitions (and, for the few locations its own decoder leaves
to them, events) through the `otf2` package, and needs three things that
package only offers through its private `_otf2` module: the creator string,
the event chunk size and the global event reader's callback loop. Every use
of `_otf2` is here, behind a check of the bindings' version (the private
API is known for the 3.x series, the range pyproject.toml allows).
"""
from __future__ import annotations

from popview.readers.errors import InputError

SUPPORTED_MAJOR = 3


def bindings(path=None):
    """(otf2, _otf2), or InputError (naming `path`, the archive being read) when the
    installed bindings are not a known version."""
    import _otf2
    import otf2

    version = getattr(otf2, "__version__", "unknown")
    if str(version).split(".")[0] != str(SUPPORTED_MAJOR):
        where = f"{path}: " if path is not None else ""
        raise InputError(f"{where}cannot read OTF2: the installed OTF2 Python bindings are version {version}; popview reads OTF2 "
                         f"through the {SUPPORTED_MAJOR}.x bindings (pip install 'otf2>={SUPPORTED_MAJOR},"
                         f"<{SUPPORTED_MAJOR + 1}')")
    return otf2, _otf2


def open_reader(anchor):
    """`otf2.reader.Reader(anchor)`, closed again when its constructor fails: the bindings
    open the OTF2 reader first and leave it open when reading the global definitions
    raises (a malformed archive), which kept 2-3.5 MB per archive for good."""
    otf2, _otf2 = bindings(anchor)
    reader = otf2.reader.Reader.__new__(otf2.reader.Reader)
    try:
        reader.__init__(str(anchor))
    except BaseException:
        handle = getattr(reader, "_handle", None)
        if handle is not None:
            try:
                _otf2.Reader_Close(handle)
            except _otf2.Error:
                pass
        raise
    return reader


def error_class():
    """The bindings' exception type (for `except`)."""
    return bindings()[1].Error


def creator(handle) -> str:
    """The tool that wrote the archive, "OTF2" when the library cannot say."""
    _, _otf2 = bindings()
    try:
        text = _otf2.Reader_GetCreator(handle) or "OTF2"
    except (_otf2.Error, AttributeError):
        return "OTF2"
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return text.strip().splitlines()[0] if text.strip() else "OTF2"


def chunk_size(handle) -> int:
    """The archive's event chunk size in bytes."""
    _, _otf2 = bindings()
    return int(_otf2.Reader_GetChunkSize(handle)[0])


def read_all_events(handle, reader) -> None:
    """Run the global event reader `handle` through the callbacks `reader` installs."""
    _, _otf2 = bindings()
    cbs = _otf2.GlobalEvtReaderCallbacks_New()
    reader._set_global_event_reader_callbacks(cbs)
    _otf2.GlobalEvtReader_SetCallbacks(handle, cbs, None)
    _otf2.GlobalEvtReaderCallbacks_Delete(cbs)
    while _otf2.GlobalEvtReader_ReadEvents(handle, 1 << 20) == 1 << 20:
        pass
