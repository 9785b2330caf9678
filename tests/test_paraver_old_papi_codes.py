"""Counters of an older PAPI numbering are named by PAPI's descriptions: the
2004 qsort_beo3 trace (paraver-kernel) has "42000060 Total cycles (Total
cycles)"; popview said "the experiment has no PAPI_TOT_CYC counter" and gave
no IPC or clock rate (now IPC 0.50, 1.04 GHz)."""
from __future__ import annotations

import pytest

import popview
from tests.paraver.prvtext import BODY, PCF, write_trace

OLD_PCF = PCF.replace("7  42000059 PAPI_TOT_CYC [Total cycles]", "0  42000060 Total cycles (Total cycles)")


def test_total_cycles_under_an_old_code_is_papi_tot_cyc(tmp_path, cache_dir):
    assert "42000060" in OLD_PCF
    body = BODY.replace("42000059", "42000060")
    with popview.open(write_trace(tmp_path, body=body, pcf=OLD_PCF), cache_dir=cache_dir) as exp:
        assert "PAPI_TOT_CYC" in exp.definitions.counters
        tree = exp.metrics("computation", "whole")
        # rank 0: 1200 instructions, 600 cycles in 600 ns; rank 1: 2400 and 800 in 800 ns
        assert tree.value("ipc") == pytest.approx(3600 / 1400)
        assert tree.value("clock_rate") == pytest.approx(1400 / 1400)


def test_a_second_counter_with_the_label_is_left_alone(tmp_path, cache_dir):
    pcf = PCF + "\nEVENT_TYPE\n0  42000060 Total cycles (Total cycles)\n"
    with popview.open(write_trace(tmp_path, pcf=pcf), cache_dir=cache_dir) as exp:
        names = {et.name for c, et in exp.definitions.event_types.items() if c in (42000059, 42000060)}
        assert names == {"PAPI_TOT_CYC", "Total cycles"}
