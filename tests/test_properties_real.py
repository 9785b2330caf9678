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
CRITICAL_PATH = ("critical path (replay backtrack): its segments do not add up to the runtime within 1 %, do not "
                 "start at the focus's start or do not follow each other in time")
HM_SERIALISATION = ("hybrid multiplicative: MPI serialisation = max outside-MPI / R_ideal above 1: the replay's "
                    "R_ideal is shorter than the longest time a master spends outside MPI")
TRANSFER_ABOVE_1 = ("call-path focus on a trace: transfer = R_ideal / R above 1: the replay's ideal runtime of the "
                    "call path is longer than its measured R")
SERIALISATION_ABOVE_1 = ("serialisation = max useful / R_ideal above 1: the replay's R_ideal is shorter than the "
                         "longest useful time")
WORKER_PAST_MASTER = ("Score-P 1x2 profile: the worker's useful time in region @heat_hybrid.c:107 is recorded "
                      "0.06 % longer than the master's time in the region, so that region's fork / join / runtime "
                      "part reads 1.00045")
WORKER_OWN_PATHS = ("call-path focus on an OpenMP outlined function of an Extrae trace: the profile (the metric "
                    "inputs) gives worker threads their own visits, grafted below the master's parallel region, while "
                    "the replay still masks every thread of a process with its master's visits of the call path, so "
                    "R_ideal is shorter than the longest useful time (serialisation above 1)")
_EXTRAE_OPENMP = ("extraeCoursecodes/OpenMP/code01/correlation_v0.prv", "extraeCoursecodes/OpenMP/code02/trmm_v0.prv",
                  "extraeCoursecodes/OpenMP/code02/trmm_v1.prv", "extraeCoursecodes/OpenMP/code03/bicg_v0.prv",
                  "extraeCoursecodes/OpenMP/code03/bicg_v1.prv", "extraeCoursecodes/OpenMP/code04/jacobi-2d-imper_v1.prv",
                  "extraeCoursecodes/OpenMP/code04/jacobi-2d-imper_v2.prv", "extraeCoursecodes/OpenMP/code05/2mm_v0.prv",
                  "extraeCoursecodes/OpenMP/code05/2mm_v1.prv", "popview-heat/extrae/hyb_1x2/hyb_1x2.prv",
                  "popview-heat/extrae/hyb_2x2/hyb_2x2.prv",
                  *(f"pypop/openmp/imagemagick_example_traces/omp{n}.prv.gz" for n in (2, 4, 6, 8)))

KNOWN: dict[str, tuple[str, ...]] = {
    **{name: (WORKER_OWN_PATHS,) for name in _EXTRAE_OPENMP},
    "popview-heat/scorep/hyb_1x2/profile.cubex": (WORKER_PAST_MASTER,),
    "popview-heat/scorep/hyb_1x2/traces.otf2": (HM_SERIALISATION, SERIALISATION_ABOVE_1,),
    "popview-heat/scorep/hyb_2x2/traces.otf2": (CRITICAL_PATH, HM_SERIALISATION, TRANSFER_ABOVE_1,),
}


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
