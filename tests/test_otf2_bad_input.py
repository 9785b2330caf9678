"""Broken OTF2 archives: a clear message naming the file, and no cache left behind."""
from __future__ import annotations

import os
import shutil

import pytest

import popview
from popview.readers import InputError
from popview.testing.otf2_writer import write_trace


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    folder = tmp_path_factory.mktemp("otf2") / "run"
    write_trace(folder, ranks=2, iterations=20)
    return folder


@pytest.fixture
def copy(good, tmp_path):
    target = tmp_path / "run"
    shutil.copytree(good, target)
    return target


def _fails(path, cache_dir, pattern):
    with pytest.raises(InputError, match=pattern):
        popview.open(path, cache_dir=cache_dir)
    assert not [p for p in cache_dir.rglob("*") if p.is_file()], "a partial cache was left behind"


def _truncate(path):
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(size // 2)


def test_missing_global_definitions(copy, cache_dir):
    (copy / "traces.def").unlink()
    _fails(copy, cache_dir, r"traces\.def are missing")


def test_truncated_global_definitions(copy, cache_dir):
    _truncate(copy / "traces.def")
    _fails(copy, cache_dir, r"traces\.def")


def test_missing_event_file(copy, cache_dir):
    (copy / "traces" / "1.evt").unlink()
    _fails(copy, cache_dir, r"1 event file\(s\) missing in traces/: 1\.evt")


def test_truncated_event_file(copy, cache_dir):
    _truncate(copy / "traces" / "1.evt")
    _fails(copy, cache_dir, r"traces/1\.evt")


def test_anchor_without_its_directory(copy, cache_dir):
    shutil.rmtree(copy / "traces")
    _fails(copy / "traces.otf2", cache_dir, r"the directory traces/ itself is missing")


def test_garbage_anchor(tmp_path, cache_dir):
    bad = tmp_path / "junk.otf2"
    bad.write_bytes(os.urandom(4096))
    _fails(bad, cache_dir, r"junk\.otf2: not an OTF2 anchor file")


def test_directory_without_anchor_is_not_otf2(tmp_path, cache_dir):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="directory without a trace"):
        popview.open(tmp_path / "empty", cache_dir=cache_dir)


def test_unknown_bindings_version_is_refused_by_name(monkeypatch, tmp_path):
    """The private part of the OTF2 bindings is used behind a version check."""
    import otf2

    from popview.readers.otf2 import library

    monkeypatch.setattr(otf2, "__version__", "4.0")
    with pytest.raises(InputError, match=r"x\.otf2: cannot read OTF2: .* version 4\.0; .* 3\.x"):
        library.bindings(tmp_path / "x.otf2")


def test_creator_falls_back_when_the_library_cannot_say(monkeypatch):
    import _otf2

    from popview.readers.otf2 import library

    monkeypatch.delattr(_otf2, "Reader_GetCreator")
    assert library.creator(None) == "OTF2"


def test_a_reader_whose_definitions_fail_is_closed(copy, cache_dir, monkeypatch):
    """The bindings open the OTF2 reader, then read the global definitions; when that
    raises, their Reader never closes it: 2-3.5 MB of the library's memory kept for good
    per malformed archive (the otf2_def fuzz target ran out of 6 GB after 3,853 inputs)."""
    import _otf2

    opened, closed = [], []
    real_open, real_close = _otf2.Reader_Open, _otf2.Reader_Close
    monkeypatch.setattr(_otf2, "Reader_Open", lambda *a: opened.append(1) or real_open(*a))
    monkeypatch.setattr(_otf2, "Reader_Close", lambda *a: closed.append(1) or real_close(*a))
    _truncate(copy / "traces.def")
    _fails(copy, cache_dir, r"traces\.def")
    assert opened and len(closed) == len(opened)


@pytest.mark.parametrize("length, offset, what", [(2**64 - 1, 0, "trace length"), (10, 2**63, "global time offset")])
def test_clock_properties_beyond_64_bit_times_are_refused(length, offset, what):
    """The otf2_def fuzz target: a trace length of 2^64 - 1 ticks overflowed int64 in the
    mapping kernel's arguments (OverflowError) instead of a one-line refusal."""
    from types import SimpleNamespace

    from popview.readers.otf2 import definitions

    clock = SimpleNamespace(timer_resolution=2_000_000_000, trace_length=length, global_offset=offset)
    with pytest.raises(InputError, match=what):
        definitions.build(SimpleNamespace(clock_properties=clock), "traces")


def test_an_event_count_beyond_64_bits_does_not_size_the_decoder(good):
    """The otf2_def fuzz target: a location announcing 2^64 - 1 events overflowed the
    decoder's row capacity (int64) instead of decoding what the file holds."""
    from popview.readers.otf2 import archive, conversion, decoder

    anchor = archive.anchor(good)
    _, tables = conversion.read_definitions(anchor)
    ref, count = next(iter(tables.location_events.items()))
    honest = decoder.decode_location(anchor, ref, tables.event_chunk_size, count)
    inflated = decoder.decode_location(anchor, ref, tables.event_chunk_size, 2**64 - 1)
    assert honest is not None and inflated is not None
    assert inflated[1] == honest[1] and len(inflated[0].time) == len(honest[0].time) > 0
