"""The numba decoder of OTF2 event files against the `otf2` bindings, record
for record, on every real archive and on one with every supported record kind."""
from __future__ import annotations

import shutil
import threading
from collections import Counter

import numpy as np
import pytest

import popview
from popview.readers import InputError
from popview.readers.otf2 import archive, bindings, decoder, events, mapping
from popview.readers.otf2.conversion import read_definitions
from popview.readers.otf2.mapping import match_messages
from popview.readers.otf2.raw import COLUMNS
from popview.testing.otf2_writer import write_openmp_trace, write_record_kinds, write_task_trace, write_trace

REAL = ["pipit/ping-pong-otf2", "pipit/ping-pong-otf2-papi", "tracer-stencil4d/traces-32",
        "tracer-stencil4d/traces-64", "fastotf2/simple-mi300-example-run", "apex-otf2/OTF2_archive"]


@pytest.fixture(scope="module")
def kinds_archive(tmp_path_factory):
    return write_record_kinds(tmp_path_factory.mktemp("otf2") / "kinds")


def _compare(anchor) -> int:
    """Asserts decoder == bindings for every location it decodes; returns how many it left out."""
    _, tables = read_definitions(anchor)
    refs = tables.location_refs
    reference, per_location = bindings.read_locations(anchor, refs)
    ref_counts = sum(per_location.values(), start=Counter())
    left_out = 0
    scratch = decoder.Scratch()          # one thread's memory, reused location after location
    for ref in refs:
        out = decoder.decode_location(anchor, ref, tables.event_chunk_size, tables.location_events[ref])
        if out is None:
            left_out += 1
            assert decoder.decode_location(anchor, ref, tables.event_chunk_size, tables.location_events[ref],
                                           scratch=scratch) is None
            continue
        rec, counts = out
        again, counts_again = decoder.decode_location(anchor, ref, tables.event_chunk_size,
                                                      tables.location_events[ref], scratch=scratch)
        assert counts_again == counts
        for col in COLUMNS:
            for got in (rec, again):
                np.testing.assert_array_equal(getattr(got, col).astype(np.int64),
                                              getattr(reference[ref], col).astype(np.int64),
                                              err_msg=f"{anchor} location {ref} column {col}")
    if not left_out:
        decoded = sum((decoder.decode_location(anchor, r, tables.event_chunk_size, 0)[1] for r in refs),
                      start=Counter())
        assert decoded == ref_counts
    return left_out


def test_a_scratch_is_reused_from_one_location_to_the_next(tmp_path):
    """The decoding threads' columns and file bytes are the same memory at every location
    (fresh memory at every location was most of their CPU: page faults), grown when a
    location needs more."""
    write_trace(tmp_path / "t", ranks=3, iterations=30)
    anchor = tmp_path / "t" / "traces.otf2"
    _, tables = read_definitions(anchor)
    scratch = decoder.Scratch()
    got = [decoder.decode_location(anchor, ref, tables.event_chunk_size, tables.location_events[ref],
                                   scratch=scratch)[0] for ref in tables.location_refs[:2]]
    assert len(got[0]) and len(got[1])
    assert np.shares_memory(got[0].time, got[1].time) and np.shares_memory(got[0].kind, got[1].kind)
    small = decoder.Scratch()
    small.columns, small.bytes = decoder._new_columns(16), np.zeros(3, np.uint8)
    ref = tables.location_refs[0]
    rec, _ = decoder.decode_location(anchor, ref, tables.event_chunk_size, 0, scratch=small)
    assert len(small.columns[0]) > 16 and len(small.bytes) >= archive.event_file(anchor, ref).stat().st_size
    assert rec.time.tolist() == decoder.decode_location(anchor, ref, tables.event_chunk_size, 0)[0].time.tolist()


def test_waiting_locations_kept_for_the_second_pass_are_copies_of_the_scratch(tmp_path, monkeypatch):
    """OpenMP workers wait for their links; their records, kept from the first pass, must not be
    the decoding thread's scratch, which the next location overwrites."""
    from popview import readers
    from popview.readers.otf2 import conversion
    from tests.cachecompare import differences

    monkeypatch.setattr(readers.otf2, "INTERPRETED_BYTES", 0)        # compiled: the worker threads decode
    write_openmp_trace(tmp_path / "omp", ranks=2, threads=3, iterations=4)
    anchor = tmp_path / "omp" / "traces.otf2"
    kept = []
    real = conversion._Conversion._keep
    monkeypatch.setattr(conversion._Conversion, "_keep", lambda self, ref, rec: kept.append(ref) or real(self, ref, rec))
    with popview.open(anchor, cache_dir=tmp_path / "reused") as exp:
        reused = exp.cache_path
    assert kept
    monkeypatch.setattr(conversion._Conversion, "_scratch", lambda self: decoder.Scratch())     # fresh every time
    with popview.open(anchor, cache_dir=tmp_path / "fresh") as exp:
        fresh = exp.cache_path
    assert differences(reused, fresh) == []


@pytest.mark.parametrize("rel", REAL)
def test_decoder_equals_bindings_on_real_archives(shared_traces, rel):
    assert _compare(archive.anchor(shared_traces / rel)) == 0


def test_decoder_equals_bindings_on_every_record_kind(kinds_archive):
    # rank 1 also holds thread fork/join, which the decoder leaves to the bindings
    assert _compare(kinds_archive) == 1


@pytest.mark.parametrize("write", [write_task_trace, lambda f: write_openmp_trace(f, generic=False),
                                   lambda f: write_openmp_trace(f, double_metrics=True)],
                         ids=["tasks", "openmp-1.x", "teams-and-double-metrics"])
def test_decoder_equals_bindings_on_thread_records(tmp_path, write):
    assert _compare(write(tmp_path / "run").anchor) == 0


def test_decoder_crosses_chunk_boundaries(tmp_path):
    written = write_trace(tmp_path / "chunked", ranks=2, iterations=7000, chunk_size=256 * 1024)
    assert (written.anchor.parent / "traces" / "0.evt").stat().st_size > 3 * 256 * 1024
    assert _compare(written.anchor) == 0


def test_fallback_and_decoder_convert_alike(kinds_archive, tmp_path, monkeypatch):
    tables = {}
    for use in (True, False):
        monkeypatch.setattr(events, "USE_DECODER", use)
        with popview.open(kinds_archive, cache_dir=tmp_path / str(use), force=True) as exp:
            tables[use] = {t: exp.reader.read(t) for t in ("events", "states", "messages", "calls")}
            assert exp.definitions.flags["otf2_locations_via_bindings"] == (1 if use else 2)
    for t, cols in tables[True].items():
        for name, values in cols.items():
            np.testing.assert_array_equal(values, tables[False][t][name], err_msg=f"{t}.{name}")


def test_missing_end_of_file_record_is_truncation(kinds_archive, tmp_path, cache_dir):
    copy = tmp_path / "kinds"
    shutil.copytree(kinds_archive.parent, copy)
    evt = copy / "traces" / "0.evt"
    evt.write_bytes(evt.read_bytes()[:-2])
    with pytest.raises(InputError, match=r"0\.evt: the event data stop at byte .* end-of-file"):
        popview.open(copy, cache_dir=cache_dir)


def _halves(rows):
    cols = ("loc", "time", "comm", "src", "dst", "tag", "size")
    return {c: np.array([r[i] for r in rows], np.int64) for i, c in enumerate(cols)}


def test_messages_match_in_fifo_order_per_key():
    sends = _halves([(0, 10, 1, 0, 1, 5, 100), (0, 20, 1, 0, 1, 5, 200), (0, 30, 1, 0, 1, 6, 300),
                     (2, 40, 1, 1, 0, 5, 400)])
    recvs = _halves([(1, 25, 1, 0, 1, 5, 100), (1, 35, 1, 0, 1, 5, 200), (1, 15, 2, 0, 1, 5, 0)])
    msgs, lost_sends, lost_recvs = match_messages(sends, recvs)
    order = np.argsort(msgs["send_time"])
    assert msgs["send_time"][order].tolist() == [10, 20]
    assert msgs["recv_time"][order].tolist() == [25, 35]
    assert msgs["size"][order].tolist() == [100, 200]
    assert (lost_sends, lost_recvs) == (2, 1)   # tag 6 and 1 -> 0 unanswered; comm 2 receive unsent


def test_large_matchings_sort_their_two_sides_on_two_threads(monkeypatch):
    """The sends' keys and sort on a helper thread beside the receives' (the matching runs
    after the last location, when the other core would idle); small ones on one thread."""
    names = []
    sorted_side = mapping._sorted_side

    def recording(side, layout):
        names.append(threading.current_thread().name)
        return sorted_side(side, layout)
    monkeypatch.setattr(mapping, "_sorted_side", recording)
    rows = [(0, t, 1, 0, 1, 5, 8) for t in range(50)]
    sends, recvs = _halves(rows), _halves([(1, t + 1, 1, 0, 1, 5, 0) for t in range(50)])
    monkeypatch.setattr(mapping, "SIDES_APART", 100)
    assert len(match_messages(sends, recvs)[0]["send_time"]) == 50
    assert sorted(n.startswith("popview-match") for n in names) == [False, True]
    names.clear()
    monkeypatch.setattr(mapping, "SIDES_APART", 101)
    match_messages(sends, recvs)
    assert names == [threading.current_thread().name] * 2


def _fifo_reference(sends: dict, recvs: dict) -> list[tuple[int, int]]:
    """(send, receive) row pairs as the matching is defined, one Python step at a time: per key
    (comm, src, dst, tag) the k-th send by (time, row) with the k-th receive by (time, row);
    ordered by sender location, send time, then key and FIFO rank."""
    def by_key(h):
        out = {}
        for i in sorted(range(len(h["time"])), key=lambda i: (int(h["time"][i]), i)):
            out.setdefault(tuple(int(h[c][i]) for c in ("comm", "src", "dst", "tag")), []).append(i)
        return out
    s_keys, r_keys = by_key(sends), by_key(recvs)
    pairs = [(int(sends["loc"][i]), int(sends["time"][i]), key, rank, i, j)
             for key in s_keys.keys() & r_keys.keys() for rank, (i, j) in enumerate(zip(s_keys[key], r_keys[key]))]
    return [(i, j) for *_, i, j in sorted(pairs)]


@pytest.mark.parametrize("apart", [False, True], ids=["one thread", "sides on two threads"])
@pytest.mark.parametrize("tag_span", [50, 1 << 62, (1 << 64) - 4], ids=["packed key", "ranges too wide to pack",
                                                                        "the whole int64 range"])
def test_matching_equals_the_fifo_definition(tag_span, apart, monkeypatch):
    """Order included (the cache's messages table keeps it): times and locations tie often."""
    monkeypatch.setattr(mapping, "SIDES_APART", 0 if apart else 1 << 62)
    rng = np.random.default_rng(7)

    def halves(n):
        return {"loc": rng.integers(0, 4, n), "comm": rng.integers(0, 3, n), "src": rng.integers(0, 4, n),
                "dst": rng.integers(0, 4, n), "tag": rng.integers(-2, 2, n) * (tag_span // 4),
                "time": rng.integers(0, 60, n), "size": rng.integers(0, 1 << 40, n)}
    sends, recvs = halves(3000), halves(2500)
    msgs, lost_sends, lost_recvs = match_messages(sends, recvs)
    pairs = _fifo_reference(sends, recvs)
    i_s, i_r = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    assert 1000 < len(pairs) < 2500
    assert (lost_sends, lost_recvs) == (3000 - len(pairs), 2500 - len(pairs))
    for column, want in (("send_loc", sends["loc"][i_s]), ("recv_loc", recvs["loc"][i_r]),
                         ("send_time", sends["time"][i_s]), ("recv_time", recvs["time"][i_r]),
                         ("size", sends["size"][i_s]), ("tag", sends["tag"][i_s]), ("comm", sends["comm"][i_s]),
                         ("send_phys", sends["time"][i_s]), ("recv_phys", recvs["time"][i_r])):
        np.testing.assert_array_equal(msgs[column], want, err_msg=column)
