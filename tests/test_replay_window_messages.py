"""A window's messages are paired as the whole run pairs them.

Extrae pairs a receive from MPI_PROC_NULL (size 0, tag MPI_ANY_TAG) with a real
send, so every later send of the channel carries the receive of an earlier one
(popview-heat's Extrae 2x2: the send at 1.009 s holds the receive at 0.641 s).
The whole run pairs such a channel again in order; a time window used to do so
with the window's rows alone, pairing its sends with receives from before it:
"33 messages received before they were sent (clock skew between nodes)" on a
one-node run, and the window's messages were not followed.
"""
from __future__ import annotations

import numpy as np
import pytest

from popview.analysis.replay.graph import RECV, SEND, GraphBuilder
from popview.analysis.replay.messages import PLACEHOLDER_TAGS, add_messages

MS = 1_000_000
N = 20                                   # sends 0 -> 1, one every 10 ms


class _Defs:
    warnings: list = []


class _Reader:
    """The messages table as Extrae's pairing leaves it: the receives in order
    (each real one followed by a placeholder from MPI_PROC_NULL) given to the
    sends in order, so send i holds receive record i."""

    definitions = _Defs()

    def __init__(self):
        recv_phys, size, tag = [], [], []
        for k in range(N):
            recv_phys += [10 * k * MS + MS, 10 * k * MS + MS]       # real receive, then the placeholder
            size += [4096, 0]
            tag += [1, PLACEHOLDER_TAGS[1]]
        self.m = {"send_loc": np.zeros(N, np.int32), "recv_loc": np.ones(N, np.int32),
                  "send_time": np.arange(N, dtype=np.int64) * 10 * MS,
                  "recv_phys": np.array(recv_phys[:N], np.int64), "size": np.array(size[:N], np.int64),
                  "tag": np.array(tag[:N], np.int64)}
        self.m["recv_time"] = self.m["recv_phys"] - 1
        # and a sound channel 1 -> 0: a message every 10 ms from 5 ms, received 1 ms later
        good = {"send_loc": np.ones(N, np.int32), "recv_loc": np.zeros(N, np.int32),
                "send_time": np.arange(N, dtype=np.int64) * 10 * MS + 5 * MS, "size": np.full(N, 8, np.int64),
                "tag": np.full(N, 2, np.int64)}
        good["recv_phys"] = good["send_time"] + MS
        good["recv_time"] = good["recv_phys"] - 1
        self.m = {k: np.concatenate([self.m[k], good[k]]) for k in self.m}

    def has(self, table):
        return table == "messages"

    def read(self, table, locations=None, t0=None, t1=None, columns=None):
        t = self.m["send_time"]
        keep = np.ones(len(t), bool) if locations is None else np.isin(self.m["send_loc"], locations)
        if t0 is not None:
            keep &= t >= t0
        if t1 is not None:
            keep &= t < t1
        return {c: self.m[c][keep] for c in (columns or self.m)}


class _Recording(GraphBuilder):
    def nodes(self, loc, time, kind, priority=None, copy=False):
        self.__dict__.setdefault("seen", []).append((kind, np.asarray(time).copy()))
        return super().nodes(loc, time, kind, priority, copy)


def _pairs(window, channel=(0, 1)):
    builder = _Recording(2, np.array([0, 1]))
    reader = _Reader()
    stats = add_messages(builder, reader, 2, window=window)
    sends = next(t for k, t in builder.seen if k == SEND)
    recvs = next(t for k, t in builder.seen if k == RECV)
    good = set(reader.m["send_time"][reader.m["send_loc"] == 1].tolist())
    pairs = sorted((s, r) for s, r in zip(sends.tolist(), recvs.tolist()) if (s in good) == (channel == (1, 0)))
    return stats, pairs


def test_whole_run_pairs_each_send_with_its_receive():
    stats, pairs = _pairs(None)
    # half of the 20 real receives were lost to the placeholders: sends 0-9 find theirs
    assert pairs == [(10 * k * MS, 10 * k * MS + MS) for k in range(N // 2)]
    assert stats.backwards == 0 and stats.placeholders == N // 2 and stats.unmatched == N // 2


def test_window_pairs_as_the_whole_run():
    stats, pairs = _pairs((50 * MS, 100 * MS))
    assert pairs == [(10 * k * MS, 10 * k * MS + MS) for k in range(5, 10)]
    # was: sends 5-9 paired with the receives of sends 3 and 4, both "received before sent"
    assert stats.backwards == 0
    assert stats.matched == 10          # 5 repaired, 5 of the sound channel
    # counted for the window only: the placeholders held by sends 5-9 (rows 5, 7, 9)
    assert stats.placeholders == 3 and stats.repaired_channels == 1 and stats.unmatched == 0
    # the sound channel keeps the window's own rows
    _, good = _pairs((50 * MS, 100 * MS), channel=(1, 0))
    assert good == [(10 * k * MS + 5 * MS, 10 * k * MS + 6 * MS) for k in range(5, 10)]


@pytest.mark.shared
def test_heat_2x2_window_has_no_backward_messages(shared_traces, tmp_path):
    import popview
    from popview.analysis.focus import Focus
    exp = popview.open(shared_traces / "popview-heat/extrae/hyb_2x2/hyb_2x2.prv", cache_dir=tmp_path)
    tree = exp.metrics("pop-mpi", Focus.parse("window:1:2"))
    notes = " ".join(tree.notes)
    assert "before they were sent" not in notes, notes          # 33 on the old code
    assert "33 receives from MPI_PROC_NULL" in notes
