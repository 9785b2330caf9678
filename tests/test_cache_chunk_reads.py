"""Columns read by whole chunks in threads equal h5py's reads, and a damaged chunk still fails."""
from __future__ import annotations

import h5py
import hdf5plugin
import numpy as np
import pytest

from popview import jit
from popview.cache import chunk_reads
from popview.cache.chunk_reads import read_rows
from popview.cache.writer import compression


def _column(path, data, chunk=1000, **filters):
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=data, chunks=(chunk,), maxshape=(None,), **(filters or compression()))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.uint8, np.float64])
@pytest.mark.parametrize("lo,hi", [(0, None), (0, 10_000), (1, 9_999), (999, 3001), (2500, 7777), (0, 3000)])
def test_any_rows_read_as_h5py_reads_them(tmp_path, dtype, lo, hi):
    data = np.random.default_rng(7).integers(0, 120, 10_000).astype(dtype).cumsum().astype(dtype)
    _column(tmp_path / "c.h5", data)
    with h5py.File(tmp_path / "c.h5", "r") as f:
        got = read_rows(f["x"], lo, hi)
        assert got.dtype == data.dtype
        np.testing.assert_array_equal(got, data[lo:hi])


def test_interpreted_kernels_read_the_same(tmp_path):
    data = np.arange(12_345, dtype=np.int64) * 3
    _column(tmp_path / "c.h5", data)
    with h5py.File(tmp_path / "c.h5", "r") as f, jit.interpreted():
        np.testing.assert_array_equal(read_rows(f["x"], 17, 12_000), data[17:12_000])


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16])
def test_ranges_read_as_h5py_reads_them(tmp_path, dtype):
    """Many short ranges (in one chunk, across two, sharing a chunk, out of order, empty)
    read together; through h5py where the pipeline is another."""
    data = np.random.default_rng(3).integers(0, 120, 10_000).astype(dtype).cumsum().astype(dtype)
    ranges = [(5, 17), (990, 1010), (1020, 1500), (4000, 4000), (9990, 10_000), (2000, 2001), (0, 3)]
    want = np.concatenate([data[lo:hi] for lo, hi in ranges])
    _column(tmp_path / "c.h5", data)
    _column(tmp_path / "g.h5", data, compression="gzip")
    with h5py.File(tmp_path / "c.h5", "r") as f, h5py.File(tmp_path / "g.h5", "r") as g:
        for dset in (f["x"], g["x"]):
            got = chunk_reads.read_ranges(dset, ranges)
            assert got.dtype == data.dtype
            np.testing.assert_array_equal(got, want)
        assert len(chunk_reads.read_ranges(f["x"], [])) == 0


def test_other_pipelines_and_short_reads_go_through_h5py(tmp_path, monkeypatch):
    calls = []
    real = chunk_reads._decoded
    monkeypatch.setattr(chunk_reads, "_decoded", lambda *a: calls.append(a) or real(*a))
    data = np.arange(10_000, dtype=np.int32)
    _column(tmp_path / "g.h5", data, compression="gzip")
    _column(tmp_path / "z.h5", data, **hdf5plugin.Zstd(clevel=1))       # no shuffle, no checksum
    with h5py.File(tmp_path / "g.h5", "r") as g, h5py.File(tmp_path / "z.h5", "r") as z:
        np.testing.assert_array_equal(read_rows(g["x"]), data)
        assert not calls
        np.testing.assert_array_equal(read_rows(z["x"], 10, 9000), data[10:9000])
        assert len(calls) == 1
        np.testing.assert_array_equal(read_rows(z["x"], 10, 1500), data[10:1500])   # two chunks: h5py
        assert len(calls) == 1


def test_a_damaged_chunk_fails_as_hdf5_reports_it(tmp_path):
    data = np.arange(10_000, dtype=np.int64) * 7
    path = tmp_path / "d.h5"
    _column(path, data)
    with h5py.File(path, "r") as f:
        offset = f["x"].id.get_chunk_info(5).byte_offset
    with open(path, "r+b") as fh:                 # one byte of chunk 5's stored bytes flipped
        fh.seek(offset + 10)
        byte = fh.read(1)
        fh.seek(offset + 10)
        fh.write(bytes([byte[0] ^ 0xFF]))
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(read_rows(f["x"], 0, 4000), data[:4000])   # chunks 0-3 intact
        with pytest.raises(OSError):
            read_rows(f["x"])


def test_chunks_not_stored_read_as_fill_values(tmp_path):
    with h5py.File(tmp_path / "f.h5", "w") as f:
        ds = f.create_dataset("x", shape=(10_000,), dtype=np.int64, chunks=(1000,), **compression())
        ds[:3000] = np.arange(3000)
    with h5py.File(tmp_path / "f.h5", "r") as f:
        got = read_rows(f["x"])
    assert got[:3000].tolist() == list(range(3000)) and not got[3000:].any()


def test_the_kernels_it_calls_are_in_the_ahead_of_time_list(tmp_path, monkeypatch):
    """A read of a larger trace's columns must not import numba where the module of kernels
    compiled ahead of time exists: its list holds the unshuffle kernels with the types used."""
    import json

    from popview import aot

    listed = {(m, f, aot._frozen(args)) for m, f, args in aot.entries(json.loads(aot.MANIFEST.read_text())["scenarios"])}
    called = []
    for name in ("_unshuffle8", "_unshuffle4"):
        real = getattr(chunk_reads, name)
        monkeypatch.setattr(chunk_reads, name, lambda *a, _n=name, _r=real: called.append((_n, aot.signature_of(a)))
                            or _r(*a))
    for dtype in (np.int64, np.int32):
        _column(tmp_path / f"{np.dtype(dtype).name}.h5", np.arange(10_000, dtype=dtype))
        with h5py.File(tmp_path / f"{np.dtype(dtype).name}.h5", "r") as f:
            read_rows(f["x"], 5, 9_000)          # whole chunks and partial ones
    assert {n for n, _ in called} == {"_unshuffle8", "_unshuffle4"}
    for name, types in called:
        assert ("popview.cache.chunk_reads", name, types) in listed, (name, types)


@pytest.mark.parametrize("how", ["rows", "ranges"])
def test_the_chunks_held_at_once_are_bounded(tmp_path, monkeypatch, how):
    """The stored chunks are read ahead of their decoding by a few only: reading them all
    before waiting held the whole column's compressed bytes beside it (a 580 MB column of
    poorly compressible values: about as much again)."""
    import threading
    import time

    data = np.random.default_rng(3).integers(0, 1 << 62, 200_000)
    _column(tmp_path / "c.h5", data)
    lock, held, most = threading.Lock(), [0], [0]
    real_stored, real_decode = chunk_reads._stored, chunk_reads._decode_into

    def stored(*a):
        got = real_stored(*a)
        with lock:
            held[0] += 1
            most[0] = max(most[0], held[0])
        return got

    def decode(*a):
        time.sleep(0.002)                  # decoding slower than reading: the reads run ahead
        try:
            return real_decode(*a)
        finally:
            with lock:
                held[0] -= 1

    monkeypatch.setattr(chunk_reads, "_stored", stored)
    monkeypatch.setattr(chunk_reads, "_decode_into", decode)
    with h5py.File(tmp_path / "c.h5", "r") as f:
        if how == "rows":
            np.testing.assert_array_equal(read_rows(f["x"]), data)
        else:
            got = chunk_reads.read_ranges(f["x"], [(0, 100_000), (100_000, 200_000)])
            np.testing.assert_array_equal(got, data)
    assert held[0] == 0
    assert most[0] <= getattr(chunk_reads, "AHEAD", 16) + 1, f"{most[0]} of 200 chunks held at once"


def test_a_read_after_the_main_thread_ended_is_h5pys(tmp_path):
    """Once the main thread has ended, concurrent.futures takes no more jobs ('cannot schedule
    new futures after shutdown'): a thread still reading then (a window's lane as the window
    closes, a script's thread) failed where h5py's read works; it reads through h5py."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import threading, time
        import numpy as np, h5py, hdf5plugin
        from popview.cache.writer import compression
        from popview.cache import chunk_reads
        from popview.cache.chunk_reads import read_rows
        with h5py.File({str(tmp_path / "s.h5")!r}, "w") as f:
            f.create_dataset("x", data=np.arange(100_000), chunks=(1000,), **compression())
        f = h5py.File({str(tmp_path / "s.h5")!r}, "r")
        read_rows(f["x"])          # the pool is there
        def late():
            time.sleep(0.3)        # the main thread has ended by now
            try:
                print("read", int(read_rows(f["x"], 10, 90_000).sum()),
                      int(chunk_reads.read_ranges(f["x"], [(10, 50_000), (50_000, 90_000)]).sum()), flush=True)
            except Exception as exc:
                print("failed", type(exc).__name__, exc, flush=True)
        threading.Thread(target=late).start()
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == f"read {sum(range(10, 90_000))} {sum(range(10, 90_000))}", done.stdout + done.stderr


def test_a_read_inside_the_decoding_threads_does_not_wait_for_them(tmp_path):
    """A read from one of the pool's own threads (a job that reads a column) decodes in that
    thread: waiting there for jobs of the same pool deadlocked once every thread did so."""
    from popview.cache import chunks

    data = np.arange(50_000, dtype=np.int64)
    _column(tmp_path / "c.h5", data)
    pool = chunks._threads()
    with h5py.File(tmp_path / "c.h5", "r") as f:
        jobs = [pool.submit(read_rows, f["x"]) for _ in range(pool._max_workers * 2)]
        jobs += [pool.submit(chunk_reads.read_ranges, f["x"], [(0, 50_000)]) for _ in range(pool._max_workers * 2)]
        for job in jobs:
            np.testing.assert_array_equal(job.result(timeout=60), data)
        ranges = [(5, 100), (20_000, 45_000)]
        jobs = [pool.submit(chunk_reads.read_ranges, f["x"], ranges) for _ in range(pool._max_workers * 2)]
        for job in jobs:       # read_ranges too
            np.testing.assert_array_equal(job.result(timeout=60), np.concatenate([data[5:100], data[20_000:45_000]]))
