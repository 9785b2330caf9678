"""The numba decoder of OTF2 event files against the `otf2` bindings, record
for record, on every real archive and on one with every supported record kind."""
from __future__ import annotations

import shutil
from collections import Counter

import numpy as np
import pytest

import popview
from popview.readers import InputError
from popview.readers.otf2 import archive, bindings, decoder, events
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
    for ref in refs:
        out = decoder.decode_location(anchor, ref, tables.event_chunk_size, tables.location_events[ref])
        if out is None:
            left_out += 1
            continue
        rec, counts = out
        for col in COLUMNS:
            np.testing.assert_array_equal(getattr(rec, col).astype(np.int64),
                                          getattr(reference[ref], col).astype(np.int64),
                                          err_msg=f"{anchor} location {ref} column {col}")
    if not left_out:
        decoded = sum((decoder.decode_location(anchor, r, tables.event_chunk_size, 0)[1] for r in refs),
                      start=Counter())
        assert decoded == ref_counts
    return left_out


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


@pytest.mark.parametrize("tag_span", [50, 1 << 62], ids=["packed key", "ranges too wide to pack"])
def test_fifo_order_equals_the_full_sort(tag_span):
    from popview.readers.otf2.mapping import _fifo_order

    rng = np.random.default_rng(7)
    n = 5000
    both = {"comm": rng.integers(0, 3, n), "src": rng.integers(0, 8, n), "dst": rng.integers(0, 8, n),
            "tag": rng.integers(-1, 3, n) * (tag_span // 4), "time": rng.integers(0, 100, n)}
    side = rng.integers(0, 2, n).astype(np.int8)
    want = np.lexsort((np.arange(n), both["time"], side, both["tag"], both["dst"], both["src"], both["comm"]))
    np.testing.assert_array_equal(_fifo_order(both, side), want)
