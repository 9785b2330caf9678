"""Binds a popview.session.Session to the window.

The binding keeps ``state.session`` (the model) in step with what is open,
captures and restores view states, and adds File > Open / Save / Save As
session, the unsaved-changes prompt on close, autosave with crash recovery
and the dialog that locates a moved trace.

View-state contract
-------------------
A view state is ``{"app": {...}, "panes": {title: {...}}}``. "app" holds what
AppState knows (current experiment, focus, metric, call path, location,
value mode, reference, selection scope) plus the last time window the
timeline announced through ``timeWindowChanged``. A pane that wants its own
state saved (expanded nodes, colour mode, variant...) implements
``view_state() -> dict`` (JSON data only) and ``restore_view_state(d)``;
restore is called after AppState has been restored and must ignore keys it
does not know. Panes without these methods are simply not saved.

Every question to the user goes through an ``ask_*`` method, so tests can
answer them without a modal dialog.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMessageBox

from popview.analysis.focus import Focus
from popview.session import Recovery, Session, SessionError, load, resolve, save
from popview.session.relocate import accept, check
from popview.session.store import SUFFIX

log = logging.getLogger("popview.gui.session")

AUTOSAVE_MS = 120_000
SESSION_FILTER = f"popview sessions (*{SUFFIX});;All files (*)"


def binding_for(state) -> "SessionBinding":
    """The binding of `state`, created on first use."""
    binding = state.findChild(SessionBinding)
    return binding if binding is not None else SessionBinding(state)


def open_session(state, path) -> None:
    """Open a .popview file (drag-and-drop, command line, File menu)."""
    binding_for(state).open(Path(path))


def _same_path(a, b) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)


class SessionBinding(QObject):
    sessionReplaced = Signal()       # a new Session object is in state.session
    bookmarksChanged = Signal()
    dirtyChanged = Signal(bool)
    restored = Signal()              # a view state has been applied

    def __init__(self, state, recovery: Recovery | None = None):
        super().__init__(state)
        self.state = state
        self.window = None
        self.path: Path | None = None
        self.dirty = False
        self.recovery = recovery or Recovery()
        self.time_window: tuple[int, int] | None = None
        self._open_sources: set[str] = set()
        self._pending: dict | None = None      # view to apply once the session's experiments are open
        self._waiting: set[str] = set()
        state.session = Session()
        state.experimentsChanged.connect(self._sync_experiments)
        state.timeWindowChanged.connect(self._remember_window)
        state.focusChanged.connect(lambda _f: self.mark_dirty())
        self.autosave_timer = QTimer(self)
        self.autosave_timer.timeout.connect(self.autosave)
        self._autosaved = True

    @property
    def session(self) -> Session:
        return self.state.session

    # ---- window ------------------------------------------------------------
    def attach(self, window, autosave_ms: int = AUTOSAVE_MS, offer_recovery: bool = True) -> None:
        """Add the session actions to `window`, watch its close, start autosaving."""
        self.window = window
        file_menu = window.menus["File"]
        quit_action = next((a for a in file_menu.actions() if a.text().replace("&", "") == "Quit"), None)
        self.actions = {
            "open": self._action("Open &session...", self.open_dialog, None),
            "save": self._action("&Save session", self.save, QKeySequence.StandardKey.Save),
            "save_as": self._action("Save session &as...", self.save_as, QKeySequence.StandardKey.SaveAs),
        }
        for act in self.actions.values():
            file_menu.insertAction(quit_action, act)
        file_menu.insertSeparator(quit_action)
        window.installEventFilter(self)
        self._show_title()
        self.autosave_timer.start(autosave_ms)
        if offer_recovery:
            QTimer.singleShot(0, self.offer_recovery)

    def _action(self, text, slot, shortcut) -> QAction:
        act = QAction(text, self.window)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        act.triggered.connect(lambda _checked=False: slot())
        return act

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if obj is self.window and event.type() == QEvent.Type.Close:
            if not self.confirm_discard():
                event.ignore()
                return True
            self.autosave_timer.stop()
            self.recovery.discard()
        return False

    def _show_title(self) -> None:
        if self.window is None:
            return
        name = self.path.name if self.path else "untitled session"
        self.window.setWindowFilePath(str(self.path) if self.path else "")
        current = self.state.current
        what = f"{current.name} ({current.label}) - " if current is not None else ""
        self.window.setWindowTitle(f"popview - {what}{name}{' *' if self.dirty else ''}")

    def mark_dirty(self, dirty: bool = True) -> None:
        if dirty:
            self._autosaved = False
        if dirty != self.dirty:
            self.dirty = dirty
            self.dirtyChanged.emit(dirty)
        self._show_title()

    # ---- experiments -------------------------------------------------------
    def _sync_experiments(self) -> None:
        """Add references for newly opened experiments; drop the ones the user closed."""
        now = {os.path.abspath(exp.source): exp for exp in self.state.experiments}
        for source, exp in now.items():
            if source not in self._open_sources:
                ref = self.session.ref_for(source)
                fp = getattr(exp.reader, "fingerprint", None) or None
                if ref is None:
                    self.session.add_experiment(source, fp, exp.label)
                    self.mark_dirty()
                elif fp and ref.fingerprint != fp:
                    ref.fingerprint = fp
        for source in self._open_sources - set(now):
            ref = self.session.ref_for(source)
            if ref is not None and source not in self._waiting:
                self.session.remove_experiment(ref.id)
                self.state.annotationsChanged.emit()
                self.mark_dirty()
        self._open_sources = set(now)
        self._waiting -= set(now)
        self._apply_pending_if_ready()
        self._show_title()

    def experiment_for(self, ref_id: str | None):
        ref = next((r for r in self.session.experiments if r.id == ref_id), None)
        if ref is None:
            return None
        return next((e for e in self.state.experiments if _same_path(e.source, ref.path)), None)

    def ref_id_of(self, exp) -> str | None:
        ref = self.session.ref_for(exp.source) if exp is not None else None
        return ref.id if ref else None

    # ---- view state ----------------------------------------------------------
    def _remember_window(self, t0, t1) -> None:
        if t0 is not None and t1 is not None:
            self.time_window = (int(t0), int(t1))

    def capture(self) -> dict:
        """The whole view state now (see the module docstring)."""
        s = self.state
        app = {"focus": s.focus.to_dict(), "metric": s.metric, "callpath": int(s.callpath),
               "location": int(s.location), "value_mode": s.value_mode,
               "metric_exclusive": bool(s.metric_exclusive), "callpath_exclusive": bool(s.callpath_exclusive)}
        for key, exp in (("current", s.current), ("reference", s.reference)):
            ref_id = self.ref_id_of(exp)
            if ref_id:
                app[key] = ref_id
        series = {self.ref_id_of(exp): name for exp, name in s.series.items() if self.ref_id_of(exp)}
        if series:
            app["series"] = series
        if self.time_window is not None:
            app["time_window"] = list(self.time_window)
        return {"app": app, "panes": self._pane_states()}

    def _pane_states(self) -> dict:
        out = {}
        for title, pane in (self.window.panes.items() if self.window else ()):
            if hasattr(pane, "view_state"):
                try:
                    out[title] = pane.view_state()
                except Exception:  # noqa: BLE001 - one pane's failure must not lose the session
                    log.exception("%s: view_state failed", title)
        return out

    def restore(self, view: dict) -> None:
        """Apply a view state: AppState first, then each pane's own part."""
        app = view.get("app", {})
        s = self.state
        self._restore_series(app.get("series"))
        current = self.experiment_for(app.get("current"))
        if current is not None:
            s.set_current(current)
        if "reference" in app:
            s.set_reference(self.experiment_for(app["reference"]))
        if "focus" in app:
            try:
                s.set_focus(Focus.from_dict(app["focus"]))
            except (TypeError, ValueError) as exc:
                log.warning("focus in the view state ignored: %s", exc)
        if "metric" in app:
            s.select_metric(app["metric"])
        if "callpath" in app:
            s.select_callpath(app["callpath"])
        if "location" in app:
            s.select_location(app["location"])
        if "value_mode" in app:
            s.set_value_mode(app["value_mode"])
        s.set_selection_scope(app.get("metric_exclusive"), app.get("callpath_exclusive"))
        if app.get("time_window"):
            t0, t1 = app["time_window"]
            self.time_window = (t0, t1)
            s.timeWindowChanged.emit(t0, t1)
        for title, pane_state in view.get("panes", {}).items():
            pane = self.window.panes.get(title) if self.window else None
            if pane is not None and hasattr(pane, "restore_view_state"):
                try:
                    pane.restore_view_state(pane_state)
                except Exception:  # noqa: BLE001 - a stale pane state must not stop the rest
                    log.exception("%s: restore_view_state failed", title)
        self.restored.emit()

    def _restore_series(self, saved) -> None:
        """The series names the runs had when saved (a folder's name, not the one the files suggest)."""
        if not isinstance(saved, dict):
            return
        renamed = {exp: str(name) for ref_id, name in saved.items()
                   if (exp := self.experiment_for(ref_id)) is not None and self.state.series.get(exp) != name}
        if renamed:
            self.state.series.update(renamed)
            self.state.experimentsChanged.emit()

    def _layout(self) -> dict:
        if self.window is None:
            return {}
        return {"geometry": bytes(self.window.saveGeometry().toBase64()).decode("ascii"),
                "state": bytes(self.window.saveState().toBase64()).decode("ascii"),
                "name": getattr(self.window, "layout_name", "")}

    def _restore_layout(self, layout: dict) -> None:
        if self.window is None:
            return
        if layout.get("geometry"):
            self.window.restoreGeometry(QByteArray.fromBase64(layout["geometry"].encode("ascii")))
        if layout.get("state"):
            self.window.restoreState(QByteArray.fromBase64(layout["state"].encode("ascii")))
        if layout.get("name") and hasattr(self.window, "show_layout_name"):
            self.window.show_layout_name(str(layout["name"]))

    def snapshot(self) -> Session:
        """The session model with the current view and layout filled in."""
        self.session.view = self.capture()
        self.session.layout = self._layout()
        return self.session

    # ---- bookmarks -------------------------------------------------------------
    def add_bookmark(self, name: str, note: str = ""):
        bm = self.session.add_bookmark(name, self.capture(), note)
        self.bookmarksChanged.emit()
        self.mark_dirty()
        return bm

    def restore_bookmark(self, bm_id: str) -> None:
        self.restore(self.session.bookmark(bm_id).view)

    def edit_bookmarks(self, change) -> None:
        """Apply `change(session)` (rename, reorder, delete) and announce it."""
        change(self.session)
        self.bookmarksChanged.emit()
        self.mark_dirty()

    def annotations_edited(self) -> None:
        self.state.annotationsChanged.emit()
        self.mark_dirty()

    # ---- saving ----------------------------------------------------------------
    def save(self) -> bool:
        if self.path is None:
            return self.save_as()
        return self.save_to(self.path)

    def save_as(self) -> bool:
        path = self.ask_save_path()
        return self.save_to(path) if path else False

    def save_to(self, path: Path) -> bool:
        path = Path(path)
        if path.suffix != SUFFIX:
            path = path.with_name(path.name + SUFFIX)
        try:
            save(self.snapshot(), path)
        except OSError as exc:
            self.warn(f"{path}: cannot save the session: {exc.strerror or exc}")
            return False
        self.path = path
        self.mark_dirty(False)
        self.recovery.discard()
        self._autosaved = True
        return True

    def autosave(self) -> None:
        """Write the recovery file if anything changed since the last save."""
        if self._autosaved or (not self.dirty and self.path is not None):
            return
        try:
            self.recovery.write(self.snapshot(), self.path)
            self._autosaved = True
        except OSError as exc:
            log.warning("autosave failed: %s", exc)

    def confirm_discard(self) -> bool:
        """True when there are no unsaved changes or the user let them go (or saved them)."""
        if not self.dirty:
            return True
        answer = self.ask_save_changes()
        if answer == "save":
            return self.save()
        return answer == "discard"

    # ---- opening -----------------------------------------------------------------
    def open_dialog(self) -> None:
        path = self.ask_open_path()
        if path:
            self.open(path)

    def open(self, path: Path) -> bool:
        """Replace the current session by the one in `path`."""
        try:
            session = load(path)
        except SessionError as exc:
            self.warn(str(exc))
            return False
        if not self.confirm_discard():
            return False
        self.replace(session, Path(path), dirty=False)
        return True

    def replace(self, session: Session, path: Path | None, dirty: bool) -> None:
        """Close what is open, then open `session`'s experiments and apply its view."""
        for exp in list(self.state.experiments):
            self.state.remove_experiment(exp)
        self.state.session = session
        self.path = path
        self._open_sources = set()
        self.sessionReplaced.emit()
        self.bookmarksChanged.emit()
        self.state.annotationsChanged.emit()
        relocated = self._locate_experiments(session, path)
        self.mark_dirty(dirty or relocated)
        self._restore_layout(session.layout)
        self._pending = session.view
        self._waiting = {os.path.abspath(r.path) for r in session.experiments if os.path.exists(r.path)}
        if self._waiting and self.window is not None:
            self._watch_jobs(self.window.open_paths, sorted(self._waiting))
        else:
            self._waiting = set()
        self._apply_pending_if_ready()

    def _watch_jobs(self, open_paths, paths) -> None:
        before = set(self.window.jobs)
        open_paths(paths)
        started = set(self.window.jobs) - before
        for job in started:
            job.finished.connect(lambda j=job: self._job_done(j.path))
        # a path refused before any job started (its failure is already reported) is not awaited
        self._waiting &= {os.path.abspath(j.path) for j in started} | {
            os.path.abspath(e.source) for e in self.state.experiments}

    def _job_done(self, path) -> None:
        self._waiting.discard(os.path.abspath(path))
        self._apply_pending_if_ready()

    def _apply_pending_if_ready(self) -> None:
        if self._pending is not None and not self._waiting:
            view, self._pending = self._pending, None
            dirty = self.dirty
            self.restore(view)
            self.mark_dirty(dirty)      # restoring what was saved is not a change

    def _locate_experiments(self, session: Session, path: Path | None) -> bool:
        """Find every experiment; ask for the missing ones. True if the session changed."""
        roots = [path.parent] if path else []
        changed = False
        for ref in session.experiments:
            res = resolve(ref, roots)
            if res.status == "missing":
                picked = self.ask_locate(ref, res.message)
                if picked is None:
                    continue
                res = check(ref, picked)
                if res.status == "missing":
                    self.warn(res.message)
                    continue
            if res.status == "changed":
                self.warn(res.message)
            if res.status != "ok" and accept(session, res):
                changed = True
        return changed

    # ---- recovery ------------------------------------------------------------------
    def offer_recovery(self) -> bool:
        """After a crash: offer the newest recovery file; True if it was restored."""
        orphans = self.recovery.orphans()
        if not orphans:
            return False
        newest = orphans[0]
        try:
            session = Recovery.load(newest)
        except SessionError as exc:
            self.warn(f"An autosaved session could not be read and was set aside: {exc}")
            Recovery.remove(newest)
            return False
        restore = self.ask_restore(newest, session)
        for p in orphans:
            Recovery.remove(p)
        if restore:
            origin = Path(session.origin) if session.origin else None
            session.origin = None
            self.replace(session, origin, dirty=True)
        return restore

    # ---- questions to the user (replaced in tests) --------------------------------
    def ask_save_changes(self) -> str:
        box = QMessageBox(QMessageBox.Icon.Question, "Unsaved session",
                          "The session has unsaved changes (bookmarks, annotations, open experiments "
                          "or focus). Save them?",
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self.window)
        answer = box.exec()
        return {QMessageBox.StandardButton.Save: "save",
                QMessageBox.StandardButton.Discard: "discard"}.get(QMessageBox.StandardButton(answer), "cancel")

    def ask_save_path(self) -> Path | None:
        start = str(self.path or Path.cwd() / f"analysis{SUFFIX}")
        path, _ = QFileDialog.getSaveFileName(self.window, "Save session", start, SESSION_FILTER)
        return Path(path) if path else None

    def ask_open_path(self) -> Path | None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open session", "", SESSION_FILTER)
        return Path(path) if path else None

    def ask_locate(self, ref, message: str) -> Path | None:
        answer = QMessageBox.question(
            self.window, "Experiment not found",
            f"{message}\n\nThe session refers to {Path(ref.path).name} ({ref.label or 'experiment'}). "
            "Locate it? (Its bookmarks and annotations are kept either way.)")
        if answer != QMessageBox.StandardButton.Yes:
            return None
        path, _ = QFileDialog.getOpenFileName(self.window, f"Locate {Path(ref.path).name}",
                                              str(Path(ref.path).parent),
                                              f"{Path(ref.path).name} (*{Path(ref.path).suffix});;All files (*)")
        return Path(path) if path else None

    def ask_restore(self, path: Path, session: Session) -> bool:
        origin = f" of {session.origin}" if session.origin else ""
        answer = QMessageBox.question(
            self.window, "Restore session?",
            f"popview did not exit cleanly last time. An autosaved session{origin} "
            f"({len(session.experiments)} experiments, {len(session.bookmarks)} bookmarks, "
            f"{len(session.annotations)} annotations) can be restored. Restore it?")
        return answer == QMessageBox.StandardButton.Yes

    def warn(self, message: str) -> None:
        log.warning(message)
        if self.window is not None:
            self.window.errors.append(message)
            box = QMessageBox(QMessageBox.Icon.Warning, "Session", message, QMessageBox.StandardButton.Ok,
                              self.window)
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            box.open()
