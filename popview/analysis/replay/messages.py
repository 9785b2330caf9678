"""Point-to-point edges: a receive completes no earlier than its send started.

The send node sits at the logical send time (the send call's entry, also for
an isend); the receive node at the physical receive time, which lies inside
the call where the data arrived (the recv, or the wait of an irecv).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from popview.analysis.replay.graph import RECV, SEND, GraphBuilder

_COLUMNS = ["send_loc", "recv_loc", "send_time", "recv_phys"]


@dataclass
class MessageStats:
    matched: int = 0
    unmatched: int = 0       # a side is missing or a time is unknown
    backwards: int = 0       # received before it was sent (clock skew between nodes)


def add_messages(builder: GraphBuilder, reader, n_loc: int) -> MessageStats:
    stats = MessageStats()
    if not reader.has("messages"):
        return stats
    m = reader.read("messages", columns=_COLUMNS)
    s_loc, r_loc = m["send_loc"], m["recv_loc"]
    s_t, r_t = m["send_time"], m["recv_phys"]
    ok = (s_loc >= 0) & (s_loc < n_loc) & (r_loc >= 0) & (r_loc < n_loc) & (s_t >= 0) & (r_t >= 0)
    stats.unmatched = int((~ok).sum())
    if not ok.all():
        s_loc, r_loc, s_t, r_t = s_loc[ok], r_loc[ok], s_t[ok], r_t[ok]
    stats.matched = len(s_loc)
    stats.backwards = int((r_t < s_t).sum())
    sends = builder.nodes(s_loc, s_t, SEND)
    recvs = builder.nodes(r_loc, r_t, RECV)
    proc = builder.loc_process
    builder.edges(sends, recvs, proc[s_loc] != proc[r_loc])
    return stats
