"""Annotations in the window: adding, editing and reading them for drawing.

Annotations live in ``state.session.annotations`` (popview.session model);
every change emits ``state.annotationsChanged``. Panes draw them with

* ``marked_callpaths(state)`` / ``marked_locations(state)``: {id: [texts]}
  of the current experiment, for a marker in the call / system trees;
* ``time_ranges(state)``: shaded, labelled ranges for the timeline;

and offer them in their context menus with one line:
``menu.addActions(context_actions(state, "callpath", menu, callpath=cp))``.
"""
from __future__ import annotations

from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import (
    QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QLabel, QPlainTextEdit,
)

from popview.gui.session_binding import binding_for
from popview.gui.widgets.units import format_span

COLOURS = [("Yellow", "#f2c200"), ("Red", "#d62728"), ("Green", "#2ca02c"), ("Blue", "#1f77b4"),
           ("Purple", "#9467bd"), ("Grey", "#7f7f7f")]
KIND_NAMES = {"callpath": "call path", "location": "location", "time_range": "time range", "experiment": "experiment"}


def describe(ann, exp=None) -> str:
    """A short name for what an annotation is attached to: the call path's or location's
    name when its experiment is open, its number otherwise."""
    if ann.kind == "callpath":
        return f"call path {callpath_name(exp, ann.callpath)}"
    if ann.kind == "location":
        return f"location {location_name(exp, ann.location)}"
    if ann.kind == "time_range":
        where = f" on {location_name(exp, ann.location)}" if ann.location is not None else ""
        return f"{format_span(ann.t0, ann.t1)}{where}"
    return "experiment"


def callpath_name(exp, cp: int) -> str:
    from popview.gui.trees.source import profile_values

    pv = profile_values(exp) if exp is not None else None
    if pv is not None and 0 <= cp < pv.profile.n_callpaths:
        return pv.profile.name(cp)
    return f"#{cp}"


def location_name(exp, loc: int) -> str:
    defs = getattr(exp, "definitions", None)
    if defs is None or not 0 <= loc < len(defs.locations):
        return f"#{loc}"
    location = defs.locations[loc]
    procs = defs.processes
    proc = procs[location.process].name if 0 <= location.process < len(procs) else ""
    return f"{proc} · {location.name}" if proc and proc != location.name else location.name


class AnnotationDialog(QDialog):
    """Text, colour and (for a time range) the range of an annotation."""

    def __init__(self, kind: str, text: str = "", color: str | None = None, t0=None, t1=None, parent=None):
        super().__init__(parent)
        self.setWindowTitle(f"Annotate {KIND_NAMES[kind]}")
        form = QFormLayout(self)
        self.text = QPlainTextEdit(text)
        self.text.setPlaceholderText("What is remarkable here")
        form.addRow("Note", self.text)
        self.colour = QComboBox()
        for name, hex_code in COLOURS:
            self.colour.addItem(name, hex_code)
        if color and self.colour.findData(color) >= 0:
            self.colour.setCurrentIndex(self.colour.findData(color))
        form.addRow("Colour", self.colour)
        self.t0 = self.t1 = None
        if kind == "time_range":
            self.t0, self.t1 = QDoubleSpinBox(), QDoubleSpinBox()
            for box, value in ((self.t0, t0), (self.t1, t1)):
                box.setDecimals(9)
                box.setRange(0, 1e9)
                box.setSuffix(" s")
                box.setValue((value or 0) / 1e9)
            form.addRow("From", self.t0)
            form.addRow("To", self.t1)
        self.error = QLabel()
        form.addRow(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._check)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _check(self) -> None:
        if self.t0 is not None and self.t1.value() <= self.t0.value():
            self.error.setText("The range must end after it starts.")
            return
        self.accept()

    def values(self) -> dict:
        out = {"text": self.text.toPlainText(), "color": self.colour.currentData()}
        if self.t0 is not None:
            out.update(t0=round(self.t0.value() * 1e9), t1=round(self.t1.value() * 1e9))
        return out


def ask_annotation(kind: str, parent=None, **initial) -> dict | None:
    """The user's text/colour/range for an annotation, or None if cancelled."""
    dialog = AnnotationDialog(kind, parent=parent, **initial)
    return dialog.values() if dialog.exec() == QDialog.DialogCode.Accepted else None


def annotate(state, kind: str, parent=None, values: dict | None = None, **target):
    """Attach a new annotation to the current experiment; asks the user unless `values` given."""
    binding = binding_for(state)
    exp_id = binding.ref_id_of(state.current)
    if exp_id is None:
        return None
    if values is None:
        values = ask_annotation(kind, parent, t0=target.get("t0"), t1=target.get("t1"))
        if values is None:
            return None
    ann = state.session.add_annotation(kind, experiment=exp_id, **{**target, **values})
    binding.annotations_edited()
    return ann


def edit_annotation(state, ann, parent=None, values: dict | None = None) -> bool:
    if values is None:
        values = ask_annotation(ann.kind, parent, text=ann.text, color=ann.color, t0=ann.t0, t1=ann.t1)
        if values is None:
            return False
    for key, value in values.items():
        setattr(ann, key, value)
    binding_for(state).annotations_edited()
    return True


def delete_annotation(state, ann) -> None:
    state.session.remove_annotation(ann.id)
    binding_for(state).annotations_edited()


def current_annotations(state, kind: str | None = None) -> list:
    """The annotations of the current experiment (optionally of one kind)."""
    if state.current is None or state.session is None:
        return []
    return state.session.annotations_for(state.current.source, kind)


def marked_callpaths(state) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for ann in current_annotations(state, "callpath"):
        out.setdefault(ann.callpath, []).append(ann.text)
    return out


def marked_locations(state) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for ann in current_annotations(state, "location"):
        out.setdefault(ann.location, []).append(ann.text)
    return out


def time_ranges(state) -> list[tuple[int, int, str, QColor, int | None]]:
    """(t0, t1, label, colour, location or None) for the timeline to shade."""
    return [(a.t0, a.t1, a.text, QColor(a.color or COLOURS[0][1]), a.location)
            for a in current_annotations(state, "time_range")]


def context_actions(state, kind: str, parent, **target) -> list[QAction]:
    """'Annotate...' plus edit/delete for the annotations already on this target."""
    if state.current is None:
        return []
    add = QAction(f"Annotate this {KIND_NAMES[kind]}...", parent)
    add.triggered.connect(lambda _c=False: annotate(state, kind, parent, **target))
    actions = [add]
    for ann in current_annotations(state, kind):
        if all(getattr(ann, k) == v for k, v in target.items()):
            short = ann.text if len(ann.text) <= 30 else ann.text[:29] + "\u2026"
            edit = QAction(f"Edit annotation \u201c{short}\u201d...", parent)
            edit.triggered.connect(lambda _c=False, a=ann: edit_annotation(state, a, parent))
            delete = QAction(f"Delete annotation \u201c{short}\u201d", parent)
            delete.triggered.connect(lambda _c=False, a=ann: delete_annotation(state, a))
            actions += [edit, delete]
    return actions


def go_to_annotation(state, ann) -> None:
    """Show what an annotation is attached to: its experiment, call path, location or range."""
    exp = binding_for(state).experiment_for(ann.experiment)
    if exp is not None:
        state.set_current(exp)
    if ann.callpath is not None:
        state.select_callpath(ann.callpath)
    if ann.location is not None:
        state.select_location(ann.location)
    if ann.kind == "time_range":
        state.timeWindowChanged.emit(ann.t0, ann.t1)
