"""OTF2 input that once hung or over-allocated: every decoder pass moves
forward or stops, the decoder stops on cancel, references are range-checked."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import popview
from popview.cache.progress import Cancelled
from popview.readers import InputError
from popview.readers.otf2 import decoder
from tests.test_otf2_bad_input import copy, good  # noqa: F401 - the same archive fixtures


def _chunk_header() -> bytes:
    return bytes([decoder.CHUNK_HEADER, decoder.LITTLE_ENDIAN]) + struct.pack("<QQ", 0, 1)


def test_negative_record_length_does_not_loop(copy, cache_dir):
    """37 bytes: an attribute list whose 8-byte length is -10 used to send the cursor back forever."""
    evt = _chunk_header() + bytes([decoder.ATTRIBUTE_LIST, 0xFF]) + struct.pack("<q", -10) + bytes(9)
    assert len(evt) == 37
    assert _decode(evt, 1 << 20)[2] == decoder.MALFORMED
    (copy / "traces" / "0.evt").write_bytes(evt)
    with pytest.raises(InputError, match=r"0\.evt"):
        popview.open(copy, cache_dir=cache_dir)


def _decode(buf: bytes, chunk_size: int, cancel: int = 0):
    z = np.zeros(0, np.int64)
    return decoder.decode(np.frombuffer(bytearray(buf), np.uint8), np.int64(chunk_size), np.int64(1024), z, z, z,
                          z, z, z, np.zeros(0, np.float64), np.array([cancel], np.uint8))


def test_record_running_past_its_chunk_never_steps_back():
    # chunk of 32 bytes; a 30-byte attribute list runs past it, then an end-of-chunk byte
    buf = _chunk_header() + bytes([decoder.ATTRIBUTE_LIST, 30]) + bytes(30) + bytes([decoder.END_OF_CHUNK]) + bytes(20)
    _, _, status, _ = _decode(buf, 32)
    assert status == decoder.MALFORMED


def test_cancel_flag_stops_the_decoder():
    enter = bytes([decoder.TIMESTAMP]) + struct.pack("<Q", 5) + bytes([12, 1, 3])
    buf = _chunk_header() + enter * 100 + bytes([decoder.END_OF_FILE])
    assert _decode(buf, 1 << 20)[2] == decoder.OK
    assert _decode(buf, 1 << 20, cancel=1)[2] == decoder.CANCELLED


def test_cancel_reaches_the_conversion(copy, tmp_path):
    refs = sorted(int(p.stem) for p in (copy / "traces").glob("*.evt"))
    with pytest.raises(Cancelled):
        decoder.decode_location(copy / "traces.otf2", refs[0], 1 << 20, 10, np.ones(1, np.uint8))


@pytest.mark.parametrize("chunk_size", [0, 18, 1 << 41])
def test_chunk_size_out_of_range(copy, chunk_size):
    with pytest.raises(InputError, match="chunk size"):
        decoder.decode_location(copy / "traces.otf2", 0, chunk_size, 10)


def test_sparse_mapping_table_goes_to_the_library(tmp_path):
    """A local id of 2^31 in a mapping table would allocate 16 GB as a dense table."""
    def compressed(v: int) -> bytes:
        raw = v.to_bytes(8, "little").rstrip(b"\0")
        return bytes([len(raw)]) + raw
    body = bytes([decoder.MAP_REGION]) + compressed(1) + bytes([1]) + compressed(1 << 31) + compressed(0)
    data = _chunk_header() + bytes([decoder.DEF_MAPPING_TABLE, len(body)]) + body + bytes([decoder.END_OF_FILE])
    path = tmp_path / "0.def"
    path.write_bytes(data)
    assert decoder.read_local_definitions(path) is None
    body = bytes([decoder.MAP_REGION]) + compressed(1) + bytes([1]) + compressed(3) + compressed(7)
    path.write_bytes(_chunk_header() + bytes([decoder.DEF_MAPPING_TABLE, len(body)]) + body
                     + bytes([decoder.END_OF_FILE]))
    assert decoder.read_local_definitions(path).table(decoder.MAP_REGION).tolist() == [-1, -1, -1, 7]


def test_event_file_linked_to_a_device(copy, cache_dir):
    evt = copy / "traces" / "0.evt"
    evt.unlink()
    evt.symlink_to("/dev/zero")
    with pytest.raises(InputError, match=r"0\.evt"):
        popview.open(copy, cache_dir=cache_dir)


def test_cancel_stops_the_mapping_kernel(copy):
    """The second kernel of a location (records -> rows) stops on the same flag."""
    from popview.readers.otf2 import events
    from popview.readers.otf2.conversion import read_definitions
    from popview.readers.otf2.mapping import Halves, Problems, convert_location

    anchor = copy / "traces.otf2"
    defs, tables = read_definitions(anchor)
    ref = tables.location_refs[0]
    rec, _ = events.decode(anchor, ref, tables)
    loc = tables.location_index[ref]

    def mapped(cancel):
        return convert_location(loc, "thread", defs.locations[loc].process, rec, tables, defs.t_end, None, 1,
                                Halves(), Halves(), Problems(), cancel=cancel)

    assert len(mapped(np.zeros(1, np.uint8)).states["begin"]) > 0
    with pytest.raises(Cancelled):
        mapped(np.ones(1, np.uint8))


def test_a_collective_without_its_end_leaves_out_its_reserved_events(tmp_path):
    """A collective's four events are reserved at its begin and filled at its end; one that
    never ends leaves them out (the mapping kernel drops them in place, the others in order)."""
    from popview.readers.otf2 import events, raw
    from popview.readers.otf2.conversion import read_definitions
    from popview.readers.otf2.mapping import Halves, Problems, convert_location
    from popview.testing.otf2_writer import write_trace

    write_trace(tmp_path / "t", ranks=2, iterations=10)
    anchor = tmp_path / "t" / "traces.otf2"
    defs, tables = read_definitions(anchor)
    ref = tables.location_refs[0]
    rec, _ = events.decode(anchor, ref, tables)
    loc = tables.location_index[ref]

    def mapped(records):
        return convert_location(loc, "thread", defs.locations[loc].process, records, tables, defs.t_end, None, 1,
                                Halves(), Halves(), Problems()).events

    whole = mapped(rec)
    cut = rec.copy()
    end = int(np.flatnonzero(rec.kind == raw.COLL_END)[0])
    cut.kind[end] = raw.OTHER                       # its end record never came
    part = mapped(cut)
    first = {}                                      # the first collective's events: each its type's first
    for i, t in enumerate(whole["type"].tolist()):
        first.setdefault(t, i)
    coll = np.zeros(len(whole["type"]), bool)
    coll[[i for t, i in first.items() if t not in set(part["type"].tolist()) or
          np.sum(part["type"] == t) < np.sum(whole["type"] == t)]] = True
    assert coll.sum() == 4 and len(set(whole["time"][coll].tolist())) == 1 and (part["type"] >= 0).all()
    for name in ("time", "type", "value"):
        assert part[name].tolist() == whole[name][~coll].tolist()
