"""popview.cluster on its own: tasks whose arguments carry their data."""
from __future__ import annotations

import warnings

import pytest

distributed = pytest.importorskip("distributed", reason="Dask is optional: pip install popview[dask]")

from popview import cluster  # noqa: E402
from popview.cache.progress import Progress  # noqa: E402

pytestmark = pytest.mark.dask


def test_a_large_block_sent_with_its_task_warns_nobody():
    """A .prv.gz's decompressed blocks travel in their tasks' arguments: Dask's advice to
    scatter repeated large graphs must not reach the user of `convert --dask`."""
    block = b"2:0:1:1:1:0:1\n" * 1_500_000          # 21 MB, above Dask's 10 MB threshold
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as lc, distributed.Client(lc) as client:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            sizes = list(cluster.in_order(client, [(len, (block,), 1.0)], Progress(), 2, "blocks"))
    assert sizes == [len(block)]
    assert not [w for w in seen if "large graph" in str(w.message)]
