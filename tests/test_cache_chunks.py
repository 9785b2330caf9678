"""Columns written by compressed chunks read back as ordinary Zstd datasets."""
from __future__ import annotations

import h5py
import hdf5plugin
import numpy as np
import pytest

from popview.cache.chunks import ChunkedWriter
from popview.cache.writer import create_column


@pytest.mark.parametrize("n", [0, 1, 1000, 4096, 4097, 10_000])
def test_pieces_of_any_size_read_back(tmp_path, monkeypatch, n):
    from popview.cache import schema

    monkeypatch.setattr(schema, "CHUNK", 1024)
    data = np.random.default_rng(n).integers(-2**40, 2**40, n)
    with h5py.File(tmp_path / "c.h5", "w") as f:
        ds = create_column(f, "x", np.int64, n)
        out = ChunkedWriter(ds)
        for piece in np.array_split(data, 7):
            out.write(piece)
        out.close()
    with h5py.File(tmp_path / "c.h5", "r") as f:
        np.testing.assert_array_equal(f["x"][:], data)
        assert f["x"][n // 3:n // 2].tolist() == data[n // 3:n // 2].tolist()


def test_rows_of_a_table_without_shuffle(tmp_path):
    data = np.arange(3000 * 5, dtype=np.int64).reshape(3000, 5)
    with h5py.File(tmp_path / "t.h5", "w") as f:
        ds = f.create_dataset("t", shape=data.shape, dtype=np.int64, chunks=(256, 5), **hdf5plugin.Zstd(clevel=3))
        out = ChunkedWriter(ds)
        out.write(data[:1000])
        out.write(data[1000:])
        out.close()
    with h5py.File(tmp_path / "t.h5", "r") as f:
        np.testing.assert_array_equal(f["t"][:], data)


def test_too_few_or_too_many_rows_are_errors(tmp_path):
    with h5py.File(tmp_path / "e.h5", "w") as f:
        short = ChunkedWriter(create_column(f, "short", np.int32, 100))
        short.write(np.zeros(70, np.int32))
        with pytest.raises(ValueError, match="30 rows never written"):
            short.close()
        long = ChunkedWriter(create_column(f, "long", np.int32, 10))
        with pytest.raises(ValueError, match="more rows"):
            long.write(np.zeros(11, np.int32))


def test_other_filters_are_refused(tmp_path):
    with h5py.File(tmp_path / "g.h5", "w") as f:
        ds = f.create_dataset("g", shape=(10,), dtype=np.int32, chunks=(5,), compression="gzip")
        with pytest.raises(ValueError, match="not written by chunks"):
            ChunkedWriter(ds)


def test_written_rows_are_let_go_once_their_chunks_are_stored(tmp_path):
    """Chunks are compressed from views of the rows (no copy), so the rows live on only
    while at most AHEAD of their chunks wait: writing more releases them."""
    import gc
    import weakref

    chunk = 65536
    more = ChunkedWriter.AHEAD + 1
    with h5py.File(tmp_path / "w.h5", "w") as f:
        out = ChunkedWriter(create_column(f, "x", np.int64, (3 + more) * chunk))
        rows = np.arange(3 * chunk, dtype=np.int64)
        alive = weakref.ref(rows)
        out.write(rows)
        del rows
        out.write(np.arange(3 * chunk, (3 + more) * chunk, dtype=np.int64))
        gc.collect()
        assert alive() is None, "rows kept alive after their chunks were stored"
        out.close()
        np.testing.assert_array_equal(f["x"][:], np.arange((3 + more) * chunk))


def test_sparse_index_keeps_no_view_of_the_pieces():
    import gc
    import weakref

    from popview.cache.sparse import SparseIndex

    index = SparseIndex("states")
    piece = {"loc": np.zeros(10_000, np.int32), "begin": np.arange(10_000, dtype=np.int64),
             "end": np.arange(10_000, dtype=np.int64) + 1, "state": np.ones(10_000, np.int32)}
    alive = weakref.ref(piece["begin"])
    index.add(0, piece)
    del piece
    gc.collect()
    assert alive() is None


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.float32, np.int64, np.float64])
def test_every_item_size_is_shuffled_as_hdf5_unshuffles_it(tmp_path, dtype):
    data = (np.random.default_rng(3).integers(-100, 100, 3000) * 1.5).astype(dtype)
    with h5py.File(tmp_path / "c.h5", "w") as f:
        ds = f.create_dataset("x", shape=(3000,), dtype=dtype, chunks=(1000,), shuffle=True,
                              **hdf5plugin.Zstd(clevel=3))
        out = ChunkedWriter(ds)
        out.write(data)
        out.close()
    with h5py.File(tmp_path / "c.h5", "r") as f:
        np.testing.assert_array_equal(f["x"][:], data)


def test_a_fast_negative_level_is_written_at_that_level(tmp_path):
    from popview.cache.chunks import pipeline

    data = np.arange(50_000, dtype=np.int64) // 7
    with h5py.File(tmp_path / "c.h5", "w") as f:
        ds = f.create_dataset("x", shape=data.shape, dtype=np.int64, chunks=(4096,), **hdf5plugin.Zstd(clevel=-1))
        assert pipeline(ds) == (False, -1, False)
        out = ChunkedWriter(ds)
        out.write(data)
        out.close()
    with h5py.File(tmp_path / "c.h5", "r") as f:
        np.testing.assert_array_equal(f["x"][:], data)


def test_table_columns_of_8_bytes_at_the_fast_level_4_bytes_at_level_1(tmp_path):
    """The times and values (8 bytes an item) at Zstd -1, 1.3-1.5x faster to write than 1 for the
    same size of times; the locations, types and states at 1 (-1 left the event types three times
    larger). What ChunkedWriter compresses with (pipeline) and HDF5 itself reads back."""
    from popview.cache.chunks import pipeline

    data = np.arange(50_000, dtype=np.int64) * 1000 // 7
    with h5py.File(tmp_path / "c.h5", "w") as f:
        for name, dtype, level in (("t", np.int64, -1), ("v", np.uint64, -1), ("loc", np.int32, 1),
                                   ("d", np.int16, 1)):
            ds = create_column(f, name, dtype, len(data))
            assert pipeline(ds) == (True, level, True), name
            out = ChunkedWriter(ds)
            out.write(data.astype(dtype))
            out.close()
    with h5py.File(tmp_path / "c.h5", "r") as f:
        for name, dtype in (("t", np.int64), ("v", np.uint64), ("loc", np.int32), ("d", np.int16)):
            np.testing.assert_array_equal(f[name][:], data.astype(dtype))


def test_checksummed_chunks_are_what_hdf5_verifies(tmp_path):
    """Chunks written directly carry the Fletcher32 checksum HDF5 itself computes
    (a wrong one would fail every read)."""
    from popview.cache.chunks import pipeline
    from popview.cache.writer import create_column

    data = np.random.default_rng(3).integers(-10**12, 10**12, 200_001)
    with h5py.File(tmp_path / "c.h5", "w") as f:
        ds = create_column(f, "x", np.int64, len(data))
        assert pipeline(ds) == (True, -1, True)     # 8-byte columns at the fast level
        out = ChunkedWriter(ds)
        out.write(data)
        out.close()
    with h5py.File(tmp_path / "c.h5", "r") as f:
        np.testing.assert_array_equal(f["x"][:], data)      # HDF5 verifies each chunk's checksum
    raw = bytearray((tmp_path / "c.h5").read_bytes())
    with h5py.File(tmp_path / "c.h5", "r") as f:
        start = f["x"].id.get_chunk_info(1).byte_offset
    raw[start + 10] ^= 0x04
    (tmp_path / "c.h5").write_bytes(bytes(raw))
    with h5py.File(tmp_path / "c.h5", "r") as f:
        with pytest.raises(OSError):
            f["x"][:]


def test_fletcher32_is_hdf5s():
    """The blockwise Fletcher32 equals the checksum HDF5 stores, on lengths around its blocks."""
    from popview.cache.integrity import fletcher32

    rng = np.random.default_rng(5)
    with h5py.File("fletcher.h5", "w", driver="core", backing_store=False) as f:
        for length in (1, 2, 3, 511, 512, 513, 719, 720, 721, 8193, 100_001):
            for data in (rng.integers(0, 256, length, dtype=np.uint8), np.zeros(length, np.uint8),
                         np.full(length, 255, np.uint8)):
                ds = f.create_dataset(f"d{length}-{data[0]}-{len(f)}", data=data, chunks=(length,), fletcher32=True)
                raw = ds.id.read_direct_chunk((0,))[1]
                assert fletcher32(np.frombuffer(raw[:-4], np.uint8)) == int.from_bytes(raw[-4:], "little")


def test_chunks_of_different_sizes_shuffled_in_one_reused_buffer(tmp_path):
    """Each compression thread shuffles into one buffer it keeps: a longer chunk after a
    shorter one, and one of another item size, are still stored as HDF5 reads them."""
    from popview.cache import chunks

    with h5py.File(tmp_path / "c.h5", "w") as f:
        data = {}
        for name, dtype, rows in (("a", np.int32, 700), ("b", np.int64, 1000), ("c", np.int32, 3000)):
            data[name] = np.random.default_rng(len(name) + rows).integers(-1 << 30, 1 << 30, 3000).astype(dtype)
            ds = f.create_dataset(name, shape=(3000,), dtype=dtype, chunks=(rows,), shuffle=True,
                                  **hdf5plugin.Zstd(clevel=1))
            out = ChunkedWriter(ds)
            out.write(data[name])
            out.close()
    with h5py.File(tmp_path / "c.h5", "r") as f:
        for name, values in data.items():
            np.testing.assert_array_equal(f[name][:], values)
    assert chunks.byte_shuffle(np.arange(3, dtype=np.int32), np.full(20, 7, np.uint8)).tolist() == \
        [0, 1, 2] + [0] * 9


@pytest.mark.parametrize("name, dtype", [("time", np.int64), ("type", np.int32), ("value", np.int64), ("loc", np.int32)])
def test_the_events_types_are_stored_unshuffled(tmp_path, monkeypatch, name, dtype):
    """The events' types without the byte shuffle (writer.UNSHUFFLED), the other
    columns with it: written by chunks, each reads back as h5py and the threaded chunk reads
    read it (fails if a column's pipeline and its encoding disagree)."""
    from popview.cache import chunk_reads, chunks, schema

    monkeypatch.setattr(schema, "CHUNK", 1024)
    monkeypatch.setattr(chunk_reads, "MIN_CHUNKS", 1)
    rng = np.random.default_rng(5)
    data = np.cumsum(rng.integers(0, 1 << 20, 10_000)).astype(dtype) if dtype == np.int64 else \
        rng.integers(0, 40, 10_000).astype(dtype)
    with h5py.File(tmp_path / "u.h5", "w") as f:
        ds = create_column(f, name, dtype, len(data))
        out = ChunkedWriter(ds)
        for piece in np.array_split(data, 3):
            out.write(piece)
        out.close()
        shuffle, level, checksum = chunks.pipeline(ds)
    assert (shuffle, level, checksum) == ((False, -1, True) if name == "type" else
                                          (True, -1 if dtype == np.int64 else 1, True))
    with h5py.File(tmp_path / "u.h5", "r") as f:
        np.testing.assert_array_equal(f[name][:], data)
        np.testing.assert_array_equal(chunk_reads.read_rows(f[name], 1000, 9500), data[1000:9500])
