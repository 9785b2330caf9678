"""Point-to-point edges: a receive completes no earlier than its send started.

The send node sits at the logical send time (the send call's entry, also for
an isend); the receive node at the physical receive time, which lies inside
the call where the data arrived (the recv, or the wait of an irecv).

Recorded pairs are not always right. Extrae pairs the receive of a
message from MPI_PROC_NULL (size 0, tag MPI_ANY_TAG written as 4294967295)
with a real send, and every later send on that channel then lands on the
previous receive: messages seem received before they were sent. On a
channel (sender, receiver) whose records hold such a placeholder or a
message received before it was sent, the placeholder receives are dropped
and the k-th send is paired with the k-th receive (MPI messages between two
ranks do not overtake each other); halves left over are unmatched, and a
pair still received before it was sent (clock skew between nodes) is not
followed: it would make a receive wait for the future.

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

_COLUMNS = ["send_loc", "recv_loc", "send_time", "recv_phys", "recv_time", "size", "tag"]
PLACEHOLDER_TAGS = (-1, 4294967295)     # MPI_ANY_TAG: what a receive from MPI_PROC_NULL reports
# What the OTF2 reader says when it leaves out halves of messages it could not pair.
_LEFT_OUT = re.compile(r"(\d+) MPI sends and (\d+) receives without a matching partner")
_RENDEZVOUS_COLUMNS = _COLUMNS + ["send_phys"]


@dataclass
class MessageStats:
    matched: int = 0
    unmatched: int = 0       # a side is missing or a time is unknown
    backwards: int = 0       # received before it was sent (clock skew between nodes): not followed
    placeholders: int = 0    # receives from MPI_PROC_NULL paired with a send: dropped
    repaired_channels: int = 0   # channels whose sends and receives were paired again in order


def add_messages(builder: GraphBuilder, reader, n_loc: int, rendezvous_bytes: int | None = None,
                 window: tuple[int, int] | None = None, repair: bool = True) -> MessageStats:
    """Message edges; with a `window` only messages sent and received inside it
    (a send before it carries a zero clock, a receive after it changes nothing).
    `repair`: pair inconsistent channels again and drop messages received
    before they were sent (else they are followed as recorded, as Dimemas does)."""
    stats = MessageStats(unmatched=_left_out_by_reader(reader.definitions))
    if not reader.has("messages"):
        return stats
    cols = _COLUMNS if rendezvous_bytes is None else _RENDEZVOUS_COLUMNS
    whole = window is None
    if whole:
        m = reader.read("messages", columns=cols)
    else:
        m = reader.read("messages", t0=window[0], t1=window[1], columns=cols)
        inside = m["recv_phys"] < window[1]
        m = {k: v[inside] for k, v in m.items()}
        if repair and _needs_repair(m):
            # A receive can sit on the row of a later send (the placeholders shift a channel's
            # pairs): such a channel is paired again from its first message, then cut to the
            # window; only its sender's rows are read whole
            bad = _channel(m)[_placeholders(m) | (m["recv_phys"] < m["send_time"])]
            senders = np.unique(m["send_loc"][np.isin(_channel(m), bad)])
            full = reader.read("messages", locations=[int(x) for x in senders], columns=cols)
            mine = np.isin(_channel(full), bad)
            others = ~np.isin(_channel(m), bad)
            m, whole = {k: np.concatenate([m[k][others], full[k][mine]]) for k in m}, True
    s_loc, r_loc = m["send_loc"], m["recv_loc"]
    s_t, r_t = m["send_time"], m["recv_phys"]
    ok = (s_loc >= 0) & (s_loc < n_loc) & (r_loc >= 0) & (r_loc < n_loc) & (s_t >= 0) & (r_t >= 0)
    counted = window if whole and window is not None else None
    stats.unmatched += int((~ok & _sent_in(m, counted)).sum())
    if not ok.all():
        m = {k: v[ok] for k, v in m.items()}
        s_loc, r_loc, s_t, r_t = m["send_loc"], m["recv_loc"], m["send_time"], m["recv_phys"]
    if repair:
        m, stats.placeholders, stats.repaired_channels, left = repair_pairs(m, counted)
        stats.unmatched += left
    if counted is not None:
        keep = _sent_in(m, counted) & (m["recv_phys"] < counted[1])
        m = {k: v[keep] for k, v in m.items()}
    s_loc, r_loc, s_t, r_t = m["send_loc"], m["recv_loc"], m["send_time"], m["recv_phys"]
    forward = r_t >= s_t
    stats.backwards = int((~forward).sum())
    if stats.backwards and repair:
        m = {k: v[forward] for k, v in m.items()}
        s_loc, r_loc, s_t, r_t = m["send_loc"], m["recv_loc"], m["send_time"], m["recv_phys"]
    stats.matched = len(s_loc)
    sends = builder.nodes(s_loc, s_t, SEND)
    recvs = builder.nodes(r_loc, r_t, RECV)
    cross = builder.loc_process[s_loc] != builder.loc_process[r_loc]
    builder.edges(sends, recvs, cross)
    if rendezvous_bytes is not None:
        big = m["size"] >= rendezvous_bytes
        posted = builder.nodes(r_loc[big], np.maximum(m["recv_time"][big], 0), RECV_POSTED)
        done = builder.nodes(s_loc[big], np.maximum(m["send_phys"][big], s_t[big]), SEND_DONE)
        builder.edges(posted, done, cross[big], recorded=False)
    return stats


def _placeholders(m: dict) -> np.ndarray:
    return np.isin(m["tag"], PLACEHOLDER_TAGS) & (m["size"] == 0)


def _channel(m: dict) -> np.ndarray:
    return m["send_loc"].astype(np.int64) << 32 | m["recv_loc"].astype(np.int64)


def _needs_repair(m: dict) -> bool:
    return bool((_placeholders(m) | (m["recv_phys"] < m["send_time"])).any())


def _sent_in(m: dict, window: tuple[int, int] | None) -> np.ndarray:
    """Rows whose send lies in `window` (all rows without one)."""
    t = m["send_time"]
    if window is None:
        return np.ones(len(t), bool)
    return (t >= window[0]) & (t < window[1])


def repair_pairs(m: dict, window: tuple[int, int] | None = None) -> tuple[dict, int, int, int]:
    """Pairs of the inconsistent channels made again in order (see the module
    doc): (messages, placeholder receives dropped, channels repaired, halves
    left without a partner). With a `window` the three counts are those of the
    window: rows sent in it, halves whose own time lies in it."""
    placeholder = _placeholders(m)
    _, channel = np.unique(m["send_loc"].astype(np.int64) << 32 | m["recv_loc"].astype(np.int64),
                           return_inverse=True)
    channel = channel.ravel().astype(np.int64)
    bad = np.unique(channel[placeholder | (m["recv_phys"] < m["send_time"])])
    if len(bad) == 0:
        return m, 0, 0, 0
    redo = np.isin(channel, bad)
    keep = {k: v[~redo] for k, v in m.items()}
    sends = np.flatnonzero(redo)
    recvs = np.flatnonzero(redo & ~placeholder)
    s_order = sends[np.lexsort((m["send_time"][sends], channel[sends]))]
    r_order = recvs[np.lexsort((m["recv_phys"][recvs], m["recv_time"][recvs], channel[recvs]))]
    s_key = _rank_key(channel[s_order])
    r_key = _rank_key(channel[r_order])
    _, si, ri = np.intersect1d(s_key, r_key, assume_unique=True, return_indices=True)
    s_rows, r_rows = s_order[si], r_order[ri]
    paired = {k: v[s_rows].copy() for k, v in m.items()}
    for k in ("recv_loc", "recv_time", "recv_phys"):
        paired[k] = m[k][r_rows]
    for k in ("size", "tag"):
        paired[k] = np.maximum(m[k][s_rows], m[k][r_rows]) if k == "size" else m[k][r_rows]
    out = {k: np.concatenate([keep[k], paired[k]]) for k in m}
    if window is None:
        left = len(sends) + len(recvs) - 2 * len(s_rows)
        return out, int(placeholder[redo].sum()), len(bad), left
    sent_in = _sent_in(m, window)
    r_t = m["recv_phys"]
    recv_in = (r_t >= window[0]) & (r_t < window[1])
    left = int(sent_in[np.setdiff1d(sends, s_rows)].sum() + recv_in[np.setdiff1d(recvs, r_rows)].sum())
    channels = len(np.unique(channel[redo & sent_in]))
    return out, int((placeholder & redo & sent_in).sum()), channels, left


def _rank_key(channel: np.ndarray) -> np.ndarray:
    """channel << 32 | position within the channel (rows sorted by channel)."""
    if len(channel) == 0:
        return channel
    start = np.r_[0, np.flatnonzero(channel[1:] != channel[:-1]) + 1]
    pos = np.arange(len(channel)) - np.repeat(start, np.diff(np.r_[start, len(channel)]))
    return channel * (1 << 32) + pos


def _left_out_by_reader(defs) -> int:
    """Send and receive halves the reader could not pair (and so never stored)."""
    total = 0
    for warning in defs.warnings:
        m = _LEFT_OUT.search(warning)
        if m:
            total += int(m.group(1)) + int(m.group(2))
    return total
