"""Window queries of the timeline: pixels from records and from the pyramid."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis import timeline_data
from popview.analysis.timeline_data import NONE, ColourMode, TimelineData
from popview.cache import pyramid
from popview.testing import synthetic
from tests.test_pyramid import INS, MPI, make_cache

CYC = 42000059


class _Exp:
    def __init__(self, reader):
        self.reader, self.definitions = reader, reader.definitions


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setattr(pyramid, "COARSEST_BINS", 1)
    states = {"loc": [0, 0, 0, 1], "begin": [0, 300, 400, 0], "end": [300, 400, 1024, 1024], "state": [1, 3, 1, 1]}
    events = {"loc": [0, 0, 0, 0, 0, 0, 1], "time": [300, 300, 300, 400, 1024, 1024, 512],
              "type": [INS, CYC, MPI, MPI, INS, CYC, INS], "value": [600, 300, 1, 0, 1248, 624, 50]}
    with make_cache(tmp_path / "c.h5", states, events, 1024, extra_counters={CYC: "PAPI_TOT_CYC"}) as reader:
        yield TimelineData(_Exp(reader))


@pytest.fixture(params=["records", "pyramid"])
def source(request, monkeypatch):
    if request.param == "pyramid":
        monkeypatch.setattr(timeline_data, "RAW_BUDGET", 0)
    return request.param


def test_state_pixels_exact(data, source):
    pic = data.picture(ColourMode("state"), [0, 1], 0, 1024, 4)
    assert pic.source.startswith(source)
    assert pic.values.tolist() == [[1, 1, 1, 1], [1, 1, 1, 1]]
    assert pic.share[0] == pytest.approx([1, 156 / 256, 1, 1], abs=1 / 255)
    pic = data.picture(ColourMode("state"), [0], 256, 512, 2)          # pixels of 128 ns
    assert pic.values.tolist() == [[3, 1]]
    assert pic.share[0] == pytest.approx([84 / 128, 112 / 128], abs=1 / 255)


def test_rows_follow_the_requested_order(data, source):
    pic = data.picture(ColourMode("state"), [1, 0], 256, 512, 2)
    assert pic.values.tolist() == [[1, 1], [3, 1]]


def test_mpi_call_is_non_null_dominant(data, source):
    pic = data.picture(ColourMode("mpi"), [0, 1], 0, 1024, 4)
    assert [data.category_label(ColourMode("mpi"), v) for v in pic.values[0]] == ["", "MPI_Send", "", ""]
    assert pic.share[0, 1] == pytest.approx(100 / 256, abs=1 / 255)
    assert (pic.values[1] == NONE).all()


def test_useful_duration_is_longest_burst(data, source):
    pic = data.picture(ColourMode("useful"), [0, 1], 0, 1024, 4)
    assert pic.values.tolist() == [[300, 624, 624, 624], [1024] * 4]


def test_counter_rate_and_ipc(data, source):
    pic = data.picture(ColourMode("counter", INS), [0], 0, 1024, 2)
    expected_sums = [600 + 1248 * 212 / 724, 1248 * 512 / 724]
    assert pic.values[0] == pytest.approx([s / 512 * 1e9 for s in expected_sums], rel=1e-5)
    ipc = data.picture(ColourMode("ipc"), [0], 0, 1024, 2)
    assert ipc.values[0] == pytest.approx([2.0, 2.0], rel=1e-5)    # 600/300 and 1248/624 everywhere


def test_tiles_across_blocks_do_not_double_count(tmp_path, monkeypatch):
    monkeypatch.setattr(pyramid, "BLOCK_ROWS", 2)                   # many blocks: records span several
    n = 50
    rng = np.random.default_rng(5)
    dur = rng.integers(5, 80, n)
    end = np.cumsum(dur)
    begin = end - dur
    state = rng.integers(1, 4, n)
    with make_cache(tmp_path / "b.h5", {"loc": np.zeros(n, int), "begin": begin, "end": end, "state": state},
                    None, int(end[-1]), n_loc=1) as reader:
        assert reader.timeline()["tiles/state/offsets"].shape[0] > 8
        data = TimelineData(_Exp(reader))
        t0, t1, width = int(end[3]), int(end[40]), 37
        pic = data.picture(ColourMode("state"), [0], t0, t1, width)
        assert pic.source == "records"
        pw = (t1 - t0) / width
        for p in range(width):
            lo, hi = t0 + p * pw, t0 + (p + 1) * pw
            cover = np.clip(np.minimum(end, hi) - np.maximum(begin, lo), 0, None)
            totals = np.bincount(state, weights=cover, minlength=4)
            assert totals[pic.values[0, p]] == pytest.approx(totals.max())
            assert pic.share[0, p] == pytest.approx(totals.max() / pw)
        useful = data.picture(ColourMode("useful"), [0], t0, t1, width)
        run = state == 1
        for p in range(width):
            lo, hi = t0 + p * pw, t0 + (p + 1) * pw
            hit = run & (begin < hi) & (end > lo)
            assert (useful.values[0, p] == (end - begin)[hit].max()) if hit.any() else np.isnan(useful.values[0, p])


def test_info_at_says_what_and_where(data):
    info = data.info_at(0, 350)
    assert info["location"] == "t0" and info["process"] == "rank 0"
    assert info["state"] == "Waiting a message" and (info["state_begin"], info["state_end"]) == (300, 400)
    assert info["callpath"] == "MPI_Send"
    assert info["counters"]["PAPI_TOT_INS"] == pytest.approx(1248 / 724 * 1e9)
    assert [e[1] for e in data.info_at(0, 300, tolerance=2)["events"]] == ["PAPI_TOT_INS", "PAPI_TOT_CYC",
                                                                          "MPI Point-to-point"]


def test_modes_list_what_the_trace_has(data):
    kinds = {(m.kind, m.param) for m in data.modes()}
    assert {("state", 0), ("mpi", 0), ("useful", 0), ("ipc", 0), ("counter", INS)} <= kinds
    assert ("openmp", 0) not in kinds


def test_event_values_hold_until_the_next_event(data):
    pic = data.picture(ColourMode("event", MPI, categories=True), [0], 0, 1024, 4)
    assert pic.values.tolist() == [[NONE, 0, 0, 0]]       # entered at 300, left (value 0) at 400
    pic = data.picture(ColourMode("event", MPI, categories=True), [0], 256, 512, 2)
    assert pic.values.tolist() == [[1, 0]]


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory):
    d = tmp_path_factory.mktemp("syn")
    shape = synthetic.Shape(processes=2, threads=2, iterations=6, work_ns=2_000_000, rank_weights=(1.0, 1.5))
    expected = synthetic.write(d / "h.prv", shape)
    with popview.open(d / "h.prv", cache_dir=d / "cache") as exp:
        yield exp, expected


def test_synthetic_useful_time_from_state_pixels(hybrid):
    exp, expected = hybrid
    data = TimelineData(exp)
    rows = np.arange(len(exp.definitions.locations))
    width = 20000
    pic = data.picture(ColourMode("state"), rows, 0, data.t_end, width)
    pw = data.t_end / width
    useful = ((pic.values == 1) * pic.share).sum(axis=1) * pw
    assert useful == pytest.approx(expected.useful_ns, rel=0.02)


def test_synthetic_lines_and_openmp(hybrid):
    exp, expected = hybrid
    data = TimelineData(exp)
    rows = np.arange(len(exp.definitions.locations))
    lines = data.lines(rows, 0, data.t_end)
    assert lines is not None and len(lines.send_loc) == exp.reader.count("messages")
    assert ((lines.recv_time >= lines.send_time) | (lines.recv_time == 0)).all()
    omp = data.picture(ColourMode("openmp"), rows, 0, data.t_end, 500)
    assert (omp.values >= 0).any()
    labels = {data.category_label(ColourMode("openmp"), v) for v in np.unique(omp.values[omp.values >= 0])}
    assert labels and all(label for label in labels)


def test_parse_time_and_windows():
    assert timeline_data.parse_time("1.5 s") == 1_500_000_000
    assert timeline_data.parse_time("200ms") == 200_000_000
    assert timeline_data.parse_time("30 us") == timeline_data.parse_time("30µs") == 30_000
    assert timeline_data.parse_time("12ns") == 12 and timeline_data.parse_time("2") == 2_000_000_000
    assert timeline_data.parse_time_window("10ms-12ms") == (10_000_000, 12_000_000)
    assert timeline_data.parse_time_window("1.2 s") == (1_200_000_000, None)
    with pytest.raises(ValueError, match="not a time"):
        timeline_data.parse_time("soon")
    with pytest.raises(ValueError, match="empty"):
        timeline_data.parse_time_window("5ms..1ms")


def test_lines_crossing_a_window_match_the_messages_table(tmp_path, monkeypatch):
    monkeypatch.setattr(pyramid, "BLOCK_ROWS", 2)                   # messages spread over many blocks
    shape = synthetic.Shape(processes=4, threads=1, iterations=8, work_ns=500_000)
    synthetic.write(tmp_path / "m.prv", shape)
    with popview.open(tmp_path / "m.prv", cache_dir=tmp_path / "cache") as exp:
        data = TimelineData(exp)
        assert exp.reader.timeline()["tiles/messages/offsets"].shape[0] > 4
        m = exp.reader.read("messages")
        t0, t1 = data.t_end // 3, data.t_end // 2
        want = (m["send_time"] < t1) & (np.maximum(m["recv_time"], m["send_time"]) >= t0)
        lines = data.lines(np.arange(4), t0, t1)
        got = sorted(zip(lines.send_loc.tolist(), lines.send_time.tolist(), lines.recv_loc.tolist()))
        assert got == sorted(zip(m["send_loc"][want].tolist(), m["send_time"][want].tolist(),
                                 m["recv_loc"][want].tolist()))
        assert len(got) > 0


@pytest.fixture(scope="module")
def late_workers(tmp_path_factory):
    d = tmp_path_factory.mktemp("late")
    shape = synthetic.Shape(processes=2, threads=3, iterations=4, parallel_regions=2, serial_fraction=0.2,
                            workers_after_master=True, init_ns=50_000, fini_ns=20_000, rank_weights=(1.0, 1.5))
    expected = synthetic.write(d / "late.prv", shape)
    with popview.open(d / "late.prv", cache_dir=d / "cache") as exp:
        yield exp, shape, expected


@pytest.mark.parametrize("budget", [timeline_data.RAW_BUDGET, 0], ids=["records", "pyramid"])
def test_worker_time_without_records_is_drawn_idle_as_the_profile_counts_it(late_workers, monkeypatch, budget):
    """Extrae writes nothing while an OpenMP worker waits: the profile counts that time as OpenMP
    idle (cache.cumulative.with_idle_gaps) but the State timeline drew it blank, like no data.
    Zoomed in (records) and out (pyramid) alike, a worker's run is now Not created, its records
    and idle: no blank pixel; a master has no idle gap."""
    from popview.model.states import NOT_CREATED
    monkeypatch.setattr(timeline_data, "RAW_BUDGET", budget)
    exp, shape, expected = late_workers
    data = TimelineData(exp)
    rows = np.arange(len(exp.definitions.locations))
    width = 4000
    pic = data.picture(ColourMode("state"), rows, 0, data.t_end, width)
    assert pic.source.startswith("records" if budget else "pyramid")
    worker = rows % shape.threads > 0
    assert (pic.values[worker] != NONE).all(), "a worker's time without records drawn blank"
    from popview.analysis.timeline_data import IDLE_GAP, IDLE_GAP_LABEL
    assert ((pic.values[worker] == IDLE_GAP).sum(axis=1) > 0).all()
    assert ((pic.values[worker] == NOT_CREATED).sum(axis=1) > 0).all(), "Not created stays itself"
    assert (pic.values[~worker] != IDLE_GAP).all()
    pw = data.t_end / width
    idle = (pic.values == IDLE_GAP).sum(axis=1) * pw
    prof = exp.profile()
    omp_idle = sum(prof.by_location("omp_idle", int(r), True) for r in prof.roots()) / 1e-9
    not_created = (pic.values == NOT_CREATED).sum(axis=1) * pw
    # what the profile counts as OpenMP idle on a worker: before its first record and between its records
    np.testing.assert_allclose((idle + not_created)[worker], omp_idle[worker], rtol=0.05)
    assert data.category_label(ColourMode("state"), IDLE_GAP) == IDLE_GAP_LABEL


@pytest.fixture(scope="module")
def heat_2x2(tmp_path_factory, shared_traces):
    """popview-heat Extrae 2x2: each OpenMP worker runs about 1.7 ms of every 8 ms and has no
    record in between (Extrae writes nothing while a worker waits)."""
    trace = shared_traces / "popview-heat" / "extrae" / "hyb_2x2" / "hyb_2x2.prv"
    with popview.open(trace, cache_dir=tmp_path_factory.mktemp("heat22"), timeline=True) as exp:
        yield exp


@pytest.mark.shared
@pytest.mark.parametrize("budget, width", [(timeline_data.RAW_BUDGET, 1200), (timeline_data.RAW_BUDGET, 500),
                                           (0, 1200), (0, 12000)],
                         ids=["records-1200px", "records-500px", "pyramid-1200px", "pyramid-12000px"])
def test_zoomed_out_a_worker_shows_its_idle_time_in_proportion(heat_2x2, monkeypatch, budget, width):
    """Zoomed out, a pixel holding a short burst and a long wait drew the burst (the dominant
    record), the wait only in pixels without any record: heat 2x2's workers, idle 75-82 % of the
    run, drew 46-53 % of their pixels idle (30-37 % from the pyramid). Now the idle time is drawn
    in proportion along each worker row (error diffusion of each pixel's idle share), where the
    worker waits: its idle pixels are its idle time, as zoomed in, from records and pyramid alike;
    a pixel without a wait is never drawn idle, nor is a master's."""
    from popview.analysis.timeline_data import IDLE_GAP

    exp = heat_2x2
    rows = np.arange(len(exp.definitions.locations))
    zoomed_in = TimelineData(exp).picture(ColourMode("state"), rows, 0, exp.definitions.t_end, 400_000)
    assert zoomed_in.source == "records"
    idle_in = (zoomed_in.values == IDLE_GAP).mean(axis=1)
    worker = TimelineData(exp).worker[rows]
    assert worker.tolist() == [False, True, False, True] and (idle_in[worker] > 0.7).all()
    monkeypatch.setattr(timeline_data, "RAW_BUDGET", budget)
    data = TimelineData(exp)
    out = data.picture(ColourMode("state"), rows, 0, data.t_end, width)
    assert out.source.startswith("records" if budget else "pyramid")
    shown = out.values == IDLE_GAP
    assert not shown[~worker].any()
    np.testing.assert_allclose(shown.mean(axis=1)[worker], idle_in[worker], atol=0.02)
    assert (out.share[shown] > 0).all(), "drawn idle only where the worker waits"
    assert (out.values[worker] != NONE).all()


@pytest.mark.shared
@pytest.mark.parametrize("budget", [timeline_data.RAW_BUDGET, 0], ids=["records", "pyramid"])
def test_panning_by_whole_pixels_keeps_each_idle_pixel(heat_2x2, monkeypatch, budget):
    """The idle pixels were placed by error diffusion from the view's first pixel: panning the
    view carried a different rounding along the row and recoloured pixels whose time had not
    changed (24 of the 1,800 pixels both views show on heat 2x2's two workers, panned by 300 of
    1,200 pixels, from records; 101 from the overview). Each pixel's threshold is now
    fixed by its place in time: a pixel showing the same time span is drawn the same."""
    from popview.analysis.timeline_data import IDLE_GAP

    monkeypatch.setattr(timeline_data, "RAW_BUDGET", budget)
    data = TimelineData(heat_2x2)
    rows = np.arange(len(heat_2x2.definitions.locations))
    width, shift = 1200, 300
    pw = data.t_end // 4 // width            # a quarter of the run: whole nanoseconds a pixel
    t0 = data.t_end // 3
    here = data.picture(ColourMode("state"), rows, t0, t0 + pw * width, width)
    panned = data.picture(ColourMode("state"), rows, t0 + pw * shift, t0 + pw * (width + shift), width)
    assert here.source == panned.source and here.source.startswith("records" if budget else "pyramid")
    worker = data.worker[rows]
    before = here.values[worker][:, shift:] == IDLE_GAP
    after = panned.values[worker][:, :-shift] == IDLE_GAP
    assert before.mean() > 0.5
    assert (before == after).all(), f"{(before != after).sum()} pixels recoloured by panning"


def test_the_warmed_kernels_are_those_every_picture_runs(data, source, monkeypatch):
    """warm_kernels (run by the window on a worker before its first timeline) must compile the
    picture kernels for every argument type the pictures give them: a type it misses is
    compiled in the GUI thread at the first picture, freezing a first run's window."""
    from popview import aot

    calls: dict[str, set] = {"drawn": set(), "warmed": set()}
    into = ["drawn"]
    for name in ("dominant_kernel", "reduce_kernel"):
        real = getattr(pyramid, name)

        def spy(*args, _real=real, _name=name):
            calls[into[0]].add((_name, aot.signature_of(args)))
            return _real(*args)

        monkeypatch.setattr(pyramid, name, spy)
    modes = data.modes() + [ColourMode("event", MPI, categories=True), ColourMode("event", MPI),
                            ColourMode("event", INS)]
    for mode in modes:
        for t0, t1 in ((0, 1024), (256, 512)):
            data.picture(mode, [0, 1], t0, t1, 4)
    monkeypatch.setattr(timeline_data, "_warm", False)
    into[0] = "warmed"
    timeline_data.warm_kernels()
    assert timeline_data.kernels_warm()
    assert calls["drawn"], "no picture ran a kernel: the test checks nothing"
    assert calls["drawn"] <= calls["warmed"], calls["drawn"] - calls["warmed"]
