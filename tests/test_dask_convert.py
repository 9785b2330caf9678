"""Conversions on a Dask LocalCluster (popview.cluster, popview[dask]): the cache made
by 2 and by 4 workers equals the single-process cache dataset by dataset, and a
worker killed in the middle leaves either the right cache or a clear error and none."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="Dask is optional: pip install 'popview[dask]'")

import popview  # noqa: E402
from popview import cluster  # noqa: E402
from popview.cache import overview  # noqa: E402
from popview.experiment import convert  # noqa: E402
from tests.cachecompare import assert_same_cache, overview_differences  # noqa: E402

pytestmark = pytest.mark.dask
MAKE_BIG_EPOCH = Path(__file__).resolve().parents[2] / "shared" / "tools" / "make_big_epoch.py"


@pytest.fixture(scope="module", params=[2, 4], ids=["2-workers", "4-workers"])
def client(request):
    """Workers as threads of this process (processes=False): CI pays no start-up of
    processes; the tasks run as they do in worker processes."""
    with distributed.LocalCluster(n_workers=request.param, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as lc, distributed.Client(lc) as c:
        yield c


def both(source: Path, tmp_path: Path, client, timeline: bool = False, window_sums: bool = False,
         **options) -> tuple[Path, Path]:
    single, _ = convert(source, tmp_path / "single", timeline=timeline, window_sums=window_sums)
    on_dask, converted = convert(source, tmp_path / "dask", dask=client, timeline=timeline, window_sums=window_sums,
                                 **options)
    assert converted
    assert not any(p.name.startswith(".popview-scratch") for p in (tmp_path / "dask").iterdir())
    return single, on_dask


@pytest.mark.shared
def test_epoch_gz_blocks_sent_to_workers(shared_traces, tmp_path, client):
    source = shared_traces / "pypop/mpi/epoch_example_traces/epoch_16proc.prv.gz"
    assert_same_cache(*both(source, tmp_path, client, task_bytes=1 << 20))      # ~20 blocks of text


@pytest.mark.shared
@pytest.mark.parametrize("timeline", [False, True], ids=["default", "with-timeline"])
def test_heat_byte_ranges(shared_traces, tmp_path, client, timeline):
    source = shared_traces / "popview-heat/extrae/hyb_2x2/hyb_2x2.prv"
    # ~13 ranges; the tables sorted by groups of a few locations, so that call paths merge across groups
    single, on_dask = both(source, tmp_path, client, timeline, task_bytes=64 << 10, group_rows=3000)
    assert overview.path_of(on_dask).exists() == timeline, "the default conversion builds no timeline overview"
    assert_same_cache(single, on_dask)           # their timeline overviews too


@pytest.mark.shared
def test_the_overview_built_on_first_use_after_dask_equals_the_one_built_there(shared_traces, tmp_path, client):
    source = shared_traces / "popview-heat/extrae/hyb_2x2/hyb_2x2.prv"
    _, with_it = both(source, tmp_path / "a", client, True, group_rows=3000)
    without, _ = convert(source, tmp_path / "b", dask=client, group_rows=3000)
    assert not overview.path_of(without).exists()
    with popview.open(source, cache_dir=tmp_path / "b") as exp:
        exp.prepare_timeline()
    assert not overview_differences(with_it, without)


@pytest.mark.shared
def test_everything_built_with_a_dask_conversion(shared_traces, tmp_path, client):
    """`popview convert --all` on Dask: the timeline overview and the window sums too, the
    same as on one machine (the window sums built from the cache after the conversion)."""
    from popview.cache import window_sums

    source = shared_traces / "popview-heat/extrae/hyb_2x2/hyb_2x2.prv"
    single, on_dask = both(source, tmp_path, client, True, True, group_rows=3000)
    assert window_sums.path_of(on_dask).exists() and overview.path_of(on_dask).exists()
    assert_same_cache(single, on_dask)


@pytest.mark.shared
def test_big_epoch_byte_ranges(shared_traces, tmp_path, client):
    out = tmp_path / "big_epoch.prv"
    subprocess.run([sys.executable, str(MAKE_BIG_EPOCH), str(shared_traces), str(out), "2"], check=True)
    # ~14 ranges; groups of ~200k rows: whole chunks copied as stored, shared ones through HDF5
    assert_same_cache(*both(out, tmp_path, client, task_bytes=2 << 20, group_rows=200_000))


def test_line_ranges_end_after_newlines(tmp_path):
    from popview.readers.paraver.distributed import line_ranges

    text = b"".join(b"x" * (i % 17) + b"\n" for i in range(2000))
    path = tmp_path / "t.prv"
    path.write_bytes(b"head\n" + text)
    ranges = line_ranges(path, 5, len(text) + 5, 1000)
    assert ranges[0][0] == 5 and ranges[-1][1] == len(text) + 5 and len(ranges) > 5
    assert all(b == c for (_, b), (c, _) in zip(ranges, ranges[1:]))
    data = path.read_bytes()
    assert all(data[b - 1:b] == b"\n" for _, b in ranges)


def test_without_dask_installed_the_error_says_how(monkeypatch):
    monkeypatch.setattr(cluster, "available", lambda: False)
    with pytest.raises(cluster.ClusterError, match=r"pip install 'popview\[dask\]'"):
        with cluster.connect("local:1"):
            pass


class KillWorker(distributed.WorkerPlugin):
    """Kills the worker process it runs in when a parse task starts there: the `after`-th
    task to start, once (`always`: every parse task)."""

    def __init__(self, folder: str, after: int, always: bool = False, task: str = "parse_piece"):
        self.folder, self.after, self.always, self.task = folder, after, always, task

    def transition(self, key, start, finish, **kwargs):
        if finish != "executing" or self.task not in str(key):
            return
        if self.always:
            os._exit(17)
        started = Path(self.folder) / f"started-{key}"
        started.touch()
        if len(list(Path(self.folder).glob("started-*"))) >= self.after:
            try:
                os.close(os.open(Path(self.folder) / "killed", os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                return
            os._exit(17)


@pytest.fixture
def process_client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  memory_limit="2GB") as lc, distributed.Client(lc) as c:
        yield c


@pytest.mark.shared
@pytest.mark.parametrize("source, task, after, options", [
    ("popview-heat/extrae/hyb_2x2/hyb_2x2.prv", "parse_piece", 4, {"task_bytes": 64 << 10}),
    ("popview-heat/scorep/hyb_2x2/traces.otf2", "decode_location", 3, {}),
    # the finish's tasks: a table's location group, a part of the pyramid
    ("popview-heat/extrae/hyb_2x2/hyb_2x2.prv", "sort_group", 3, {"group_rows": 3000}),
    ("popview-heat/scorep/hyb_2x2/traces.otf2", "pyramid_part", 2, {"group_rows": 3000, "timeline": True}),
    ("popview-heat/extrae/hyb_2x2/hyb_2x2.prv", "tile_part", 2, {"group_rows": 3000, "timeline": True})],
    ids=["paraver", "otf2", "paraver-sort-group", "otf2-pyramid-part", "paraver-tile-part"])
def test_a_worker_killed_in_the_middle_its_task_reruns(shared_traces, tmp_path, process_client, source, task,
                                                       after, options):
    marks = tmp_path / "marks"
    marks.mkdir()
    process_client.register_plugin(KillWorker(str(marks), after=after, task=task), name="kill")
    single, on_dask = both(shared_traces / source, tmp_path, process_client, **options)
    assert (marks / "killed").exists()             # a worker did die in the middle
    assert_same_cache(single, on_dask)


@pytest.mark.shared
def test_workers_that_keep_dying_leave_a_clear_error_and_no_cache(shared_traces, tmp_path, process_client):
    import dask

    source = shared_traces / "popview-heat/extrae/hyb_2x2/hyb_2x2.prv"
    process_client.register_plugin(KillWorker(str(tmp_path), after=0, always=True), name="kill")
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        process_client.run_on_scheduler(lambda dask_scheduler: setattr(dask_scheduler, "allowed_failures", 1))
        with pytest.raises(cluster.ClusterError, match="Dask workers died running one of its tasks.*no cache"):
            convert(source, tmp_path / "dask", dask=process_client, task_bytes=64 << 10)
    left = list((tmp_path / "dask").iterdir())
    assert not [p for p in left if p.suffix == ".h5" or p.name.startswith(".popview-scratch")], left


@pytest.mark.shared
@pytest.mark.parametrize("archive", ["popview-heat/scorep/hyb_2x2/traces.otf2",       # OpenMP teams: two passes
                                     "tracer-stencil4d/traces-32/traces.otf2"],       # 32 MPI locations
                         ids=["heat-scorep-2x2", "stencil4d-32"])
def test_otf2_a_task_a_location(shared_traces, tmp_path, client, archive):
    assert_same_cache(*both(shared_traces / archive, tmp_path, client))


@pytest.mark.shared
@pytest.mark.parametrize("when", ["on Dask", "sorting the tables on Dask", "building derived data on Dask"],
                         ids=["parsing", "sorting", "deriving"])
def test_cancel_cancels_the_futures_and_leaves_no_cache(shared_traces, tmp_path, client, when):
    import threading
    import time

    from popview.cache.progress import Cancelled

    source = shared_traces / "pypop/mpi/epoch_example_traces/epoch_16proc.prv.gz"
    cancel = threading.Event()
    seen = []

    def progress(fraction, message):
        seen.append((fraction, message))
        if when in message:
            cancel.set()                          # while the tasks run

    with pytest.raises(Cancelled):
        convert(source, tmp_path / "dask", progress=progress, cancel=cancel, dask=client, task_bytes=256 << 10,
                group_rows=20_000)
    assert any(when in m for _, m in seen)
    assert not [p.name for p in (tmp_path / "dask").iterdir() if p.suffix == ".h5" or p.name.startswith(".popview")]
    deadline = time.monotonic() + 10
    while client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = client.run_on_scheduler(lambda dask_scheduler: {str(k): t.state for k, t in dask_scheduler.tasks.items()})
    assert not left
