"""The body is cut into whole-line blocks, whatever the line lengths and the compression."""
from __future__ import annotations

import gzip
import queue
import threading

import numpy as np
import pytest

from popview.readers.paraver import stream


def _blocks(path, skip):
    q: queue.Queue = queue.Queue()
    stream._blocks(path, skip, q, threading.Event())
    items = []
    while (item := q.get()) is not None:
        assert not isinstance(item, Exception), item
        items.append(item)
    return items


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("block", [7, 64, 1 << 20])
def test_blocks_are_whole_lines_in_order(tmp_path, monkeypatch, compress, block):
    monkeypatch.setattr(stream, "BLOCK", block)
    rng = np.random.default_rng(block)
    lines = [b"1:" + b"9" * int(n) for n in rng.integers(0, 40, 300)] + [b"2:" + b"5" * 100]
    head = b"#Paraver header\n"
    text = head + b"\n".join(lines) + b"\n" + b"3:1:2:unfinished"
    path = tmp_path / ("t.prv.gz" if compress else "t.prv")
    path.write_bytes(gzip.compress(text) if compress else text)
    items = _blocks(path, len(head))
    assert all(bytes(item[0]).endswith(b"\n") for item in items)
    assert b"".join(bytes(item[0]) for item in items) == text[len(head):] + b"\n"
    assert len(items[-1]) == 3 and items[-1][2] == "truncated"
    assert all(len(item) == 2 for item in items[:-1])


def test_the_end_of_a_whole_line_is_found_far_back():
    data = memoryview(b"x\n" + b"y" * 300_000)
    assert stream._after_last_newline(data, len(data)) == 2
    assert stream._after_last_newline(memoryview(b"zzz"), 3) == 0
    assert stream._after_last_newline(memoryview(b"a\nb\n"), 4) == 4
