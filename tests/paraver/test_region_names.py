"""Extrae's parallel regions and outlined functions read as Score-P names them: the
construct "REGION (open)" as "!$omp parallel", an outlined function with the source
line of its construct, from the .pcf's line-and-file labels (60000118) of the values
written in the same records."""
from __future__ import annotations

import popview
from popview.readers.paraver.eventtypes import readable_region


def test_readable_region_labels():
    assert readable_region(60000001, "REGION (open)", []) == "!$omp parallel"
    assert readable_region(60000002, "DO (open)", []) == "!$omp for"
    assert readable_region(60000001, "something else", []) == "something else"
    sites = ["heat_hybrid.c:107 [/home/user/heat/heat_hybrid.c:107, /home/user/heat/heat_hybrid]",
             "heat_hybrid.c:107 [/home/user/heat/heat_hybrid.c:107, /home/user/heat/heat_hybrid]"]
    assert readable_region(60000018, "main._omp_fn.0 ", sites) == "main._omp_fn.0 @heat_hybrid.c:107"
    assert readable_region(60000018, "f._omp_fn.2", ["a.c:3 [x]", "/src/b.c:9"]) == "f._omp_fn.2 @a.c:3, b.c:9"
    assert readable_region(60000018, "??", ["??:0 [??:0, ??]"]) == "??"
    assert readable_region(60000018, "g", []) == "g"


def test_heat_extrae_region_names(shared_traces, cache_dir):
    path = shared_traces / "popview-heat/extrae/hyb_2x2/hyb_2x2.prv"
    with popview.open(path, cache_dir=cache_dir) as exp:
        names = {r.name for r in exp.definitions.regions}
        assert {"!$omp parallel", "main._omp_fn.0 @heat_hybrid.c:107", "main._omp_fn.1 @heat_hybrid.c:119"} <= names
        assert not any("(open)" in n for n in names)
        prof = exp.profile()
        assert prof.find("!$omp parallel/main._omp_fn.0 @heat_hybrid.c:107") is not None
        assert prof.find("!$omp parallel/main._omp_fn.1 @heat_hybrid.c:119") is not None
