"""Every real cfg of the shared collection is read (or refused with a precise reason),
written back and read again into the same description; the survey page is current."""
from __future__ import annotations

from pathlib import Path

import pytest

from popview.analysis.cfg import CfgError, parse_cfg, read_cfg
from popview.analysis.cfg.catalogue import histogram_gaps, window_gaps
from popview.analysis.cfg.survey import render, survey
from popview.analysis.cfg.writer import write_cfg

REFUSED = {
    "basicanalysis/cfgs/dimemas_ideal.cfg": "dimemas_ideal.cfg:1: a Dimemas configuration",
    "folding/others/cube-call-paraver-base.cfg": "template placeholder @SEPARATOR_DEFINITION@",
    "pypop/pypop/cfgs/clock_frequency.cfg": "clock_frequency.cfg:104: template placeholder @histlo@",
    "tracking/src/scripts/callers-template.cfg": "callers-template.cfg:40: template placeholder @sub_CALLERS_LEVEL@",
}
DOCS = Path(__file__).resolve().parents[2] / "docs" / "paraver-cfg.md"


@pytest.fixture(scope="module")
def cfg_root() -> Path:
    root = Path(__file__).resolve().parents[3] / "shared" / "traces" / "paraver-cfgs"
    if not root.is_dir():
        pytest.skip(f"the real cfg collection is not available: {root} does not exist")
    return root


def test_every_cfg_is_read_or_refused_precisely(cfg_root):
    paths = sorted(cfg_root.rglob("*.cfg"))
    assert len(paths) == 120
    read = 0
    for path in paths:
        name = path.relative_to(cfg_root).as_posix()
        try:
            view = read_cfg(path)
        except CfgError as err:
            assert name in REFUSED, f"{name} refused: {err}"
            assert REFUSED[name] in str(err) and "\n" not in str(err)
            continue
        assert name not in REFUSED, f"{name} should be refused"
        assert view.windows, name
        read += 1
    assert read == 116


def test_every_read_cfg_round_trips(cfg_root):
    for path in sorted(cfg_root.rglob("*.cfg")):
        try:
            view = read_cfg(path)
        except CfgError:
            continue
        again = parse_cfg(write_cfg(view), f"{path.name} written back")
        assert again == view, path
        assert not [n for n in again.notes if "unknown" in n or "legacy" in n], path


def test_known_edge_cases_of_the_collection(cfg_root):
    lb = read_cfg(cfg_root / "parami/cfgs/General/analysis/LB_analysis.cfg")
    assert len(lb.windows) == 14 and lb.declared_windows == 1
    assert lb.histograms[3].columns.window == 14
    crlf = read_cfg(cfg_root / "parami/cfgs/nanox/general/analysis/3dh_ipc_uf.cfg")
    assert crlf.histograms[0].is_3d
    mpi = read_cfg(cfg_root / "parami/cfgs/mpi/views/MPI_call.cfg").windows[0]
    assert (mpi.filters.criteria["evt_type"].function, mpi.filters.criteria["evt_type"].values) == \
        ("[x,y]", (50000001, 50000005))
    useful = read_cfg(cfg_root / "pypop/pypop/cfgs/useful_instructions.cfg")
    assert useful.windows[2].derivation.parents == (1, 2)
    assert useful.histograms[0].statistic == "Sum bursts"
    assert useful.histograms[0].data_range[1] == 1.7976931348623157e308
    assert not window_gaps(useful, useful.windows[2]) and not histogram_gaps(useful, useful.histograms[0])
    old = read_cfg(cfg_root / "parami/cfgs/nanox/general/views/user_calls_duration.cfg")
    assert (old.header_style, old.version) == ("old", "3.1")


def test_pypop_cfgs_are_described_fully(cfg_root):
    for path in sorted((cfg_root / "pypop").rglob("*.cfg")):
        if path.name == "clock_frequency.cfg":
            continue
        view = read_cfg(path)
        gaps = [g for w in view.windows for g in window_gaps(view, w)]
        gaps += [g for h in view.histograms for g in histogram_gaps(view, h)]
        assert not gaps, (path.name, gaps)


def test_docs_page_is_the_survey_of_the_collection(cfg_root):
    assert DOCS.read_text(encoding="utf-8") == render(survey(cfg_root)), \
        "docs/paraver-cfg.md is stale: python -m popview.analysis.cfg.survey ../shared/traces/paraver-cfgs " \
        "-o docs/paraver-cfg.md"
