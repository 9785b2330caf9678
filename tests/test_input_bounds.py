"""Hostile input: devices, pipes, bombs, huge numbers. Every case ends in a
clear InputError naming the file (or a counted warning), quickly, with no
cache left behind."""
from __future__ import annotations

import gzip
import os
import threading
import zlib

import pytest

import popview
from popview.cache.fingerprint import content_hash
from popview.readers import InputError, files, reader_for
from popview.readers.paraver import stream
from popview.session import store
from popview.session.schema import SessionError
from tests.paraver.prvtext import BODY, HEADER, write_trace


def _fails(path, cache_dir, pattern):
    with pytest.raises(InputError, match=pattern):
        popview.open(path, cache_dir=cache_dir)
    assert not [p for p in cache_dir.rglob("*") if p.is_file()], "a partial cache was left behind"


def _warnings(path, cache_dir):
    with popview.open(path, cache_dir=cache_dir) as exp:
        return list(exp.definitions.warnings)


# ---------------------------------------------------------------- files that are not files
def test_prv_linked_to_dev_zero_is_refused(tmp_path, cache_dir):
    link = tmp_path / "zero.prv"
    link.symlink_to("/dev/zero")
    _fails(link, cache_dir, r"zero\.prv: is a character device, not a regular file")


def test_fifo_is_refused_without_blocking(tmp_path, cache_dir):
    fifo = tmp_path / "pipe.prv"
    os.mkfifo(fifo)
    _fails(fifo, cache_dir, r"pipe\.prv: is a named pipe")
    with pytest.raises(InputError, match="named pipe"):
        reader_for(fifo)


def test_pcf_linked_to_a_device_is_refused(tmp_path, cache_dir):
    prv = write_trace(tmp_path, pcf=None)
    (tmp_path / "t.pcf").symlink_to("/dev/zero")
    _fails(prv, cache_dir, r"t\.pcf: is a character device")
    # the sources' hash runs beside the reading: it must not go on reading /dev/zero forever
    assert not [t for t in threading.enumerate() if t.name.startswith("popview-fingerprint")]


def test_only_regular_files_are_hashed(tmp_path):
    assert content_hash("/dev/zero") == ""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert content_hash(fifo) == ""           # opening it would block
    grown = tmp_path / "grown"
    grown.write_bytes(b"x" * 100)
    assert content_hash(grown) == content_hash(grown) != ""


def test_session_path_that_is_a_device_or_pipe(tmp_path):
    with pytest.raises(SessionError, match="character device"):
        store.load("/dev/zero")
    fifo = tmp_path / "s.popview"
    os.mkfifo(fifo)
    with pytest.raises(SessionError, match="named pipe"):
        store.load(fifo)


# ---------------------------------------------------------------- compression bombs and binary data
def _gzip_stream(path, header: bytes, filler: bytes, total: int):
    """header + `total` bytes of `filler`, compressed without holding them in memory."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = filler * ((1 << 20) // len(filler))
    with open(path, "wb") as f:
        f.write(z.compress(header))
        for _ in range(total // len(chunk)):
            f.write(z.compress(chunk))
        f.write(z.flush())


def test_gzip_bomb_of_zeros_stops_at_the_line_bound(tmp_path, cache_dir):
    bomb = tmp_path / "bomb.prv.gz"
    _gzip_stream(bomb, HEADER.encode(), b"\0", 96 << 20)
    assert bomb.stat().st_size < 200_000
    _fails(bomb, cache_dir, r"bomb\.prv\.gz: a line at byte .* is longer than 64 MiB")


def test_plain_file_without_newlines_stops_at_the_line_bound(tmp_path, cache_dir):
    prv = tmp_path / "flat.prv"
    with open(prv, "wb") as f:
        f.write(HEADER.encode())
        f.truncate(len(HEADER) + (80 << 20))          # sparse: 80 MiB of zeros
    _fails(prv, cache_dir, r"flat\.prv: a line at byte .* is longer than 64 MiB")


def test_gzip_expanding_beyond_the_ratio_is_refused(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setattr(files, "MIN_EXPANSION_LIMIT", 1 << 20)
    bomb = tmp_path / "ratio.prv.gz"
    _gzip_stream(bomb, HEADER.encode(), BODY.encode(), 8 << 20)
    _fails(bomb, cache_dir, r"ratio\.prv\.gz: decompresses to more than .* times its size")


def test_text_without_any_record_stops_early(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setattr(stream, "MAX_BYTES_WITHOUT_RECORDS", 1 << 20)
    monkeypatch.setattr(stream, "BLOCK", 1 << 18)
    prv = tmp_path / "junk.prv"
    prv.write_bytes(HEADER.encode() + b"not a record\n" * 200_000)
    _fails(prv, cache_dir, r"junk\.prv: no valid record in its first .* bytes .*unknown record type")


# ---------------------------------------------------------------- numbers out of range
def test_numbers_beyond_int64_are_dropped_not_wrapped(tmp_path, cache_dir):
    big, wrapping = str(1 << 70), str((1 << 63) + 5)      # 22 digits; 19 digits that wrap to negative
    body = BODY + (f"2:1:1:1:1:10:{big}:1\n1:1:1:1:1:{wrapping}:{big}:1\n"
                   f"2:1:1:1:1:10:60000019:{big}:42000050:{wrapping}:42000059:9223372036854775807\n")
    with popview.open(write_trace(tmp_path, body=body), cache_dir=cache_dir) as exp:
        warnings = exp.definitions.warnings
        ev = exp.reader.read("events", locations=[0])
    assert any("2 x malformed record (first at line" in w for w in warnings), warnings
    assert any("2 x event value beyond the int64 range (that type:value pair dropped)" in w for w in warnings)
    kept = ev["value"][(ev["time"] == 10) & (ev["type"] == 42000059)]
    assert kept.tolist() == [9223372036854775807]           # 19 digits that fit are kept exactly


def test_times_beyond_int64_nanoseconds_and_wide_types_are_dropped(tmp_path, cache_dir):
    header = HEADER.replace("1000_ns", "1000_ms")
    body = BODY + "1:1:1:1:1:0:10000000000000:1\n2:1:1:1:1:10:4294967296:1\n1:1:1:1:1:0:10:4294967296\n"
    with popview.open(write_trace(tmp_path, header=header, body=body), cache_dir=cache_dir) as exp:
        warnings = exp.definitions.warnings
        assert int(exp.reader.read("events")["type"].max()) < 1 << 31
    assert any("3 x time beyond 2^62 ns (146 years), or state or event type beyond 2^31" in w for w in warnings), \
        warnings


def test_an_event_at_the_largest_int64_time_is_dropped(tmp_path, cache_dir):
    """Found by fuzzing: an event at 2^63 - 1 ns once made the timeline pyramid allocate
    a negative size (ValueError)."""
    body = BODY + "2:1:1:1:1:9223372036854775807:50000002:0\n"
    with popview.open(write_trace(tmp_path, body=body), cache_dir=cache_dir) as exp:
        assert exp.definitions.t_end < 1 << 62
        assert any("time beyond 2^62 ns" in w for w in exp.definitions.warnings)


def test_unknown_time_unit_is_an_error(tmp_path, cache_dir):
    _fails(write_trace(tmp_path, header=HEADER.replace("1000_ns", "1000_fortnights")), cache_dir,
           r"t\.prv: line 1: unknown time unit 'fortnights'")


@pytest.mark.parametrize("header, pattern", [
    ("#Paraver (x):99999999999999999999_ns:1(2):1:2(1:1,1:1)\n", "end time .* is out of range"),
    ("#Paraver (x):1000_ns:99999999999:1:2(1:1,1:1)\n", "node count 99999999999 is out of range"),
    ("#Paraver (x):1000_ns:1(2):1:2(99999999999:1,1:1)\n", "thread count 99999999999 is out of range"),
    ("#Paraver (x):1000_ns:1(2):1:2(9000000:1,9000000:1)\n", "announces 18,000,000 threads"),
])
def test_header_counts_out_of_range(tmp_path, cache_dir, header, pattern):
    _fails(write_trace(tmp_path, header=header), cache_dir, pattern)


def test_pcf_with_huge_ids_warns_and_opens(tmp_path, cache_dir):
    from tests.paraver.prvtext import PCF

    pcf = PCF + "\nEVENT_TYPE\n0 99999999999999999999 Huge\n0 60000020 Fine\nVALUES\n99999999999999999999 big\n" \
                "\nSTATES\n99999999999 Huge state\n"
    warnings = _warnings(write_trace(tmp_path, pcf=pcf), cache_dir)
    assert sum("out-of-range" in w for w in warnings) == 3, warnings


def test_header_line_of_zeros_in_gzip_is_refused(tmp_path, cache_dir):
    bomb = tmp_path / "head.prv.gz"
    _gzip_stream(bomb, b"#Paraver (x):", b"\0", 80 << 20)
    _fails(bomb, cache_dir, r"head\.prv\.gz: line 1: longer than 64 MiB")


# ---------------------------------------------------------------- Cube anchor.xml (found by fuzzing)
def _cube_with_anchor(tmp_path, anchor: str):
    from tests.test_cube_synthetic import members, write_cubex

    content = members()
    content["anchor.xml"] = anchor.encode("latin-1")
    path = tmp_path / "p.cubex"
    write_cubex(path, content)
    return path


@pytest.mark.parametrize("edit, pattern", [
    (lambda a: a.replace('encoding="UTF-8"', 'encoding="ATF-8"'), "anchor.xml cannot be decoded"),
    (lambda a: a.replace('<location Id="3">', '<location Id="99999999999999999999">'), "Id=.* is out of range"),
    (lambda a: a.replace('<cnode id="4"', '<cnode id="9223372036854775808"'), "id=.* is out of range"),
    (lambda a: a.replace('size="2" periodic="true"', 'size="4294967296" periodic="true"'), "size=.* is out of range"),
    (lambda a: a.replace('<cnode id="4" calleeId="4">', '<cnode id="4" calleeId="4">' + '<cnode id="5" calleeId="0">'
                         * 5000 + '</cnode>' * 5000), "nested too deeply"),
])
def test_cube_anchor_out_of_range(tmp_path, cache_dir, edit, pattern):
    from tests.test_cube_synthetic import anchor_xml

    _fails(_cube_with_anchor(tmp_path, edit(anchor_xml())), cache_dir, pattern)


def test_cube_rank_and_line_beyond_int32_are_not_kept(tmp_path, cache_dir):
    from tests.test_cube_synthetic import anchor_xml

    anchor = anchor_xml().replace("<rank>1</rank><type>process", "<rank>99999999999999</rank><type>process") \
                         .replace('begin="1"', 'begin="99999999999999"')
    with popview.open(_cube_with_anchor(tmp_path, anchor), cache_dir=cache_dir) as exp:
        assert exp.definitions.processes[1].rank == 1
        assert exp.definitions.regions[0].line == 0


def test_otf2_values_beyond_int64_from_the_library_become_minus_one():
    from popview.readers.otf2.raw import RawEvents

    rec = RawEvents.from_rows([(0, (1 << 64) - 1, 2, 3, 4, 5, 6), (1, 5, 1 << 63, 0, 0, 0, 0)])
    assert rec.time.tolist() == [-1, 5]
    assert rec.a.tolist() == [2, -1]


def test_cube_gzip_bomb_is_refused_relative_to_its_size(tmp_path, cache_dir, monkeypatch):
    """A gzip-compressed .cubex may expand to 200 times its size, not to a fixed 8 GiB."""
    monkeypatch.setattr(files, "MIN_EXPANSION_LIMIT", 1 << 20)
    path = tmp_path / "bomb.cubex"
    stream_ = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    path.write_bytes(stream_.compress(bytes(16 << 20)) + stream_.flush())
    assert path.stat().st_size * files.MAX_EXPANSION < 16 << 20
    _fails(path, cache_dir, r"bomb\.cubex: archive: expands beyond .* \(over 200 times its size")


def test_gzipped_cube_archive_within_the_ratio_opens(tmp_path, cache_dir):
    from tests.test_cube_synthetic import members, write_cubex

    plain = tmp_path / "plain.cubex"
    write_cubex(plain, members())
    packed = tmp_path / "packed.cubex"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    with popview.open(packed, cache_dir=cache_dir) as exp:
        assert exp.format == "cube"
