"""Point-to-point edges: a receive completes no earlier than its send started.

The send node sits at the logical send time (the send call's entry, also for
an isend); the receive node at the physical receive time, which lies inside
the call where the data arrived (the recv, or the wait of an irecv).

Optionally (the Dimemas-compatible model) messages of at least
`rendezvous_bytes` also hold the sender: its send completes (at the
physical send time) no earlier than the receive was posted (the logical
receive time: the recv or irecv call).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from popview.analysis.replay.graph import RECV, RECV_POSTED, SEND, SEND_DONE, GraphBuilder

_COLUMNS = ["send_loc", "recv_loc", "send_time", "recv_phys"]
# What the OTF2 reader says when it leaves out halves of messages it could not pair.
_LEFT_OUT = re.compile(r"(\d+) MPI sends and (\d+) receives without a matching partner")
_RENDEZVOUS_COLUMNS = _COLUMNS + ["send_phys", "recv_time", "size"]


@dataclass
class MessageStats:
    matched: int = 0
    unmatched: int = 0       # a side is missing or a time is unknown
    backwards: int = 0       # received before it was sent (clock skew between nodes)


def add_messages(builder: GraphBuilder, reader, n_loc: int, rendezvous_bytes: int | None = None,
                 window: tuple[int, int] | None = None) -> MessageStats:
    """Message edges; with a `window` only messages sent and received inside it
    (a send before it carries a zero clock, a receive after it changes nothing)."""
    stats = MessageStats(unmatched=_left_out_by_reader(reader.definitions))
    if not reader.has("messages"):
        return stats
    cols = _COLUMNS if rendezvous_bytes is None else _RENDEZVOUS_COLUMNS
    if window is None:
        m = reader.read("messages", columns=cols)
    else:
        m = reader.read("messages", t0=window[0], t1=window[1], columns=cols)
        inside = m["recv_phys"] < window[1]
        m = {k: v[inside] for k, v in m.items()}
    s_loc, r_loc = m["send_loc"], m["recv_loc"]
    s_t, r_t = m["send_time"], m["recv_phys"]
    ok = (s_loc >= 0) & (s_loc < n_loc) & (r_loc >= 0) & (r_loc < n_loc) & (s_t >= 0) & (r_t >= 0)
    stats.unmatched += int((~ok).sum())
    if not ok.all():
        m = {k: v[ok] for k, v in m.items()}
        s_loc, r_loc, s_t, r_t = m["send_loc"], m["recv_loc"], m["send_time"], m["recv_phys"]
    stats.matched = len(s_loc)
    stats.backwards = int((r_t < s_t).sum())
    sends = builder.nodes(s_loc, s_t, SEND)
    recvs = builder.nodes(r_loc, r_t, RECV)
    cross = builder.loc_process[s_loc] != builder.loc_process[r_loc]
    builder.edges(sends, recvs, cross)
    if rendezvous_bytes is not None:
        big = m["size"] >= rendezvous_bytes
        posted = builder.nodes(r_loc[big], np.maximum(m["recv_time"][big], 0), RECV_POSTED)
        done = builder.nodes(s_loc[big], np.maximum(m["send_phys"][big], s_t[big]), SEND_DONE)
        builder.edges(posted, done, cross[big])
    return stats


def _left_out_by_reader(defs) -> int:
    """Send and receive halves the reader could not pair (and so never stored)."""
    total = 0
    for warning in defs.warnings:
        m = _LEFT_OUT.search(warning)
        if m:
            total += int(m.group(1)) + int(m.group(2))
    return total
