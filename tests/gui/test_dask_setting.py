"""The window's setting for converting on a Dask cluster: checked, remembered, and what
the window's openings pass to popview.open."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from popview.gui import dask_setting
from popview.gui.mainwindow import MainWindow
from popview.readers.errors import InputError


@pytest.mark.parametrize("text", ["", "local", "local:3", "tcp://node12:8786", "10.0.0.5:8786",
                                  "tls://[::1]:8786"])
def test_what_names_a_cluster(text):
    assert dask_setting.problem(text) is None


@pytest.mark.parametrize("text", ["local:0", "local:two", "node12", "tcp://node12", "rm -rf /"])
def test_what_does_not_name_a_cluster_is_refused_with_the_forms_that_do(text):
    assert "local:N" in dask_setting.problem(text) and text in dask_setting.problem(text)


def test_the_chosen_cluster_is_remembered_and_passed_to_every_opening(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(dask_setting.cluster, "available", lambda: True)
    settings = QSettings(str(tmp_path / "popview.ini"), QSettings.Format.IniFormat)
    calls = []

    def opener(path, **kwargs):
        calls.append(kwargs)
        raise InputError(f"{path}: not opened by this test")

    w = MainWindow(settings=settings, panes=[], opener=opener)
    qtbot.addWidget(w)
    assert w.dask_action.text() == "Convert on a &Dask cluster..."
    assert w.dask_action.choose("local:4") is None
    assert "local:4" in w.dask_action.text()
    again = MainWindow(settings=settings, panes=[], opener=opener)
    qtbot.addWidget(again)
    trace = tmp_path / "run.prv"
    trace.write_text("#Paraver (01/01/2026 at 00:00):100_ns:0:1:1(1:0)\n")
    again.open_paths([trace])
    qtbot.waitUntil(lambda: bool(calls), timeout=5000)
    assert calls[0]["dask"] == "local:4"
    assert again.dask_action.choose("node12") is not None        # refused, the choice stays
    assert dask_setting.scheduler(settings) == "local:4"
    again.dask_action.choose("")                                   # back to this machine
    calls.clear()
    again.open_paths([trace])
    qtbot.waitUntil(lambda: bool(calls), timeout=5000)
    assert "dask" not in calls[0]


def test_without_dask_the_entry_says_how_to_install_it(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(dask_setting.cluster, "available", lambda: False)
    settings = QSettings(str(tmp_path / "popview.ini"), QSettings.Format.IniFormat)
    settings.setValue(dask_setting.KEY, "local:2")
    w = MainWindow(settings=settings, panes=[])
    qtbot.addWidget(w)
    assert not w.dask_action.isEnabled() and "popview[dask]" in w.dask_action.toolTip()
    assert dask_setting.scheduler(settings) is None            # openings convert here


def test_the_window_starts_without_importing_dask():
    """Asking whether Dask is installed (the File menu's entry) must not import it: the
    import takes 0.4-0.7 s of the window's start."""
    import subprocess
    import sys

    code = ("import sys; from PySide6.QtWidgets import QApplication; app = QApplication([]);"
            "from popview.gui.mainwindow import MainWindow; w = MainWindow(panes=[]);"
            "assert w.dask_action.isEnabled(), 'dask is installed for the tests';"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('distributed', 'dask')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_a_cluster_without_dask_says_how_to_install_it(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name.split(".")[0] == "distributed":
            raise ImportError("No module named 'distributed'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(dask_setting.cluster.ClusterError, match=r"pip install 'popview\[dask\]'"):
        dask_setting.cluster.require()
