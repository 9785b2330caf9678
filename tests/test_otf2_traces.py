"""The OTF2 reader on real archives: Score-P (2 ranks ping-pong, with and
without PAPI; 32/64-rank stencil with measurement gaps; HIP with GPU and
metric locations) and APEX."""
from __future__ import annotations

from collections import Counter

from pathlib import Path

import numpy as np
import pytest

import popview
from popview.cli import main
from popview.readers import InputError
from popview.readers.otf2 import definitions as dd

from tests.otf2_print import normalise, otf2_print_counts

ARCHIVES = ["pipit/ping-pong-otf2", "pipit/ping-pong-otf2-papi", "tracer-stencil4d/traces-32",
            "tracer-stencil4d/traces-64", "fastotf2/simple-mi300-example-run", "apex-otf2/OTF2_archive"]


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory):
    """One cache directory for the module: each archive is converted once."""
    return tmp_path_factory.mktemp("otf2-cache")


def _open(shared_traces, rel, cache_dir):
    return popview.open(shared_traces / rel, cache_dir=cache_dir)


@pytest.mark.parametrize("rel", ARCHIVES)
def test_event_counts_equal_otf2_print(shared_traces, module_cache, rel):
    with _open(shared_traces, rel, module_cache) as exp:
        ours = Counter({normalise(k): v for k, v in exp.definitions.flags["otf2_event_counts"].items()})
        anchor = popview.readers.otf2.anchor(shared_traces / rel)
    assert ours == otf2_print_counts(anchor)


@pytest.mark.parametrize("rel", ARCHIVES)
def test_info_summarises(shared_traces, module_cache, rel, capsys):
    assert main(["info", str(shared_traces / rel), "--cache-dir", str(module_cache)]) == 0
    out = capsys.readouterr().out
    assert "otf2" in out and "locations" in out and "regions" in out
    unit = out.split("source clock unit: ")[1].split(")")[0]
    assert unit in ("ns", "us") or (len(unit) < 40 and "GHz timer" in unit), unit    # not 0.4772820393056498 ns


def test_pipit_reference_values(shared_traces, module_cache):
    """MANIFEST 3.1: 2 ranks x 1 thread, 120 events, 8 messages of 4,177,920 bytes in total each way."""
    with _open(shared_traces, "pipit/ping-pong-otf2", module_cache) as exp:
        d, r = exp.definitions, exp.reader
        assert exp.shape() == (2, 1)
        assert sum(d.flags["otf2_event_counts"].values()) == 120
        assert d.flags["otf2_event_counts"]["MpiSend"] == 16
        assert d.t_end == pytest.approx(199.6e6, rel=1e-3)
        m = r.read("messages")
        assert len(m["size"]) == 16
        send_proc = d.location_process()[m["send_loc"]]
        recv_proc = d.location_process()[m["recv_loc"]]
        for a, b in ((0, 1), (1, 0)):
            sel = (send_proc == a) & (recv_proc == b)
            assert sel.sum() == 8
            assert m["size"][sel].sum() == 4_177_920
        assert (m["recv_time"] >= m["send_time"]).all()
        calls = r.read("calls")
        names = np.array([d.regions[d.callpath_region[cp]].name for cp in calls["callpath"]])
        assert (names == "MPI_Send").sum() == 16
        assert (names == "MPI_Recv").sum() == 16
        # 60 events per rank: 21 enters, 21 leaves, 8 sends, 8 receives, program begin and end
        ev = r.read("events")
        for loc in range(2):
            mine = ev["type"][ev["loc"] == loc]
            assert (mine == dd.REGION_TYPE).sum() == 42


def test_pipit_states_follow_the_region_stack(shared_traces, module_cache):
    with _open(shared_traces, "pipit/ping-pong-otf2", module_cache) as exp:
        s = exp.reader.read("states")
        calls = exp.reader.read("calls")
        d = exp.definitions
        for loc in range(2):
            mine = s["loc"] == loc
            assert (s["end"][mine] > s["begin"][mine]).all()
            assert (s["begin"][mine][1:] == s["end"][mine][:-1]).all()   # contiguous, no overlap
        names = np.array([d.regions[d.callpath_region[cp]].name for cp in calls["callpath"]])
        send = calls["end"][names == "MPI_Send"] - calls["begin"][names == "MPI_Send"]
        in_send_state = (s["end"] - s["begin"])[s["state"] == 4].sum()
        assert in_send_state == send.sum()
        recv = calls["end"][names == "MPI_Recv"] - calls["begin"][names == "MPI_Recv"]
        assert (s["end"] - s["begin"])[s["state"] == 3].sum() == recv.sum()


def test_papi_counters_are_increments(shared_traces, module_cache):
    with _open(shared_traces, "pipit/ping-pong-otf2-papi", module_cache) as exp:
        d = exp.definitions
        assert d.counters == ["PAPI_TOT_CYC", "PAPI_L2_TCM", "PAPI_BR_MSP"]
        code = d.counter_code("PAPI_TOT_CYC")
        assert code == 42000059
        ev = exp.reader.read("events")
        sel = ev["type"] == code
        assert sel.sum() == d.flags["otf2_event_counts"]["Metric"]   # one PAPI_TOT_CYC value per metric event
        last = _last_metric_values(popview.readers.otf2.anchor(shared_traces / "pipit/ping-pong-otf2-papi"))
        for loc in range(2):
            increments = ev["value"][sel & (ev["loc"] == loc)]
            assert (increments >= 0).all()
            assert increments.sum() == last[loc]["PAPI_TOT_CYC"]


def _last_metric_values(anchor) -> dict[int, dict[str, int]]:
    """Accumulated counter values of the last sample per location, read with the bindings."""
    import otf2
    out: dict[int, dict[str, int]] = {}
    with otf2.reader.open(str(anchor)) as trace:
        for location, event in trace.events:
            if isinstance(event, otf2.events.Metric):
                for member, value in zip(event.metric.members, event.values):
                    out.setdefault(location._ref, {})[member.name] = value
    return out


def test_stencil_measurement_gaps_and_nonblocking_messages(shared_traces, module_cache):
    with _open(shared_traces, "tracer-stencil4d/traces-32", module_cache) as exp:
        d = exp.definitions
        assert exp.shape() == (32, 1)
        assert d.flags["measurement_off"]
        assert exp.reader.count("messages") == 512
        assert not any("without a matching partner" in w for w in d.warnings)
        s = exp.reader.read("states")
        assert (s["state"] == 14).any()          # tracing disabled between off and on
        ev = exp.reader.read("events")
        roots = ev["value"][ev["type"] == dd.COLL_COMM]
        assert len(roots) == 96
        assert [c["tasks"] for c in d.communicators if c["name"] == "MPI_COMM_WORLD"] == [list(range(32))]


def test_hip_gpu_and_metric_locations(shared_traces, module_cache):
    with _open(shared_traces, "fastotf2/simple-mi300-example-run", module_cache) as exp:
        d = exp.definitions
        kinds = [loc.kind for loc in d.locations]
        assert kinds == ["thread"] + ["gpu"] * 2 + ["metric"] * 29
        assert all(loc.process == 0 for loc in d.locations)
        assert "hip" in d.paradigms
        calls = exp.reader.read("calls")
        gpu_locs = [i for i, k in enumerate(kinds) if k == "gpu"]
        on_gpu = np.isin(calls["loc"], gpu_locs)
        roots = {d.callpath_name(int(cp)).split("/")[0] for cp in calls["callpath"][on_gpu]}
        assert roots == {"KERNELS"}
        s = exp.reader.read("states")
        from popview.model.states import GPU_KERNEL
        assert (s["state"][np.isin(s["loc"], gpu_locs)] == GPU_KERNEL).any()
        ev = exp.reader.read("events")
        metric_locs = [i for i, k in enumerate(kinds) if k == "metric"]
        metric_codes = [dd.OTHER_COUNTER_BASE + i for i in range(29)]
        is_metric = np.isin(ev["type"], metric_codes)
        assert np.isin(ev["loc"][is_metric], metric_locs).all()
        assert is_metric.sum() == 72_584


def test_apex_threads_hang_under_threads_root(shared_traces, module_cache):
    with _open(shared_traces, "apex-otf2/OTF2_archive", module_cache) as exp:
        d = exp.definitions
        assert exp.shape() == (1, 3)
        calls = exp.reader.read("calls")
        worker = calls["loc"] > 0
        tops = {d.callpath_name(int(cp)).split("/")[0] for cp in calls["callpath"][worker]}
        assert tops == {"THREADS"}
        assert sum(d.flags["otf2_event_counts"].values()) == 16_124
        # every location announces 79, APEX's region count, not its events: no false "0 events read"
        assert not [w for w in d.warnings if "definitions announce" in w], d.warnings


def test_wrong_announced_event_counts_still_warn():
    from types import SimpleNamespace
    from popview.readers.otf2.events import count_mismatches
    tables = SimpleNamespace(location_events={0: 10, 1: 12}, region_index=np.arange(5))
    found = count_mismatches(Path("/x/traces.otf2"), {0: 10, 1: 7}, tables)
    assert len(found) == 1 and "7 events read, the definitions announce 12" in found[0]
    same = SimpleNamespace(location_events={0: 5, 1: 5}, region_index=np.arange(5))
    assert count_mismatches(Path("/x/traces.otf2"), {0: 0, 1: 900}, same) == []


def test_anchor_without_event_files_names_them(shared_traces, cache_dir):
    anchor = shared_traces / "archer2-scalasca/scorep_bt-mz_C_8x6_trace/traces.otf2"
    with pytest.raises(InputError, match=r"48 event file\(s\) missing.*traces/.*0\.evt"):
        popview.open(anchor, cache_dir=cache_dir)
    assert not list(cache_dir.rglob("*.h5"))


def test_directory_and_anchor_share_one_cache(shared_traces, cache_dir):
    a = popview.open(shared_traces / "pipit/ping-pong-otf2", cache_dir=cache_dir)
    b = popview.open(shared_traces / "pipit/ping-pong-otf2/traces.otf2", cache_dir=cache_dir)
    assert a.cache_path == b.cache_path and not b.converted
    a.close()
    b.close()
