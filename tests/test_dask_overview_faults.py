"""A conversion on Dask whose timeline overview cannot be written (a full disk) keeps its
cache, as the conversion on one machine does (Writer.finish, docs/cache.md "full disk"):
the overview is dropped, the conversion says why, the window opens the run without a
timeline and says why. It used to fail the whole conversion ("cannot write the cache")."""
from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="Dask is optional: pip install 'popview[dask]'")

import popview  # noqa: E402
from popview.cache import integrity, location, overview  # noqa: E402
from popview.cache.errors import CompanionFailed  # noqa: E402
from popview.experiment import WITH_CONVERSION, convert  # noqa: E402
from popview.testing import synthetic  # noqa: E402
from tests.cachecompare import differences  # noqa: E402

pytestmark = pytest.mark.dask
REPO = Path(__file__).resolve().parents[1]
FULL = f"cannot write the timeline overview: {os.strerror(errno.ENOSPC)}"


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("dask-overview")
    synthetic.write(d / "h.prv", synthetic.Shape(processes=4, threads=2, iterations=60, work_ns=1_000_000,
                                                 rank_weights=(1.0, 1.2, 1.4, 1.1)))
    return d / "h.prv"


@pytest.fixture(scope="module")
def client():
    """Workers as threads of this process: the fault below reaches their writes too."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as lc, distributed.Client(lc) as c:
        yield c


@pytest.fixture(scope="module")
def single(trace, tmp_path_factory) -> Path:
    """The cache converted on one machine, without an overview."""
    cache, _ = convert(trace, tmp_path_factory.mktemp("single"))
    return cache


def full_disk_for(monkeypatch, which) -> list[str]:
    """Every write into a file whose name `which` accepts fails as on a full disk (ENOSPC),
    through the file HDF5 writes by (integrity._Guarded), in this process and its threads
    (the workers); returns the names that failed."""
    real = integrity._pwrite
    failed = []

    def pwrite(fd, view, at):
        name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
        if which(name):
            failed.append(name)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, view, at)

    monkeypatch.setattr(integrity, "_pwrite", pwrite)
    return failed


WHERE = {
    # a worker's part of the pyramid (its levels' rows: pyramid.build_part)
    "pyramid-part": lambda name: name.startswith("pyramid.") and name.endswith(".h5"),
    # a worker's range of tile blocks (pyramid.write_tile_part)
    "tile-part": lambda name: name.startswith("tiles.") and name.endswith(".h5"),
    # the overview's file, joined on the driver (pyramid.join_parts, join_tile_parts)
    "join": lambda name: name == "timeline.h5",
}


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="finds a descriptor's file through /proc")
@pytest.mark.parametrize("where", list(WHERE))
def test_the_cache_is_kept_when_only_its_overview_cannot_be_written(trace, tmp_path, client, single, monkeypatch,
                                                                  where):
    failed = full_disk_for(monkeypatch, WHERE[where])
    cache_dir = tmp_path / "dask"
    with pytest.raises(CompanionFailed) as told:
        convert(trace, cache_dir, dask=client, timeline=True, group_rows=3000)
    assert failed, "the overview's writes were reached"
    cache = location.cache_path(trace, cache_dir, False)
    assert str(told.value) == f"{overview.path_of(cache)}: {FULL}"
    assert os.listdir(cache_dir) == [cache.name], "the cache, and nothing else: no overview, no scratch"
    assert not differences(single, cache)                  # the cache is whole: the single-process one
    monkeypatch.undo()
    with popview.open(trace, cache_dir=cache_dir) as exp:
        assert not exp.converted                           # kept, and used
        assert exp.metrics("pop-mpi").find("parallel_efficiency").value is not None


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="finds a descriptor's file through /proc")
def test_the_window_opens_the_run_without_a_timeline_and_says_why(trace, tmp_path, client, monkeypatch):
    """The window's openings (timeline=WITH_CONVERSION) converting on Dask (File > Convert on
    a Dask cluster): the run opens, its timeline_failure names the overview and why (what
    the Timeline pane shows), a timeline picture says it could not be built."""
    import numpy as np

    from popview.analysis.timeline_data import ColourMode, TimelineData

    full_disk_for(monkeypatch, WHERE["pyramid-part"])
    cache_dir = tmp_path / "dask"
    with popview.open(trace, cache_dir=cache_dir, dask=client, timeline=WITH_CONVERSION, group_rows=3000) as exp:
        reason = f"{overview.path_of(exp.cache_path)}: {FULL}"
        assert exp.converted and str(exp.timeline_failure) == reason
        assert exp.metrics("pop-mpi").find("parallel_efficiency").value is not None
        data = TimelineData(exp)
        message = data.picture(ColourMode("state"), np.arange(data.n_loc), 0, data.t_end, 100).message
        assert message == f"no timeline overview: it could not be built ({reason})"


CONVERT = """
import errno, os, sys
from popview.cache import integrity
real = integrity._pwrite


def pwrite(fd, view, at):      # the overview's file on the driver: no room
    if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")) == "timeline.h5":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return real(fd, view, at)


integrity._pwrite = pwrite
from popview.cli import main
raise SystemExit(main(["convert", sys.argv[1], "--cache-dir", sys.argv[2], "--timeline", "--dask", "local:1"]))
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="finds a descriptor's file through /proc")
def test_popview_convert_on_dask_says_why_there_is_no_overview(trace, tmp_path):
    """`popview convert --timeline --dask local:1`: exit code 2 and one line naming the
    overview and why, as on one machine; the cache is there."""
    cache_dir = tmp_path / "c"
    done = subprocess.run([sys.executable, "-c", CONVERT, str(trace), str(cache_dir)], capture_output=True,
                          text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(REPO), POPVIEW_PRECOMPILE="0"))
    cache = location.cache_path(trace, cache_dir, False)
    errors = [line for line in done.stderr.splitlines() if line.startswith("popview: error")]
    assert done.returncode == 2 and errors == [f"popview: error: {overview.path_of(cache)}: {FULL}"], \
        done.stderr[-3000:]
    assert os.listdir(cache_dir) == [cache.name]
