"""The first minute: Help > Getting started.

The guide lists the keyboard shortcuts from the window's own actions, so it
is never out of date.
"""
from __future__ import annotations

import html
import sys
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTextBrowser, QVBoxLayout

from popview import readers

GUIDE = """
<h2>Getting started with popview</h2>
<ol>
<li><b>Open a run.</b> Drag {formats}
onto the window, or use File &gt; Open. A folder of runs becomes a scaling series. The first
opening converts the run into a cache; later ones are instant.</li>
<li><b>Pick a focus of analysis.</b> Every POP figure is about one part of the run: the whole
run, a call path (right-click it in the Call tree), a time window (Shift+drag on the
Timeline) or a range of iterations. The focus is shown in the toolbar.</li>
<li><b>Read the Advisor.</b> It shows the POP efficiencies (global, parallel, load balance,
communication, serialisation, transfer, computation scalability) for the focus, in each
variant (POP MPI, hybrid additive and multiplicative, ...). Hover a (?) for the definition
and formula; values below 0.8 deserve a look. The candidates list names the call paths
that lose most.</li>
<li><b>Drill down.</b> Selecting a metric colours the Call tree, selecting a call path colours
the System tree, as in Cube. The Timeline shows what each thread does over time.</li>
<li><b>Keep what you found.</b> Ctrl+B bookmarks the view with a note; Add under the
bookmarks annotates the selected call path, location, time window or run. File &gt; Save session keeps everything in a
<code>.popview</code> file; popview autosaves and offers recovery after a crash.</li>
</ol>
<p>Try it on the demo: <code>popview --demo</code> opens a small hybrid MPI + OpenMP scaling series
with a focus and a bookmark already set.</p>
"""


def docs_dir() -> Path | None:
    """The docs/ folder beside the package (source tree) or inside a bundle."""
    bases = [Path(sys._MEIPASS)] if hasattr(sys, "_MEIPASS") else []
    bases.append(Path(__file__).resolve().parents[2])
    return next((b / "docs" for b in bases if (b / "docs" / "user-guide.md").exists()), None)


def shortcuts(window) -> list[tuple[str, str]]:
    """(menu path, key sequence) of every action of the window's menus that has a shortcut."""
    out = []

    def walk(menu, prefix):
        for act in menu.actions():
            if act.menu() is not None:
                walk(act.menu(), f"{prefix}{act.menu().title().replace('&', '')} > ")
            elif not act.shortcut().isEmpty():
                out.append((prefix + act.text().replace("&", "").rstrip("."),
                            act.shortcut().toString(QKeySequence.SequenceFormat.NativeText)))
    for act in window.menuBar().actions():
        if act.menu() is not None:
            walk(act.menu(), act.menu().title().replace("&", "") + " > ")
    return out


def guide_html(window) -> str:
    rows = "".join(f"<tr><td>{html.escape(name)}</td><td><b>{html.escape(keys)}</b></td></tr>"
                   for name, keys in shortcuts(window))
    docs = docs_dir()
    links = ("".join(f'<li><a href="{(docs / f).as_uri()}">{f}</a></li>'
                     for f in ("user-guide.md", "cli.md", "api.md", "metrics.md") if (docs / f).exists())
             if docs else "<li>docs/ in the popview sources: user-guide.md, cli.md, api.md</li>")
    return (GUIDE.replace("{formats}", html.escape(readers.described())) + "<h3>Keyboard shortcuts</h3><table cellspacing=4>" + rows
            + "<tr><td>Timeline: zoom / pan / fit</td><td><b>wheel, drag, Home</b></td></tr></table>"
            + "<h3>Documentation</h3><ul>" + links + "</ul>")


class GuideDialog(QDialog):
    def __init__(self, window):
        super().__init__(window)
        self.setWindowTitle("Getting started")
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        self.browser.setHtml(guide_html(window))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
        self.resize(self.fontMetrics().averageCharWidth() * 90, self.fontMetrics().height() * 40)


def install_guide(window) -> QAction:
    """Help > Getting started (F1), first in the Help menu."""
    act = QAction("&Getting started", window)
    act.setShortcut(QKeySequence(QKeySequence.StandardKey.HelpContents))
    act.triggered.connect(lambda _c=False: show_guide(window))
    help_menu = window.menus["Help"]
    first = help_menu.actions()[0] if help_menu.actions() else None
    help_menu.insertAction(first, act)
    return act


def show_guide(window) -> GuideDialog:
    dialog = GuideDialog(window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog


class _FirstPaint(QObject):
    """Calls `fn` once, right after `window` has painted for the first time."""

    def __init__(self, window, fn):
        super().__init__(window)
        self.window, self.fn = window, fn
        window.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if obj is self.window and event.type() == QEvent.Type.Paint:
            self.window.removeEventFilter(self)
            QTimer.singleShot(0, self.fn)
        return False


def after_first_paint(window, fn) -> None:
    """Run `fn` once the window is on screen, so that its work never delays the first paint."""
    _FirstPaint(window, fn)


class CompileNotice(QObject):
    """A labelled step in the status bar while numba compiles popview's kernels (first use
    on a machine only), so the first opening is never a silent 0 % bar."""

    compiled = Signal(str, int, int)          # kernel, done, started: emitted from any thread
    QUIET_MS = 4000                           # hidden again this long after the last compile

    def __init__(self, window):
        super().__init__(window)
        self.label = QLabel()
        self.label.setToolTip("numba compiles popview's kernels on its first use on this machine and keeps "
                              "them in the user cache directory: later starts skip this.")
        self.label.hide()
        window.statusBar().insertPermanentWidget(0, self.label)
        self._quiet = QTimer(self, singleShot=True, interval=self.QUIET_MS)
        self._quiet.timeout.connect(self.label.hide)
        self.compiled.connect(self._show)     # queued into the GUI thread

    def announce(self, kernel: str, done: int, started: int) -> None:
        """From the compiling thread; a closed window must never break a compile."""
        try:
            self.compiled.emit(kernel, done, started)
        except RuntimeError:
            pass

    @Slot(str, int, int)   # a declared slot: compiles are told from other threads (PYSIDE-3124)
    def _show(self, kernel: str, done: int, _started: int) -> None:
        from popview.firstuse import LABEL

        self.label.setText(f"{LABEL[0].upper()}{LABEL[1:]}: compiling its kernels ({done} done)...")
        self.label.show()
        self._quiet.start()


def install_compile_notice(window) -> CompileNotice:
    from popview.firstuse import watch_compiles

    notice = CompileNotice(window)
    stop = watch_compiles(notice.announce)
    notice.destroyed.connect(lambda *_: stop())
    return notice
