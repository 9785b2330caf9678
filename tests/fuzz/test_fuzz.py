"""Every reader on mutated input: it reads it or raises InputError, within a
bounded time. A short, deterministic run per target here (about 10 s each on
the 2-core test machine); `python -m tests.fuzz.run TARGET --seconds 600`
runs one for as long as wanted (see tests/fuzz/README.md).
POPVIEW_FUZZ_SCALE=N multiplies the examples of this run."""
from __future__ import annotations

import faulthandler
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from popview.readers.errors import InputError
from tests.fuzz.targets import TARGETS, prepare

# Examples per target: about 10 s each (OTF2 inputs cost a conversion through the library).
EXAMPLES = {"prv_header": 200, "prv_body": 200, "pcf": 200, "row": 200, "otf2_def": 40, "otf2_evt": 40,
            "cube_tar": 300, "cube_anchor": 300, "cube_index": 300, "cube_data": 300, "session": 300}
SCALE = float(os.environ.get("POPVIEW_FUZZ_SCALE", "1"))
HANG_SECONDS = 600          # one input running longer is a hang: the run stops with every thread's stack


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_reader_takes_mutated_input(name, tmp_path_factory):
    target = TARGETS[name]
    ctx = target.setup(tmp_path_factory.mktemp(name))
    target.run(ctx, target.seed_of(ctx))     # the seed reads: kernels compile here, not under the watchdog

    @settings(max_examples=max(1, int(EXAMPLES[name] * SCALE)), deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(st.randoms(use_true_random=False))
    def reads_or_refuses(rnd):
        data = prepare(target, ctx, rnd)
        faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
        try:
            target.run(ctx, data)
        except InputError:
            pass
        finally:
            faulthandler.cancel_dump_traceback_later()

    reads_or_refuses()


def test_the_writer_stub_has_what_the_readers_ask_of_the_writer():
    """The fuzz targets' writer stands in for the cache writer: a new writer attribute the
    readers use made every reader target fail with AttributeError (twice). Each one the readers
    name (`writer.<name>`) outside the distributed (Dask) conversion must exist on the stub."""
    import re
    from pathlib import Path

    from tests.fuzz.targets import CountingWriter

    readers = Path(__file__).resolve().parents[2] / "popview" / "readers"
    used = {name for path in readers.rglob("*.py") if path.name != "distributed.py"
            for name in re.findall(r"\bwriter\.([a-z_]+)\b", path.read_text())}
    assert used and not [name for name in used if not hasattr(CountingWriter(), name)]
