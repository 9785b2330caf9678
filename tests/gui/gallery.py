"""Helpers of the layout gallery: open real data in a real window, measure what is cut."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QComboBox, QHeaderView, QListWidget, QStyle,
                               QStyleOptionComboBox)

from popview.gui.mainwindow import MainWindow
from popview.gui.theme import apply_theme

PADDING = 8          # a cell's margins and the elision's slack, in pixels


def open_window(qtbot, tmp_path, cache_dir, paths, n_runs: int, size=(1280, 800)) -> MainWindow:
    apply_theme(QApplication.instance())        # as popview starts: the desktop's light or dark
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings, cache_dir=cache_dir)
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    window.open_paths([str(p) for p in paths])
    qtbot.waitUntil(lambda: len(window.state.experiments) == n_runs and not window.jobs, timeout=600_000)
    return window


def settle(qtbot, window) -> None:
    """Let the layout's sizes (asked in turn) and the Advisor's computation land."""
    advisor = window.panes.get("Advisor")
    qtbot.wait(300)
    if advisor is not None and advisor.current_tab() is not None:
        qtbot.waitUntil(lambda: advisor.current_tab().model.rowCount() > 0, timeout=300_000)
    qtbot.wait(300)
    QApplication.processEvents()


def showing(widget) -> bool:
    """On screen: visible, not behind another tab, of some size."""
    return widget.isVisible() and not widget.visibleRegion().isEmpty() and widget.width() > 4


def elided_headers(window) -> list[str]:
    """Header titles wider than their section, in every view on show."""
    cut = []
    for header in window.findChildren(QHeaderView):
        if not showing(header) or header.orientation() != Qt.Orientation.Horizontal:
            continue
        model, metrics = header.model(), header.fontMetrics()
        for section in range(header.count()):
            if header.isSectionHidden(section) or header.sectionSize(section) == 0:
                continue
            text = str(model.headerData(section, Qt.Orientation.Horizontal) or "")
            need = metrics.horizontalAdvance(text) + 2 * PADDING
            if text and need > header.sectionSize(section) + PADDING and _in_view(header, section):
                cut.append(f"{_title(header)}: header {text!r} ({header.sectionSize(section)} px < {need})")
    return cut


def elided_values(window) -> list[str]:
    """Values (every column but the names) wider than their column, in the rows on show."""
    cut = []
    for view in window.findChildren(QAbstractItemView):
        header = getattr(view, "header", None) or getattr(view, "horizontalHeader", None)
        if header is None or not showing(view.viewport()) or view.model() is None:
            continue
        header, metrics = header(), view.fontMetrics()
        for index in _rows_on_show(view):
            for column in range(1, view.model().columnCount(index.parent())):
                cell = index.siblingAtColumn(column)
                text = str(cell.data() or "")
                if not text or header.isSectionHidden(column) or not _in_view(header, column):
                    continue
                need = metrics.horizontalAdvance(text) + PADDING
                if need > header.sectionSize(column) + PADDING // 2:
                    cut.append(f"{_title(view)}: value {text!r} ({header.sectionSize(column)} px < {need})")
    return cut


def cut_list_items(window) -> list[str]:
    """Entries of lists on show (the timeline's legend) narrower than their text, unless
    wrapped onto lines tall enough for it."""
    cut = []
    for view in window.findChildren(QListWidget):
        if not showing(view.viewport()):
            continue
        metrics = view.fontMetrics()
        for row in range(view.count()):
            item = view.item(row)
            rect = view.visualItemRect(item)
            room = rect.width() - view.iconSize().width() - PADDING
            lines = max(rect.height() // (metrics.height() + 1), 1)
            if metrics.horizontalAdvance(item.text()) > room * lines:
                cut.append(f"{_title(view)}: entry {item.text()!r} ({room} px x {lines} lines)")
    return cut


def cut_choices(window) -> list[str]:
    """Drop-down lists on show whose current choice is wider than their text field."""
    cut = []
    for box in window.findChildren(QComboBox):
        if not showing(box) or not box.currentText():
            continue
        option = QStyleOptionComboBox()
        box.initStyleOption(option)
        field = box.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                           QStyle.SubControl.SC_ComboBoxEditField, box)
        need = box.fontMetrics().horizontalAdvance(box.currentText())
        if need > field.width():
            cut.append(f"{_title(box)}: choice {box.currentText()!r} ({field.width()} px < {need})")
    return cut


def advisor_rows(window) -> int:
    """How many metric rows the Advisor's tree has room for."""
    tab = window.panes["Advisor"].current_tab()
    tree = tab.tree
    row = tree.rowHeight(tree.model().index(0, 0)) or tree.fontMetrics().height() + 6
    return tree.viewport().height() // row if showing(tree) else 0


def _rows_on_show(view):
    model = view.model()
    index = view.indexAt(view.viewport().rect().topLeft())
    seen = 0
    while index.isValid() and seen < 200:
        rect = view.visualRect(index)
        if rect.top() > view.viewport().height():
            break
        yield index
        seen += 1
        index = view.indexBelow(index) if hasattr(view, "indexBelow") else model.index(index.row() + 1, 0)


def _in_view(header, section: int) -> bool:
    """Whether the section starts inside the header's width (scrolled-out columns are not cut)."""
    x = header.sectionViewportPosition(section)
    return 0 <= x < header.width() - 4


def _title(widget) -> str:
    w = widget
    while w is not None:
        if w.metaObject().className() == "QDockWidget":
            return w.windowTitle()
        w = w.parentWidget()
    return widget.metaObject().className()


@pytest.fixture(autouse=True)
def plots_as_before():
    """The theme a gallery window applies stays with it (imported by the tests that use one)."""
    import pyqtgraph as pg
    before = {k: pg.getConfigOption(k) for k in ("background", "foreground")}
    yield
    for k, v in before.items():
        pg.setConfigOption(k, v)
