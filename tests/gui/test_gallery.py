"""The layout gallery: each layout at 1280x800 and 1920x1080 on real data, saved as PNGs
(also into $POPVIEW_GALLERY_DIR when set), with no header or value elided and room for
at least 12 Advisor rows in the Advisor-first layout."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from popview.gui import layouts
from tests.gui import gallery
from tests.gui.gallery import plots_as_before  # noqa: F401 - autouse fixture

SIZES = ((1280, 800), (1920, 1080))
DATA = {
    "epoch": ("pypop/mpi/epoch_example_traces", 5),
    "heat_2x2": ("popview-heat/extrae/hyb_2x2/hyb_2x2.prv", 1),
    "scout_btmz": ("archer2-scalasca/scorep_bt-mz_C_8x6_trace/scout.cubex", 1),
}
MIN_ADVISOR_ROWS = 12


def out_dirs(tmp_path) -> list[Path]:
    dirs = [tmp_path / "gallery"]
    if os.environ.get("POPVIEW_GALLERY_DIR"):
        dirs.append(Path(os.environ["POPVIEW_GALLERY_DIR"]))
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    return dirs




@pytest.mark.parametrize("name", list(DATA))
def test_each_layout_fits_without_cut_text(qtbot, tmp_path, cache_dir, shared_traces, name):
    relative, n_runs = DATA[name]
    path = shared_traces / relative
    if not path.exists():
        pytest.skip(f"{path} is not among the shared traces")
    window = gallery.open_window(qtbot, tmp_path, os.environ.get("POPVIEW_GALLERY_CACHE") or cache_dir,
                                 [path], n_runs)
    problems, saved = [], []
    for key in layouts.LAYOUTS:
        for size in SIZES:
            window.resize(*size)
            qtbot.wait(200)
            window.apply_layout(key)
            qtbot.wait(800)
            window.resize(*size)          # another layout's minimum may have grown the window
            gallery.settle(qtbot, window)
            window.resize(*size)
            qtbot.wait(200)
            shot = f"{name}-{key}-{size[0]}x{size[1]}.png"
            image = window.grab()
            for d in out_dirs(tmp_path):
                image.save(str(d / shot))
            saved.append(shot)
            where = f"{shot}: "
            if (window.width(), window.height()) != size:
                problems.append(f"{where}the window needs {window.width()}x{window.height()}")
            problems += [where + p for p in gallery.elided_headers(window) + gallery.elided_values(window)
                         + gallery.cut_list_items(window)]
            if key == layouts.ADVISOR:
                rows = gallery.advisor_rows(window)
                if rows < MIN_ADVISOR_ROWS:
                    problems.append(f"{where}the Advisor has room for {rows} rows, not {MIN_ADVISOR_ROWS}")
                header = window.panes["Advisor"].header
                if header.height() > 3 * header.fontMetrics().height():
                    problems.append(f"{where}the Advisor's header wraps into {header.height()} px")
    assert len(saved) == len(layouts.LAYOUTS) * len(SIZES)
    assert not problems, "\n".join(problems)
