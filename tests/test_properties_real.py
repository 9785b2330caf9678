"""The properties every model must keep on every real trace and profile
(popview.testing.properties): efficiencies in [0, 1] or not available with
a cause, additive children consistent with their parent, multiplicative
products exact, the critical path as long as the run and starting with it.
Checked on the whole run, the automatic focus and the three largest call
paths. A case still known to fail is marked with its precise cause."""
from __future__ import annotations

import pytest

from popview.testing.properties import check_file, real_inputs
from tests.conftest import SHARED_TRACES

INPUTS = [str(p.relative_to(SHARED_TRACES)) for p in real_inputs(SHARED_TRACES)] if SHARED_TRACES.is_dir() else []

# input -> the causes of the violations it still shows (see the model docs); every one is strict:
# a case that starts to pass must leave this list
KNOWN: dict[str, tuple[str, ...]] = {}


def _param(name: str):
    causes = KNOWN.get(name)
    if not causes:
        return name
    return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason="; ".join(causes)))


@pytest.fixture(scope="module")
def property_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("properties-cache")


@pytest.mark.parametrize("name", [_param(n) for n in INPUTS] or ["(no shared traces)"])
def test_properties_hold(shared_traces, property_cache, name):
    result = check_file(shared_traces / name, shared_traces, property_cache)
    if result.violations:
        pytest.fail("\n".join(v.row() for v in result.violations), pytrace=False)
