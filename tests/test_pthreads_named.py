"""A threaded run without OpenMP (pthreads) is analysed by the hybrid models with its threads
in OpenMP's place (METRICS.md), and their rows say so: the Extrae pthread example read
"OpenMP region efficiency 61.6 %" and "By paradigm: process level x OpenMP" for a program
without OpenMP, and its paradigm was "pthreads", a word the rest of popview (OTF2's reader,
the model choice) does not know ("pthread")."""
from __future__ import annotations

from popview.analysis.focus import Focus
from popview.experiment import open as open_experiment
from tests.paraver.prvtext import HEADER, ROW, write_trace

PCF = """STATES
1    Running
2    Not created

EVENT_TYPE
0    60000020    pthread function
VALUES
0   End
1   worker_main
"""

# one process, two threads: the master runs 0-1000, its pthread runs worker_main 200-800
HEADER_1x2 = HEADER.replace("1(2):1:2(1:1,1:1),1", "1(2):1:1(2:1),0").split("\n")[0] + "\n"
BODY = """1:1:1:1:1:0:1000:1
1:1:1:1:2:0:200:2
1:1:1:1:2:200:800:1
2:1:1:1:2:200:60000020:1
2:1:1:1:2:800:60000020:0
"""


def test_pthreads_take_openmps_place_in_the_names(tmp_path):
    prv = write_trace(tmp_path / "t", BODY, HEADER_1x2, pcf=PCF, row=ROW)
    with open_experiment(prv, tmp_path / "cache") as exp:
        assert exp.definitions.paradigms == ["pthread"]
        for model in ("hybrid-additive", "hybrid-multiplicative", "critical-path"):
            names = [n.name for _, n in exp.metrics(model, Focus.whole()).walk()]
            assert not any("OpenMP" in n for n in names), (model, names)
            assert any("pthreads" in n for n in names), (model, names)
        ids = [n.id for _, n in exp.metrics("hybrid-additive", Focus.whole()).walk()]
        assert "openmp_region_efficiency" in ids                 # the ids stay the model's
