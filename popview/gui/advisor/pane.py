"""The Advisor pane: POP metrics of the focus of analysis, one tab per variant."""
from __future__ import annotations

import functools
from html import escape
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (QFileDialog, QLabel, QMessageBox, QSizePolicy, QSplitter, QTabWidget,
                               QVBoxLayout, QWidget)

from popview.analysis import algebra_meaning
from popview.analysis.focus import Focus
from popview.analysis.report import candidates as cand
from popview.analysis.report import compute, variants
from popview.analysis.report import warnings as warn
from popview.gui.advisor import export, palette
from popview.gui.advisor.candidates import CandidatesWidget
from popview.gui.advisor.runs import series_runs
from popview.gui.advisor.tab import VariantTab
from popview.gui.jobs import Lane
from popview.gui.widgets.elided import ElidedLabel
from popview.gui.widgets.builds import CANCELLED, PaneBuilds
from popview.gui.widgets.runtitle import titled
from popview.gui.widgets.units import MICRO, focus_text

WINDOW_FOCI = ("window", "iterations", "auto")   # foci that read the window sums (auto: iterations, often)
LOW_DOCK = 320
"""Below this height (px) the Advisor keeps its room for the tree."""


def algebra_label(exp) -> str:
    """What an algebra result's figures are (File > Compare runs), for the header."""
    info = algebra_meaning.algebra_info(exp) if exp is not None else None
    if info is None:
        return ""
    what = ("values are A - B of the two runs' own metrics (percentage points), not efficiencies"
            if info["operation"] == "difference" else "metrics computed from the combined profile")
    return f"<br><i>{escape(algebra_meaning.describe(info))}: {escape(what)}</i>"




class AdvisorPane(QWidget):
    """Reads AppState (current experiment, focus); writes the call-path selection and focus."""

    pane_id = "advisor"
    title = "Advisor"
    updated = Signal(str)              # variant key whose tab has just been filled
    reportWritten = Signal(str, str)   # path, error ("" when written)

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self._exp = None
        self._candidate_results: dict = {}   # (exp id, variant key) -> candidates
        self._results: dict = {}       # (exp id, focus, variant key, reference id, series ids) -> (roots, warnings, notes)
        self._shown_warnings: tuple = ([], [])
        self.runner = Lane(self, "Advisor")
        self.candidate_runner = Lane(self, "Advisor candidates")
        self.report_runner = Lane(self, "report")
        self._sums_failed: dict[int, str] = {}
        self._sums_cancelled: set[int] = set()     # runs whose build was cancelled: asked again by a focus chosen
        self._sums_asked: set[int] = set()         # runs whose build was asked for again (focus chosen, link)
        self.building = QVBoxLayout()
        self._sums_builds = PaneBuilds(self, self.building, "window sums",
                                       lambda exp, result, error: self._sums_built(exp, error, result),
                                       self._sums_progress)

        self.header = QLabel(self)
        self.header.setTextFormat(Qt.RichText)
        self.header.setWordWrap(True)          # long labels must not widen the dock; a row of its own
        self.note = ElidedLabel("", self)      # why this variant: one line, the whole of it on hover
        self.note.setStyleSheet("QLabel { color: palette(placeholder-text); }")
        self.warnings = QLabel(self)
        self.warnings.setWordWrap(True)
        self.warnings.setTextFormat(Qt.RichText)
        self.warnings.setStyleSheet("QLabel { background: #fff4ce; color: #3d3000; border: 1px solid #e0c060;"
                                    " border-radius: 3px; padding: 4px; }")
        self.warnings.hide()
        self.notes = QLabel(self)
        self.notes.setTextFormat(Qt.RichText)
        self.notes.setWordWrap(True)
        self.notes.setStyleSheet("QLabel { color: palette(placeholder-text); font-size: small; }")
        self.notes.hide()
        # their one line in a low pane is cut to the pane's width: as wide as the text, it held
        # the pane (and the window, 1287 px for 1280 in Timeline first) at the width it had
        for label in (self.warnings, self.notes):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.candidates = CandidatesWidget(self)

        self.split = split = QSplitter(Qt.Vertical, self)
        top = QWidget(split)
        top_lay = QVBoxLayout(top)
        top_lay.setContentsMargins(0, 0, 0, 0)
        for w in (self.header, self.note, self.warnings):
            top_lay.addWidget(w)
        top_lay.addLayout(self.building)
        for w in (self.tabs, self.notes):
            top_lay.addWidget(w)
        split.addWidget(top)
        split.addWidget(self.candidates)
        self.tabs.setCornerWidget(self.candidates.find_button)    # folded: one button beside the tabs
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(split)

        # bound methods, not lambdas: Qt drops them when the pane goes, the AppState stays
        self.tabs.currentChanged.connect(self.refresh)
        self.tabs.currentChanged.connect(self._show_tab_candidates)
        self.candidates.requested.connect(self._find_candidates)
        self.candidates.chosen.connect(self._choose_candidate)
        self.candidates.expandedChanged.connect(lambda _on: self._arrange())
        state.currentExperimentChanged.connect(self._rebuild)
        state.experimentsChanged.connect(self._rebuild)
        state.focusChanged.connect(self._focus_changed)
        state.scalingChanged.connect(self.refresh)     # strong / weak as chosen in the Scaling pane
        palette.setting().changed.connect(self._repaint)
        self._rebuild()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._arrange()

    def _arrange(self) -> None:
        """Candidates folded into one line below the tree until asked for; then beside
        the tree in a wide, low dock, below it otherwise. A low dock (a strip under a tall
        timeline) drops the variant's note and keeps one line of warnings for the tree."""
        size = self.size()
        low = size.height() < LOW_DOCK
        if low != getattr(self, "_low", None):
            self._low = low
            self.note.setVisible(not low or self._exp is None)     # nothing open: the hint stays
            for i in range(self.tabs.count()):
                self.tabs.widget(i).set_compact(low)
            self._show_warnings(*self._shown_warnings)
        elif low:
            self._show_warnings(*self._shown_warnings)    # its one line fitted to the new width
        expanded = self.candidates.expanded
        self.candidates.setVisible(expanded)       # folded: only its button, in the tabs' corner
        wide = expanded and size.width() > 2 * size.height()
        orientation = Qt.Horizontal if wide else Qt.Vertical
        state = (orientation, expanded)
        if state != getattr(self, "_arranged", None):
            self._arranged = state
            self.split.setOrientation(orientation)
            total = size.width() if wide else size.height()
            if not expanded:
                folded = self.candidates.sizeHint().height()
                self.split.setSizes([max(total - folded, 1), folded])
            else:
                self.split.setSizes([int(total * 0.62), int(total * 0.38)] if wide else
                                    [int(total * 0.6), int(total * 0.4)])

    # ---- tabs ---------------------------------------------------------
    def tab(self, key: str) -> VariantTab | None:
        for i in range(self.tabs.count()):
            if self.tabs.widget(i).variant.key == key:
                return self.tabs.widget(i)
        return None

    def current_tab(self) -> VariantTab | None:
        return self.tabs.currentWidget()

    def select_variant(self, key: str) -> None:
        t = self.tab(key)
        if t is not None:
            self.tabs.setCurrentWidget(t)

    def _rebuild(self, *_signal_args) -> None:
        live = {id(e) for e in self.state.experiments}      # what is kept by a run's id goes with it:
        for kept in (self._sums_failed, self._candidate_results):   # Python gives its id to a later one
            for key in [k for k in kept if (k[0] if isinstance(k, tuple) else k) not in live]:
                del kept[key]
        self._sums_cancelled &= live
        self._sums_asked &= live
        exp = self.state.current
        if exp is self._exp and self.tabs.count():
            self.refresh()
            return
        self._sums_builds.cancel_all_but(set() if exp is None else {id(exp)})   # runs no longer shown
        self._exp = exp
        self._results.clear()
        self.candidates.clear()
        self.tabs.blockSignals(True)
        while self.tabs.count():
            w = self.tabs.widget(0)
            self.tabs.removeTab(0)
            w.deleteLater()
        if exp is not None:
            best, why = variants.preferred(exp)
            for v in variants.applicable(exp):
                tab = VariantTab(v, self.tabs)
                tab.message.linkActivated.connect(self._sums_again)
                tab.set_compact(getattr(self, "_low", False))
                tab.tree.setMinimumHeight(44)     # scrolls: a low dock must not push the window taller
                self.tabs.addTab(tab, v.label)
            self.select_variant(best.key)
            self.note.setText(f"Preselected: {best.label}. {why}")
        else:
            self.note.setText("Open a trace or profile to see its POP metrics: drop it here, or File > Open.")
        self.note.setVisible(not getattr(self, "_low", False) or exp is None)
        self.tabs.blockSignals(False)
        self.refresh()

    def _repaint(self, _palette: str) -> None:
        for i in range(self.tabs.count()):
            self.tabs.widget(i).tree.viewport().update()

    # ---- computing ----------------------------------------------------
    def refresh(self, *_signal_args) -> None:
        """Show the current tab for the current focus, computing it if needed."""
        exp, focus, tab = self._exp, self.state.focus, self.current_tab()
        reference = self.reference()
        if exp is None:
            self.header.setText("<b>Advisor:</b> no experiment open")
        else:
            opened = self.state.experiments
            self.header.setText(f"<b>Advisor:</b> {escape(focus_text(focus))}" +
                                f" &mdash; {escape(titled(exp, opened))}" +
                                (f" &mdash; scalabilities against {escape(titled(reference, opened))}"
                                 if reference is not None else "") + algebra_label(exp))
        if exp is None or tab is None:
            self._show_warnings([], [])
            return
        runs = series_runs(self.state) if reference is not None else None
        scaling = self.state.scaling
        key = (id(exp), focus, tab.variant.key, id(reference), tuple(id(r) for r in runs or ()), scaling)
        if key in self._results:
            self._show(tab, *self._results[key])
            return
        if focus.kind in WINDOW_FOCI and not self._window_sums_ready(exp, tab):
            return
        tab.show_busy()

        def job():
            trees = compute.variant(exp, tab.variant, focus, reference, runs, scaling)
            return [r for t in trees for r in t.roots], warn.collect(exp, trees, focus, micro=MICRO), warn.notes(trees)
        self.runner.submit(job, lambda result, error: self._arrived(key, tab, result, error))

    def _focus_changed(self, *_signal_args) -> None:
        """A focus chosen again asks again for window sums whose build was cancelled or failed."""
        if self._exp is not None:
            self._sums_cancelled.discard(id(self._exp))
            self._sums_failed.pop(id(self._exp), None)
            self._sums_asked.add(id(self._exp))
        self.refresh()

    def _window_sums_ready(self, exp, tab) -> bool:
        """Whether the run's window sums (popview.cache.window_sums: what time-window and
        iteration foci read) are open. If not, they are built on a lane of their own with
        their progress and Cancel (JobProgress) above the tabs (seconds on a large trace; a
        cache converted by the CLI has none), never in the GUI thread, and the Advisor
        computes once they are there. A cancelled build leaves nothing and the tab says
        so, a failed one (a full disk: popview.cache.companion) says why, until the focus is
        chosen again or its link is followed; so does a build that failed elsewhere (the Scaling
        pane, a script: the run remembers it, Experiment.window_sums_failure), not tried again."""
        if getattr(exp, "window_sums_prepared", True):
            return True
        failed = self._sums_failed.get(id(exp))
        remembered = getattr(exp, "window_sums_failure", None)
        if failed is None and id(exp) not in self._sums_asked and remembered is not None:
            from popview.failures import one_line     # failed before (the Scaling pane, ...): not tried again

            failed = one_line(remembered)
        if failed is not None:
            tab.show_done()
            tab.show_roots([])
            self._show_warnings([], [])
            tab.show_message(f"<b>Not computed:</b> the window sums of {escape(exp.name)} (what this focus reads) "
                             f"could not be built: {escape(failed)}. Choose the focus again or "
                             '<a href="again">try again</a>.')
            return False
        if id(exp) in self._sums_cancelled:
            tab.show_done()
            tab.show_roots([])
            self._show_warnings([], [])
            tab.show_message(f"<b>Not computed:</b> building the window sums of {escape(exp.name)} (what "
                             "this focus reads) was cancelled; nothing was kept. Choose the focus again or "
                             '<a href="again">build them now</a>.')
            return False
        tab.show_busy()
        tab.show_roots([])        # not the previous focus's figures under this focus's header for that long
        self._show_warnings([], [])
        tab.show_message(f"<i>preparing the window sums of {escape(exp.name)}...</i>")
        asked = id(exp) in self._sums_asked       # otherwise a build failing meanwhile (another pane) is not redone
        self._sums_asked.discard(id(exp))
        self._sums_builds.start(exp, functools.partial(exp.prepare_window_sums, again=asked))
        return False

    def _sums_again(self, _link: str = "") -> None:
        if self._exp is not None:
            self._sums_cancelled.discard(id(self._exp))
            self._sums_failed.pop(id(self._exp), None)
            self._sums_asked.add(id(self._exp))
        self.refresh()


    def _sums_progress(self, exp, fraction: float) -> None:
        tab = self.current_tab()
        if tab is not None and exp is self._exp:
            tab.show_message(f"<i>preparing the window sums of {escape(exp.name)}: {100 * fraction:.0f} %</i>")

    def _sums_built(self, exp, error: str | None, result=None) -> None:
        if result == CANCELLED:
            self._sums_cancelled.add(id(exp))
        elif error is not None:
            self._sums_failed[id(exp)] = error.splitlines()[0]
        if exp is self._exp:
            self.refresh()

    def reference(self):
        """The run scalabilities are measured against: the smallest of the series (None: the run itself)."""
        runs = series_runs(self.state)
        return runs[0] if len(runs) > 1 and runs[0] is not self._exp else None

    def _arrived(self, key, tab, result, error) -> None:
        if error is not None:
            tab.show_done()
            tab.show_roots([])
            tab.show_message(f"<b>Could not compute:</b> {escape(error.splitlines()[0])}")
            self._show_warnings([], [])
            self.updated.emit(tab.variant.key)
            return
        self._results[key] = result
        if self.current_tab() is tab:
            self._show(tab, *result)

    def _show(self, tab, roots, found, notes) -> None:
        """The warnings first, and laid out, so that the tree is opened (tab.show_roots) once to
        the room they leave it; shown after the tree, they took its room and it was opened again."""
        tab.show_done()
        self._show_warnings(found, notes)
        self.layout().activate()
        tab.show_roots(roots)
        self.updated.emit(tab.variant.key)

    def _show_warnings(self, found: list[str], notes: list[str]) -> None:
        # the first warnings in full, the rest counted (all of them on hover): the dock is often low
        self._shown_warnings = (found, notes)
        low = getattr(self, "_low", False)
        keep = 1 if low else 2
        shown = found[:keep]
        more = f" (+{len(found) - keep} more)" if len(found) > keep else ""
        if low and notes:
            more += f" · {len(notes)} note{'s' if len(notes) > 1 else ''} on hover"
        if low and shown:                          # one line in a low dock, fitted to its width
            room = self.width() - 24          # the pane's: the label has not been laid out anew yet
            tail = self.warnings.fontMetrics().horizontalAdvance("\u26a0 " + more)
            shown = [self.warnings.fontMetrics().elidedText(shown[0], Qt.ElideRight, max(room - tail - 12, 60))]
        self.warnings.setText("<br>".join(f"&#9888; {escape(w)}" for w in shown) + escape(more))
        self.warnings.setWordWrap(not low)
        tips = [escape(w) for w in found] + ([f"<i>Notes:</i> {escape(n)}" for n in notes] if low else [])
        self.warnings.setToolTip("<br>".join(tips))
        self.warnings.setVisible(bool(found))
        # one line (they are about how, not what); all of them on hover. A low dock with
        # warnings counts them on the warnings' line instead
        line = f"Notes: {notes[0]}" + (f" (+{len(notes) - 1} more)" if len(notes) > 1 else "") if notes else ""
        if low:
            line = self.notes.fontMetrics().elidedText(line, Qt.ElideMiddle, max(self.width() - 20, 60))
        self.notes.setText(escape(line))
        self.notes.setWordWrap(not low)
        self.notes.setToolTip("<br>".join(escape(n) for n in notes))
        self.notes.setVisible(bool(notes) and not (low and found))

    # ---- candidates ---------------------------------------------------
    def _find_candidates(self, threshold: float) -> None:
        exp, tab = self._exp, self.current_tab()
        if exp is None or tab is None:
            return
        model = tab.variant.models[0]
        self.candidates.set_status(f"Searching call paths with {tab.variant.label}...")
        key = (id(exp), tab.variant.key)
        self.candidate_runner.submit(lambda: cand.find(exp, model, threshold),
                                     lambda result, error: self._candidates_arrived(key, result, error))

    def _candidates_arrived(self, key, result, error) -> None:
        if error is not None:
            self.candidates.set_status(f"Could not search: {error.splitlines()[0]}")
            return
        self._candidate_results[key] = result
        self._show_tab_candidates()

    def _show_tab_candidates(self, *_signal_args) -> None:
        """The candidates found with the model of the tab on show: another model's would name
        its figures (and rate call paths) differently."""
        tab = self.current_tab()
        found = self._candidate_results.get((id(self._exp), tab.variant.key)) if tab is not None else None
        if found is None:
            self.candidates.clear()
        else:
            self.candidates.set_candidates(found)

    def _choose_candidate(self, c) -> None:
        self.state.select_callpath(c.callpath)
        self.state.set_focus(Focus.on_callpath(c.path))

    # ---- report -------------------------------------------------------
    def menu_actions(self) -> dict:
        act = QAction("Export &report...", self)
        act.triggered.connect(lambda _checked=False: self.export_report_dialog())
        return {"File": [act], "View": [palette.setting().action(self)]}

    def report_variants(self) -> list[str]:
        """The variant on show, plus computation / I/O."""
        t = self.current_tab()
        if t is None:
            return None
        return [t.variant.key] + (["computation-io"] if t.variant.key != "computation-io" else [])

    def export_report_dialog(self) -> None:
        if not self.state.experiments:
            QMessageBox.information(self, "Export report", "Open a trace or profile first.")
            return
        name, _ = QFileDialog.getSaveFileName(self, "Export report", "popview-report.html", "HTML (*.html)")
        if name:
            self.export_report(Path(name))

    def export_report(self, path: Path) -> None:
        """Write the report of the current run's series; `reportWritten` tells when it is done."""
        write = export.report_job(self.state, self.window(), self.report_variants())
        self.report_runner.submit(lambda: write(path), lambda result, error: self._report_done(path, error))

    def _report_done(self, path, error) -> None:
        if error is not None:
            self.note.setText(f"Could not write the report {path}: {error.splitlines()[0]}")
        self.reportWritten.emit(str(path), error or "")

    # ---- session ------------------------------------------------------
    def view_state(self) -> dict:
        t = self.current_tab()
        return {"variant": t.variant.key if t else None, "min_share": self.candidates.slider.value()}

    def restore_view_state(self, d: dict) -> None:
        if d.get("variant"):
            self.select_variant(d["variant"])
        if "min_share" in d:
            self.candidates.slider.setValue(int(d["min_share"]))
