"""What the synthetic OTF2 writer writes is what the reader reads."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.readers.otf2 import definitions as dd
from popview.testing.otf2_writer import MESSAGE_BYTES, TICKS_PER_S, write_trace


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = tmp_path_factory.mktemp("otf2") / "run"
    return write_trace(folder, ranks=4, iterations=12, threads=3, collective_every=4, flush_at=2,
                       measurement_gap=7)


@pytest.fixture(scope="module")
def exp(written, tmp_path_factory):
    with popview.open(written.anchor.parent, cache_dir=tmp_path_factory.mktemp("cache")) as e:
        yield e


def _names(exp, callpaths):
    d = exp.definitions
    return np.array([d.regions[d.callpath_region[cp]].name for cp in callpaths])


def test_shape_and_counts(written, exp):
    d = exp.definitions
    assert exp.shape() == (4, 3)
    assert d.flags["otf2_event_counts"] == dict(sorted(written.events.items()))
    ns_per_tick = 1e9 / TICKS_PER_S
    assert d.source_unit_ns == ns_per_tick
    assert d.t_end == round((written.duration_ticks - 1000) * ns_per_tick)


def test_messages_ring(written, exp):
    m = exp.reader.read("messages")
    proc = exp.definitions.location_process()
    assert len(m["size"]) == written.messages
    assert m["size"].sum() == written.message_bytes
    assert (m["size"] == MESSAGE_BYTES).all()
    assert ((proc[m["send_loc"]] + 1) % 4 == proc[m["recv_loc"]]).all()
    assert (m["recv_time"] > m["send_time"]).all()
    assert not any("matching partner" in w for w in exp.definitions.warnings)
    assert exp.definitions.flags["unmatched_sends"] == exp.definitions.flags["unmatched_receives"] == 0


def test_calls_and_threads_root(written, exp):
    calls = exp.reader.read("calls")
    names = _names(exp, calls["callpath"])
    assert (names == "compute").sum() == written.compute_visits
    d = exp.definitions
    worker_locs = [i for i, loc in enumerate(d.locations) if loc.thread > 0]
    tops = {d.callpath_name(int(cp)).split("/")[0] for cp in calls["callpath"][np.isin(calls["loc"], worker_locs)]}
    assert tops == {"THREADS"}
    assert d.callpath_name(int(calls["callpath"][names == "compute"][0])) == "main/compute"


def test_counters_sum_to_what_was_written(written, exp):
    ev = exp.reader.read("events")
    for name, total in written.counter_totals.items():
        code = exp.definitions.counter_code(name)
        assert code == dd.KNOWN_COUNTERS[name]
        assert ev["value"][ev["type"] == code].sum() == total


def test_collectives_recorded_at_their_begin(written, exp):
    ev = exp.reader.read("events")
    sent = ev["value"][ev["type"] == dd.COLL_BYTES_SENT]
    assert len(sent) == written.collectives and (sent == 8).all()
    assert (ev["value"][ev["type"] == dd.COLL_BYTES_RECV] == 32).all()
    assert (ev["value"][ev["type"] == dd.COLL_ROOT] == 0).all()       # no root: 0
    assert set(ev["value"][ev["type"] == dd.COLL_COMM]) == {0}


def test_states_flush_gap_and_mpi(written, exp):
    s = exp.reader.read("states")
    dur = s["end"] - s["begin"]
    ns = 1e9 / TICKS_PER_S
    assert dur[(s["state"] == 15) & (s["loc"] == 0)].sum() == round(50 * ns)      # one buffer flush
    assert dur[s["state"] == 14].sum() == round(30 * ns) * 4                        # measurement off, 4 ranks
    main_threads = [i for i, loc in enumerate(exp.definitions.locations) if loc.thread == 0]
    sends = dur[(s["state"] == 4) & np.isin(s["loc"], main_threads)].sum()
    assert sends == round(200 * ns) * written.messages
    assert dur[s["state"] == 13].sum() == round(1010 * ns) * written.collectives
    workers = ~np.isin(s["loc"], main_threads)
    assert set(np.unique(s["state"][workers])) <= {0, 1, 2}                        # idle / running / not yet
