"""The Bookmarks pane: named snapshots of the view, and the annotations.

One click on a bookmark restores its view state; bookmarks can be renamed,
reordered (drag or the arrows), deleted and carry a free-text note.
Ctrl+B (Bookmarks > Bookmark this view) asks for a name and a note.
The lower list shows every annotation of the session: a click goes to it,
a double-click edits it; Add annotates what is selected now.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QDialogButtonBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QListWidget,
    QListWidgetItem, QMenu, QPlainTextEdit, QSplitter, QToolButton, QVBoxLayout, QWidget,
)

from popview.gui.annotations import (annotate, callpath_name, describe, edit_annotation, go_to_annotation,
                                     location_name)
from popview.gui.session_binding import binding_for
from popview.gui.widgets.units import focus_text, format_span

ID_ROLE = Qt.ItemDataRole.UserRole


class BookmarkDialog(QDialog):
    """Name and note of a bookmark."""

    def __init__(self, name: str, note: str = "", parent=None):
        super().__init__(parent)
        self.setWindowTitle("Bookmark this view")
        self.name = QLineEdit(name)
        self.note = QPlainTextEdit(note)
        self.note.setPlaceholderText("What this view shows, what to do next...")
        form = QFormLayout(self)
        form.addRow("Name", self.name)
        form.addRow("Note", self.note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)


def _tool(text: str, tip: str, slot) -> QToolButton:
    b = QToolButton()
    b.setText(text)
    b.setToolTip(tip)
    b.clicked.connect(lambda _c=False: slot())
    return b


class BookmarksPane(QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.binding = binding_for(state)
        self.list = QListWidget()
        self.list.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed
                                  | QAbstractItemView.EditTrigger.SelectedClicked)
        self.list.itemClicked.connect(self._restore_item)
        self.list.itemChanged.connect(self._renamed)
        self.list.currentItemChanged.connect(self._show_note)
        self.list.model().rowsMoved.connect(self._reordered)
        self.note = QPlainTextEdit()
        self.note.setPlaceholderText("Note of the selected bookmark")
        self.note.setMaximumHeight(90)
        self.note.textChanged.connect(self._note_edited)
        self.annotation_list = QListWidget()
        self.annotation_list.itemDoubleClicked.connect(self._edit_annotation_item)
        self.annotation_list.itemClicked.connect(
            lambda item: go_to_annotation(self.state, self.state.session.annotation(item.data(ID_ROLE))))

        buttons = QHBoxLayout()
        for text, tip, slot in (("+", "Bookmark this view (Ctrl+B)", self.bookmark_view),
                                ("Rename", "Rename the selected bookmark (F2)", self._start_rename),
                                ("\u2191", "Move up", lambda: self._move(-1)),
                                ("\u2193", "Move down", lambda: self._move(1)),
                                ("Delete", "Delete the selected bookmark", self.delete_selected)):
            buttons.addWidget(_tool(text, tip, slot))
        buttons.addStretch(1)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addLayout(buttons)
        top_layout.addWidget(self.list, 1)
        top_layout.addWidget(self.note)
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        ann_buttons = QHBoxLayout()
        ann_buttons.addWidget(QLabel("Annotations"))
        ann_buttons.addStretch(1)
        self.annotate_button = QToolButton()
        self.annotate_button.setText("Add")
        self.annotate_button.setToolTip("Annotate the selected call path, location, the timeline's window "
                                        "or the current experiment")
        self.annotate_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.annotate_menu = QMenu(self.annotate_button)
        self.annotate_menu.aboutToShow.connect(self._fill_annotate_menu)
        self.annotate_button.setMenu(self.annotate_menu)
        ann_buttons.addWidget(self.annotate_button)
        ann_buttons.addWidget(_tool("Edit", "Edit the selected annotation", self._edit_selected_annotation))
        ann_buttons.addWidget(_tool("Delete", "Delete the selected annotation", self._delete_selected_annotation))
        bottom_layout.addLayout(ann_buttons)
        bottom_layout.addWidget(self.annotation_list, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        splitter.addWidget(bottom)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(splitter)

        self.add_action = QAction("&Bookmark this view...", self)
        self.add_action.setShortcut(QKeySequence("Ctrl+B"))
        self.add_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        self.add_action.triggered.connect(lambda _c=False: self.bookmark_view())
        self.binding.bookmarksChanged.connect(self.refresh)
        self.binding.sessionReplaced.connect(self.refresh)
        state.annotationsChanged.connect(self.refresh_annotations)
        self.refresh()
        self.refresh_annotations()

    def menu_actions(self) -> dict:
        return {"Bookmarks": [self.add_action]}

    # ---- bookmarks ---------------------------------------------------------
    def refresh(self) -> None:
        current = self.selected_id()
        self.list.blockSignals(True)
        self.list.clear()
        for bm in self.state.session.bookmarks:
            item = QListWidgetItem(bm.name)
            item.setData(ID_ROLE, bm.id)
            item.setToolTip(bm.note or "(no note)")
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable | Qt.ItemFlag.ItemIsDragEnabled)
            self.list.addItem(item)
            if bm.id == current:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        self._show_note(self.list.currentItem())

    def selected_id(self) -> str | None:
        item = self.list.currentItem()
        return item.data(ID_ROLE) if item is not None else None

    def ask_bookmark(self, default_name: str) -> tuple[str, str] | None:
        """(name, note) from the user, or None if cancelled."""
        dialog = BookmarkDialog(default_name, parent=self)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.name.text().strip() or default_name, dialog.note.toPlainText()

    def bookmark_view(self):
        n = len(self.state.session.bookmarks) + 1
        answer = self.ask_bookmark(f"Bookmark {n}: {focus_text(self.state.focus)}")
        if answer is None:
            return None
        bm = self.binding.add_bookmark(*answer)
        self.list.setCurrentRow(self.list.count() - 1)
        return bm

    def restore(self, bm_id: str) -> None:
        self.binding.restore_bookmark(bm_id)

    def _restore_item(self, item) -> None:
        self.restore(item.data(ID_ROLE))

    def _start_rename(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.list.editItem(item)

    def rename(self, bm_id: str, name: str) -> None:
        def change(session):
            session.bookmark(bm_id).name = name
        self.binding.edit_bookmarks(change)

    def _renamed(self, item) -> None:
        bm = self.state.session.bookmark(item.data(ID_ROLE))
        name = item.text().strip()
        if name and name != bm.name:
            self.rename(bm.id, name)

    def move(self, bm_id: str, new_index: int) -> None:
        self.binding.edit_bookmarks(lambda session: session.move_bookmark(bm_id, new_index))

    def _move(self, step: int) -> None:
        bm_id = self.selected_id()
        if bm_id is not None:
            self.move(bm_id, self.list.currentRow() + step)

    def _reordered(self, *_args) -> None:
        order = [self.list.item(i).data(ID_ROLE) for i in range(self.list.count())]
        by_id = {b.id: b for b in self.state.session.bookmarks}

        def change(session):
            session.bookmarks = [by_id[i] for i in order if i in by_id]
        self.binding.edit_bookmarks(change)

    def delete(self, bm_id: str) -> None:
        self.binding.edit_bookmarks(lambda session: session.remove_bookmark(bm_id))

    def delete_selected(self) -> None:
        bm_id = self.selected_id()
        if bm_id is not None:
            self.delete(bm_id)

    def _show_note(self, item, _previous=None) -> None:
        self.note.blockSignals(True)
        self.note.setPlainText(self.state.session.bookmark(item.data(ID_ROLE)).note if item else "")
        self.note.setEnabled(item is not None)
        self.note.blockSignals(False)

    def _note_edited(self) -> None:
        bm_id = self.selected_id()
        if bm_id is None:
            return
        bm = self.state.session.bookmark(bm_id)
        bm.note = self.note.toPlainText()
        self.list.currentItem().setToolTip(bm.note or "(no note)")
        self.binding.mark_dirty()

    # ---- annotations --------------------------------------------------------
    def refresh_annotations(self) -> None:
        self.annotation_list.clear()
        session = self.state.session
        labels = {r.id: r.label or r.resolved().name for r in session.experiments}
        for ann in session.annotations:
            exp = self.binding.experiment_for(ann.experiment)
            item = QListWidgetItem(f"{describe(ann, exp)} [{labels.get(ann.experiment, '-')}]: {ann.text}")
            item.setData(ID_ROLE, ann.id)
            item.setToolTip(ann.text)
            self.annotation_list.addItem(item)

    def annotation_targets(self) -> list[tuple[str, str, dict]]:
        """(menu text, kind, target) for what is selected now."""
        s = self.state
        if s.current is None:
            return []
        out = []
        if s.callpath >= 0:
            out.append((f"Selected call path {callpath_name(s.current, s.callpath)}...", "callpath",
                        {"callpath": s.callpath}))
        if s.location >= 0:
            out.append((f"Selected location {location_name(s.current, s.location)}...", "location",
                        {"location": s.location}))
        window = self.binding.time_window
        if window is not None and window[1] > window[0]:
            out.append((f"Timeline window {format_span(window[0], window[1])}...", "time_range",
                        {"t0": window[0], "t1": window[1]}))
        out.append((f"Experiment {s.current.name}...", "experiment", {}))
        return out

    def _fill_annotate_menu(self) -> None:
        self.annotate_menu.clear()
        targets = self.annotation_targets()
        for text, kind, target in targets:
            act = self.annotate_menu.addAction(text)
            act.triggered.connect(lambda _c=False, k=kind, t=target: annotate(self.state, k, self, **t))
        if not targets:
            self.annotate_menu.addAction("(open an experiment first)").setEnabled(False)

    def _selected_annotation(self):
        item = self.annotation_list.currentItem()
        return self.state.session.annotation(item.data(ID_ROLE)) if item else None

    def _edit_annotation_item(self, item) -> None:
        edit_annotation(self.state, self.state.session.annotation(item.data(ID_ROLE)), self)

    def _edit_selected_annotation(self) -> None:
        ann = self._selected_annotation()
        if ann is not None:
            edit_annotation(self.state, ann, self)

    def _delete_selected_annotation(self) -> None:
        ann = self._selected_annotation()
        if ann is not None:
            self.state.session.remove_annotation(ann.id)
            self.binding.annotations_edited()
