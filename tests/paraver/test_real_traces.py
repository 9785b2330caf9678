"""Every Paraver trace in ../shared/traces converts, and what popview says of
it agrees with MANIFEST.md (shape, record counts, counters, paradigms)."""
import pytest

import popview

EPOCH = "pypop/mpi/epoch_example_traces"
# file: (processes, threads, states, event records, messages, paradigms)
EXPECTED = {
    f"{EPOCH}/epoch_1proc.prv.gz": (1, 1, 3468, 4048, 576, ["mpi"]),
    f"{EPOCH}/epoch_2proc.prv.gz": (2, 1, 6985, 8147, 1156, ["mpi"]),
    f"{EPOCH}/epoch_4proc.prv.gz": (4, 1, 15007, 17579, 2556, ["mpi"]),
    f"{EPOCH}/epoch_8proc.prv.gz": (8, 1, 29983, 35114, 5100, ["mpi"]),
    f"{EPOCH}/epoch_16proc.prv.gz": (16, 1, 61391, 72005, 10556, ["mpi"]),
    "extraeCoursecodes/MPItraces/prime_v0.prv": (16, 1, 1407, 1424, 0, ["mpi"]),
    "bsc-folding/user-functions/444.namd.prv": (1, 1, 4, 27919, 0, []),
    "paraver-kernel/cutter/qsort_beo3.prv": (4, 1, 292, 422, 33, ["mpi"]),
    "extrae-pthread-example/my-example.prv": (1, 2, 11, 5015, 0, ["pthread"]),
    "profet-paraver/lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv": (8, 1, 4280, 6785, 484, ["mpi"]),
    "profet-paraver/lulesh_7+1_with_uncores_sockets1+2.chop8.prv": (8, 1, 1704, 2640, 160, ["mpi"]),
}
DURATIONS_NS = {f"{EPOCH}/epoch_{p}proc.prv.gz": d for p, d in
                [(1, 21898659139), (2, 11528373565), (4, 6082352213), (8, 3513565328), (16, 2339560724)]}


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_shape_and_records_match_the_manifest(shared_traces, cache_dir, rel):
    procs, threads, states, event_records, messages, paradigms = EXPECTED[rel]
    with popview.open(shared_traces / rel, cache_dir=cache_dir) as exp:
        info = exp.info()
        assert (info["processes"], info["threads_per_process"]) == (procs, threads)
        assert info["records"]["states"] == states
        assert info["flags"]["event_records"] == event_records
        assert info["records"]["messages"] == messages
        assert info["paradigms"] == paradigms
        if rel in DURATIONS_NS:
            assert info["duration_ns"] == DURATIONS_NS[rel]


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_papi_instructions_and_cycles_found(shared_traces, cache_dir, rel):
    with popview.open(shared_traces / rel, cache_dir=cache_dir) as exp:
        counters = exp.definitions.counters
        # the 2004 qsort trace has old counter ids: its 42000060 "Total cycles" is PAPI's
        # description of PAPI_TOT_CYC (tests/test_paraver_old_papi_codes.py)
        assert {"PAPI_TOT_INS", "PAPI_TOT_CYC"} <= set(counters)


def test_imagemagick_openmp_series(shared_traces, cache_dir):
    base = shared_traces / "pypop/openmp/imagemagick_example_traces"
    for threads in (1, 2, 4, 6, 8):
        with popview.open(base / f"omp{threads}.prv.gz", cache_dir=cache_dir) as exp:
            assert exp.shape() == (1, threads)
            assert exp.definitions.paradigms == ["openmp"]
    with popview.open(base / "omp8.prv.gz", cache_dir=cache_dir) as exp:
        per_thread = exp.reader.counts_per_location("states")
        assert per_thread[0] == 82793 and all(3500 < n < 5500 for n in per_thread[1:])


def test_uneven_node_mapping_of_prime(shared_traces, cache_dir):
    with popview.open(shared_traces / "extraeCoursecodes/MPItraces/prime_v0.prv", cache_dir=cache_dir) as exp:
        d = exp.definitions
        assert d.nodes == ["c7101", "c7102", "c7103", "c7105"]
        assert [p.node for p in d.processes] == [0] * 13 + [1, 2, 3]


def test_openmp_course_codes_have_24_threads(shared_traces, cache_dir):
    for prv in sorted((shared_traces / "extraeCoursecodes/OpenMP").rglob("*.prv")):
        with popview.open(prv, cache_dir=cache_dir) as exp:
            assert exp.shape() == (1, 24), prv
            assert "openmp" in exp.definitions.paradigms


def test_two_applications_in_profet(shared_traces, cache_dir):
    prv = shared_traces / "profet-paraver/lulesh_7+1_with_uncores_sockets1+2.chop8.prv"
    with popview.open(prv, cache_dir=cache_dir) as exp:
        d = exp.definitions
        assert len(d.applications) == 2
        assert [p.appl for p in d.processes].count(0) == 8 and [p.appl for p in d.processes].count(1) == 12


def test_old_header_trace_is_in_microseconds(shared_traces, cache_dir):
    with popview.open(shared_traces / "paraver-kernel/cutter/qsort_beo3.prv", cache_dir=cache_dir) as exp:
        assert exp.definitions.t_end == 260199 * 1000
        assert any("global communication" in w for w in exp.definitions.warnings)
        assert len(exp.definitions.communicators) == 8
