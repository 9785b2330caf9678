"""The spill's 8-byte columns in 4 bytes a row where they fit (popview/cache/narrow.py):
every read of a narrow spill gives the rows a plain one gives, whatever the rows (a run
spanning more than 2^32 ns, values past 32 bits, backwards times, the sentinel itself),
through every way it is read (the sort's gather with or without a memory map, partial
reads, the raw copy the derived builders read, saved and loaded as another process
loads it), compiled and as Python; and a Paraver trace spilled narrow gives the cache the
rows kept in memory give."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview import jit
from popview.cache import narrow, runs, schema
from popview.cache.rawtables import RawTables, SortedCopy
from popview.cache.writer import PreparedChunk, _offsets, _Staging
from popview.readers.paraver import stream
from popview.testing import synthetic
from tests.cachecompare import assert_same_cache

I64 = np.iinfo(np.int64)


@pytest.fixture(params=["compiled", "python"])
def mode(request):
    with jit.interpreted(request.param == "python"):
        yield request.param


def _awkward_values(rng, n: int) -> np.ndarray:
    """Mostly small values, some past 32 bits either way, the extremes, and the sentinel."""
    v = rng.integers(-1000, 1000, n)
    pick = rng.random(n)
    v[pick < 0.02] = rng.integers(1 << 33, 1 << 50, int((pick < 0.02).sum()))
    v[(pick >= 0.02) & (pick < 0.03)] = -rng.integers(1 << 32, 1 << 40, int(((pick >= 0.02) & (pick < 0.03)).sum()))
    v[:4] = [I64.min, I64.max, narrow.SENTINEL + narrow.UNBASED_LO, narrow.MAX_OFFSET + narrow.UNBASED_LO]
    return v


def test_encode_decode_round_trip(mode):
    rng = np.random.default_rng(1)
    starts = np.array([0, 5, 5000, 9000], np.int64)
    t = np.sort(rng.integers(0, 1 << 20, 10_000))
    t[5000:9000] = np.sort(rng.integers(0, 1 << 34, 4000))            # a run spanning 2^34 ns: past 4 bytes
    t[9500] = t[9000] - 1                                              # a time before its run's first
    t[9600] = t[9000] + narrow.SENTINEL                                 # the sentinel's own offset
    t[9601] = t[9000] + narrow.MAX_OFFSET                               # the largest offset that fits
    bases = t[starts]
    got = narrow.encode(t, starts, bases, 0)
    assert got is None            # the long run's rows are too many exceptions: kept 8 bytes wide
    t[5000:9000] = t[5000] + np.arange(4000)
    words, rows, values = narrow.encode(t, starts, bases, 0)
    assert words.dtype == np.uint32 and set(rows.tolist()) == {9500, 9600}
    assert np.array_equal(narrow.decode(words, starts, bases, 0, rows, values), t)

    v = _awkward_values(rng, 100_000)
    got = narrow.encode(v, starts, None, narrow.UNBASED_LO)
    assert got is None            # 3 % of the rows past 32 bits: wide
    small = _awkward_values(np.random.default_rng(2), 100_000)
    small[np.abs(small) > 5000] = 3
    small[:4] = [I64.min, I64.max, narrow.SENTINEL + narrow.UNBASED_LO, narrow.MAX_OFFSET + narrow.UNBASED_LO]
    words, rows, values = narrow.encode(small, starts, None, narrow.UNBASED_LO)
    assert rows.tolist() == [0, 1, 2]
    assert np.array_equal(narrow.decode(words, starts, None, narrow.UNBASED_LO, rows, values), small)


@pytest.mark.parametrize("distinct", [1, 255, 256, 5000])
def test_codes_round_trip(mode, distinct):
    """Event types as 1-byte codes into the chunk's table of them, up to MAX_CODES (255) of
    them, the extremes of int32 included; more stay 4 bytes wide."""
    rng = np.random.default_rng(distinct)
    pool = rng.integers(-(1 << 31), 1 << 31, distinct)
    pool[0] = np.iinfo(np.int32).min
    pool[-1] = np.iinfo(np.int32).max
    pool = np.unique(pool)
    col = np.concatenate((pool, rng.choice(pool, 20_000))).astype(np.int32)
    got = narrow.encode_codes(col)
    if len(pool) > narrow.MAX_CODES:
        assert got is None
        return
    codes, table = got
    assert codes.dtype == np.uint8 and sorted(table.tolist()) == sorted(pool.tolist())
    assert np.array_equal(table[codes], col)
    half = len(col) // 2
    out = np.empty(2 * half, np.int32)
    src = np.concatenate((codes, col.view(np.uint8)))        # the codes, then the same rows 4 bytes wide
    narrow.uncode(src, np.array([0, len(col) + 8], np.int64), np.array([half, half], np.int64),
                  np.array([1, 4], np.int64), np.array([0, 0], np.int64), table.astype(np.int64), out)
    assert np.array_equal(out[:half], col[:half])
    assert np.array_equal(out[half:], col[2:2 + half])


def _chunks(rng, n_chunks: int, n_loc: int, rows: int) -> list[dict[str, np.ndarray]]:
    """Event chunks in time order per location: most runs short in time, one location whose
    runs span more than 4.29 s, values mostly small with some past 32 bits, one chunk whose
    values are mostly large (it stays 8 bytes wide), one with thousands of event types (its
    types stay 4 bytes wide)."""
    out, now = [], np.zeros(n_loc, np.int64)
    for c in range(n_chunks):
        p = np.full(n_loc, 0.99 / (n_loc - 1))
        p[1] = 0.01                                                          # location 1: rare rows,
        loc = rng.choice(n_loc, rows, p=p).astype(np.int32)
        step = np.where(loc == 1, 1 << 31, rng.integers(0, 5000, rows))    # 2^31 ns apart
        time = np.empty(rows, np.int64)
        for k in range(n_loc):
            mine = loc == k
            time[mine] = now[k] + np.cumsum(step[mine])
            now[k] = time[mine][-1] if mine.any() else now[k]
        value = rng.integers(-100, 100, rows)
        big = rng.random(rows) < (0.5 if c == 2 else 0.004)
        value[big] = rng.integers(1 << 32, 1 << 62, int(big.sum()))
        types = rng.integers(1, 50, rows) if c != 3 else rng.integers(-(1 << 31), 1 << 31, rows)   # 3: many types
        out.append({"loc": loc, "time": time, "type": types.astype(np.int32), "value": value})
    return out


def _staged(tmp_path, name, chunks, narrow_: bool) -> _Staging:
    stage = _Staging(_folder(tmp_path, name), "events", 8)
    for cols in chunks:
        stage.append(PreparedChunk("events", cols, narrow_))
    return stage


def _folder(tmp_path, name):
    folder = tmp_path / name
    folder.mkdir()
    return folder


@pytest.mark.parametrize("pread_min", [1, 1 << 40])        # every run by pread; every run through a map
def test_a_narrow_spill_reads_as_the_plain_one(tmp_path, mode, monkeypatch, pread_min):
    monkeypatch.setattr(narrow, "PREAD_MIN_RUN_ROWS", pread_min)
    monkeypatch.setattr(narrow, "BATCH_ROWS", 1000)          # many batches and pieces
    chunks = _chunks(np.random.default_rng(3), 6, 5, 20_000)
    plain = _staged(tmp_path, "plain", chunks, False)
    thin = _staged(tmp_path, "thin", chunks, True)
    layouts = thin.narrow_layouts()
    assert set(layouts) == {"time", "value", "type"}
    widths = layouts["value"].arrays()["width"]
    assert 8 in widths and 4 in widths                        # the chunk of large values stayed wide
    assert set(layouts["type"].arrays()["width"].tolist()) == {1, 4}     # the chunk of many types too
    assert len(layouts["time"].arrays()["exc_row"]) and len(layouts["value"].arrays()["exc_row"])
    assert (tmp_path / "thin" / "events.time").stat().st_size < 0.6 * (tmp_path / "plain" / "events.time").stat().st_size
    r_plain, r_thin = plain.runs(5), thin.runs(5)
    for a, b in [(0, 5), (0, 1), (1, 2), (3, 5)]:
        want, got = plain.gather(r_plain, a, b), thin.gather(r_thin, a, b)
        for name in want:
            assert got[name].dtype == want[name].dtype and np.array_equal(got[name], want[name]), (name, a, b)
    for skip, take in [(0, 7), (13, 1), (20_001, 40_000), (5, None)]:       # partial reads, across chunks
        for name, dtype in schema.columns("events"):
            want = r_plain.read(plain.source(name), dtype, 1, 4, skip, take)
            assert np.array_equal(r_thin.read(thin.source(name), dtype, 1, 4, skip, take), want), (name, skip, take)


def test_the_raw_copy_of_a_narrow_spill(tmp_path, mode):
    """Adopted into the raw copy (the derived builders' tables, read by another process from
    the saved run index and layouts) it reads as the plain spill does."""
    chunks = _chunks(np.random.default_rng(4), 4, 3, 10_000)
    tables = {}
    for name, thin in (("plain", False), ("thin", True)):
        stage = _staged(tmp_path, name, chunks, thin)
        copy = SortedCopy(tmp_path / name / "sorted")
        offsets = _offsets(stage, 3)
        copy.adopt("events", stage.paths, stage.runs(3), offsets, stage.narrow_layouts(), stage.run_bases)
        stage.close(remove=True)
        tables[name] = RawTables(copy.folder)["events"]
    assert (tmp_path / "thin" / "sorted" / "events.layout.i64").exists()
    assert not (tmp_path / "plain" / "sorted" / "events.layout.i64").exists()
    n = int(tables["plain"]["offsets"][-1])
    for lo, hi in [(0, n), (3, 9_000), (9_999, 10_001), (n - 5, n)]:
        for name, _ in schema.columns("events"):
            assert np.array_equal(tables["thin"][name][lo:hi], tables["plain"][name][lo:hi]), (name, lo, hi)


def test_kept_rows_are_widened_back(tmp_path):
    """A chunk prepared narrow but kept in memory (the budget's staging) is kept 8 bytes wide."""
    from popview.cache.kept import Budget

    chunks = _chunks(np.random.default_rng(5), 2, 3, 5_000)
    budget = Budget(1 << 30)
    stage = _Staging(_folder(tmp_path, "k"), "events", 3, keep=budget)
    for cols in chunks:
        stage.append(PreparedChunk("events", cols, True))
    plain = _staged(tmp_path, "p", chunks, False)
    got, want = stage.gather(stage.runs(3), 0, 3), plain.gather(plain.runs(3), 0, 3)
    for name in want:
        assert np.array_equal(got[name], want[name])
    assert stage.kept["time"].parts[0].dtype == np.int64


def test_a_narrow_spill_is_not_read_as_plain_files(tmp_path):
    """A finish on Dask reads the spill files as plain columns: a narrow one refuses (the reader
    never prepares narrow chunks for it: Writer.spills_narrow)."""
    stage = _staged(tmp_path, "d", _chunks(np.random.default_rng(6), 2, 3, 2_000), True)
    with pytest.raises(RuntimeError, match="narrow"):
        stage.all_sources()


def test_put_back_places_exceptions_of_partial_runs():
    out = np.zeros(6, np.int64)
    narrow._put_back(np.array([2, 10, 11, 30], np.int64), np.array([-2, -10, -11, -30], np.int64),
                     np.array([10, 1], np.int64), np.array([3, 3], np.int64), out)
    assert out.tolist() == [-10, -11, 0, 0, -2, 0]


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("paraver-narrow")
    synthetic.write(d / "t.prv", synthetic.Shape(processes=4, threads=2, iterations=30, work_ns=1_000_000))
    return d / "t.prv"


@pytest.mark.parametrize("interpreted", [True, False])
def test_a_paraver_trace_spilled_narrow_gives_the_kept_cache(trace, tmp_path, monkeypatch, interpreted):
    """The spill of a trace larger than KEEP_TEXT_BYTES is narrow (small blocks: many chunks),
    and its cache is the one its rows kept in memory give, dataset for dataset."""
    from popview.cache import writer

    with popview.open(trace, cache_dir=tmp_path / "kept") as exp:
        kept_cache = exp.cache_path
    thin = []
    real = writer._Staging.narrow_layouts
    monkeypatch.setattr(writer._Staging, "narrow_layouts", lambda self: thin.append(real(self)) or thin[-1])
    monkeypatch.setattr(stream, "KEEP_TEXT_BYTES", 0)
    monkeypatch.setattr(stream, "BLOCK", 64 << 10)
    monkeypatch.setattr(narrow, "PREAD_MIN_RUN_ROWS", 1 if interpreted else 1 << 40)
    with jit.interpreted(interpreted):
        with popview.open(trace, cache_dir=tmp_path / "spilled") as exp:
            spilled_cache = exp.cache_path
    assert any({"time", "value"} <= set(layouts) for layouts in thin)
    assert_same_cache(kept_cache, spilled_cache)


def test_a_huge_time_span_and_values_through_the_reader(tmp_path, monkeypatch):
    """A hand-written trace: a location whose events are 10 s apart (every run past 4 bytes),
    values past 32 bits either way: spilled narrow, the cache of the kept rows."""
    lines = ["#Paraver (01/01/2020 at 00:00):20000000000000_ns:1(2):1:1(2:1),0"]
    t = 0
    for k in range(3000):
        t += 10_000_000_000 if k % 2 else 1_000
        lines.append(f"2:1:1:1:1:{t // 10}:42000050:{(k * 7919) % 5000}:40000050:{(1 << 40) + k}")
        lines.append(f"2:1:1:1:2:{t // 10}:42000059:{-(1 << 35) - k}")
        lines.append(f"1:1:1:1:2:{t // 10}:{t // 10 + 5}:1")
    lines.sort(key=lambda line: int(line.split(":")[5]) if not line.startswith("#") else -1)
    prv = tmp_path / "h.prv"
    prv.write_text("\n".join(lines) + "\n")
    with popview.open(prv, cache_dir=tmp_path / "kept") as exp:
        kept_cache = exp.cache_path
    monkeypatch.setattr(stream, "KEEP_TEXT_BYTES", 0)
    monkeypatch.setattr(stream, "BLOCK", 16 << 10)
    with popview.open(prv, cache_dir=tmp_path / "spilled") as exp:
        spilled_cache = exp.cache_path
    assert_same_cache(kept_cache, spilled_cache)


def test_the_python_stand_ins_match_the_kernels():
    """The numpy stand-ins (run in interpreted mode, but only while numba is not loaded: a test
    in that mode may run compiled) give what the kernels give, called directly."""
    rng = np.random.default_rng(7)
    col = _awkward_values(rng, 5000)
    col[100:200] = I64.min + np.arange(100)
    starts = np.array([0, 10, 2500], np.int64)
    for bases, lo in ((None, narrow.UNBASED_LO), (col[starts], 0), (np.array([I64.min, -1, I64.max]), 0)):
        b = np.zeros(3, np.int64) if bases is None else np.asarray(bases, np.int64)
        want, got = np.empty(len(col), np.uint32), np.empty(len(col), np.uint32)
        assert narrow._narrow_python(col, starts, b, lo, got) == narrow.narrow(col, starts, b, lo, want)
        assert np.array_equal(got, want)
        lengths = np.array([10, 2490, 2500], np.int64)
        a, c = np.empty(5000, np.int64), np.empty(5000, np.int64)
        narrow._widen_python(want, starts, lengths, np.full(3, 4, np.int64), b, lo, a)
        narrow.widen(want, starts, lengths, np.full(3, 4, np.int64), b, lo, c)
        assert np.array_equal(a, c)
    types = rng.integers(-(1 << 31), 1 << 31, 40).astype(np.int32)[rng.integers(0, 40, 3000)]
    codes, table = np.empty(3000, np.uint8), np.empty(narrow.MAX_CODES, np.int32)
    n = narrow._code_python(types, codes, table)
    assert np.array_equal(table[:n][codes], types)
    k_codes, k_table = np.empty(3000, np.uint8), np.empty(narrow.MAX_CODES, np.int32)
    assert narrow.code(types, k_codes, k_table) == n
    out_a, out_b = np.empty(3000, np.int32), np.empty(3000, np.int32)
    args = (codes, np.array([0], np.int64), np.array([3000], np.int64), np.array([1], np.int64),
            np.array([0], np.int64), table[:n].astype(np.int64))
    narrow._uncode_python(*args, out_a)
    narrow.uncode(*args, out_b)
    assert np.array_equal(out_a, types) and np.array_equal(out_b, types)
