"""Qt item models of the coupled trees, lazy over numpy arrays.

A tree is a forest given by a parent array; children lists are built per
parent only when Qt asks for them, so a 100k call-path tree costs nothing
until it is expanded. Each node has an inclusive and an exclusive value;
the row shows the inclusive value while collapsed and the exclusive value
while expanded (Cube semantics). The value mode turns that into absolute,
percent of the tree's root total, percent of the tree's selected node, or
the difference to the same node of a reference experiment.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from popview.gui.trees.values import ROUNDING
from popview.gui.widgets.colorscale import colour
from popview.gui.widgets.units import format_value

FRACTION_ROLE = int(Qt.ItemDataRole.UserRole) + 1     # value / scale, for the colour bar
NODE_ROLE = int(Qt.ItemDataRole.UserRole) + 2         # the node id
_DISPLAY, _DECORATION, _ALIGN, _TOOLTIP, _FONT, _FOREGROUND = (int(r) for r in (
    Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.TextAlignmentRole,
    Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.FontRole, Qt.ItemDataRole.ForegroundRole))
_ROLES = frozenset((_DISPLAY, _DECORATION, _ALIGN, _TOOLTIP, _FONT, _FOREGROUND, FRACTION_ROLE, NODE_ROLE))
_MUTED = QColor("#8a8a8a")
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
MODES = ("absolute", "percent_root", "percent_selection", "difference")


class Forest:
    """Children lists of a parent array, built on demand, optionally sorted or filtered."""

    def __init__(self, parent: np.ndarray):
        self.parent = np.asarray(parent, np.int64)
        n = len(self.parent)
        self.order = np.argsort(self.parent, kind="stable")          # children grouped by parent, by id
        self.first = np.searchsorted(self.parent[self.order], np.arange(-1, n + 1))  # slot p+1 -> start
        self.sort_key: np.ndarray | None = None     # sort children by descending key when set
        self.visible: np.ndarray | None = None      # bool mask when filtered
        self.row = np.full(n, -1, np.int64)
        self._kids: dict[int, list[int]] = {}     # read directly by ValueTreeModel.index (hot path)
        self.has_kids: list[bool] = (np.diff(self.first)[1:] > 0).tolist()   # Python list: Qt asks per row

    def __len__(self) -> int:
        return len(self.parent)

    def invalidate(self) -> None:
        """Forget children lists after the sort key or the filter changed."""
        self._kids.clear()
        self.row.fill(-1)
        if self.visible is None:
            self.has_kids = (np.diff(self.first)[1:] > 0).tolist()
        else:
            shown = self.visible & (self.parent >= 0)
            self.has_kids = (np.bincount(self.parent[shown], minlength=len(self.parent)) > 0).tolist()

    def children(self, node: int) -> list[int]:
        kids = self._kids.get(node)
        if kids is None:
            arr = self.order[self.first[node + 1]:self.first[node + 2]]
            if self.visible is not None:
                arr = arr[self.visible[arr]]
            if self.sort_key is not None and len(arr) > 1:
                arr = arr[np.argsort(-self.sort_key[arr], kind="stable")]
            self.row[arr] = np.arange(len(arr))
            kids = self._kids[node] = arr.tolist()
        return kids

    def has_children(self, node: int) -> bool:
        return self.has_kids[node]

    def row_of(self, node: int) -> int:
        if self.row[node] < 0:
            self.children(int(self.parent[node]))
        return int(self.row[node])

    def ancestors(self, node: int) -> list[int]:
        out = []
        node = int(self.parent[node])
        while node >= 0:
            out.append(node)
            node = int(self.parent[node])
        return out[::-1]


class ValueTreeModel(QAbstractItemModel):
    """Two columns: name (with the colour swatch) and value."""

    value_header = "Value"

    def __init__(self, parent=None):
        super().__init__(parent)
        self.forest = Forest(np.zeros(0, np.int64))
        self.incl = np.zeros(0)
        self.excl = np.zeros(0)
        self.ref_incl: np.ndarray | None = None      # reference values (nan where absent), difference mode
        self.ref_excl: np.ndarray | None = None
        self.unit = ""
        self.mode = "absolute"
        self.selected = -1
        self.expanded: set[int] = set()
        self.scale = 0.0                               # the value that maps to full colour
        self.signed = False                            # some values are negative (differences)
        self.diff_scale = 0.0                          # the same in difference mode: the largest difference

    # ---- what subclasses provide -----------------------------------------------
    def name(self, node: int) -> str:
        raise NotImplementedError

    def tooltip(self, node: int) -> str:
        return self.name(node)

    def font(self, node: int) -> QFont | None:
        return None

    # ---- values -----------------------------------------------------------------
    notes: dict[int, list[str]] = {}

    def set_forest(self, forest: Forest) -> None:
        self.beginResetModel()
        self.forest = forest
        if len(self.incl) != len(forest):           # never index past the values (Qt would crash)
            self.incl = self.excl = np.zeros(len(forest))
            self.ref_incl = self.ref_excl = None
        self.expanded.clear()
        self.selected = -1
        self.endResetModel()

    def set_values(self, incl: np.ndarray, excl: np.ndarray, unit: str,
                   ref_incl: np.ndarray | None = None, ref_excl: np.ndarray | None = None) -> None:
        self.incl, self.excl, self.unit = incl, excl, unit
        self.ref_incl, self.ref_excl = ref_incl, ref_excl
        finite = np.asarray(incl, float)[np.isfinite(incl)] if len(incl) else np.zeros(0)
        # signed values (an algebra result's differences): the largest magnitude maps to full colour,
        # the root's total may be near 0 while its children gain and lose
        # (a measured profile's -5e-15 s of a derived metric is rounding, not a loss)
        self.signed = bool(len(finite) and finite.min() < -ROUNDING * np.abs(finite).max())
        self.scale = float(np.abs(finite).max()) if self.signed else self.root_total()
        diff = np.abs(incl - ref_incl) if ref_incl is not None else np.zeros(0)
        self.diff_scale = float(np.nanmax(diff)) if np.isfinite(diff).any() else 0.0
        self._values_changed()

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown value mode {mode!r}")
        self.mode = mode
        self._values_changed()

    def set_selected(self, node: int) -> None:
        self.selected = node
        if self.mode == "percent_selection":
            self._values_changed()

    def set_expanded(self, node: int, expanded: bool) -> None:
        (self.expanded.add if expanded else self.expanded.discard)(node)
        idx = self.index_of(node, 1)
        if idx.isValid():
            self.dataChanged.emit(idx.siblingAtColumn(0), idx)

    def _values_changed(self) -> None:
        if self.forest.sort_key is not None:
            self._resort()
        top = self.rowCount() - 1
        if top >= 0:
            self.dataChanged.emit(self.index(0, 0), self.index(top, 1))

    def set_sorted(self, by_value: bool) -> None:
        """Siblings by descending inclusive value, or in program order."""
        self.forest.sort_key = self.incl if by_value else None
        self._resort()

    def _resort(self) -> None:
        self.layoutAboutToBeChanged.emit()
        old = [(idx, self.node_of(idx), idx.column()) for idx in self.persistentIndexList()]
        if self.forest.sort_key is not None:
            self.forest.sort_key = self.incl
        self.forest.invalidate()
        for idx, node, col in old:
            self.changePersistentIndex(idx, self.index_of(node, col))
        self.layoutChanged.emit()

    def root_total(self) -> float:
        roots = self.forest.children(-1)
        return float(self.incl[roots].sum()) if len(roots) else 0.0

    def raw(self, node: int) -> float:
        """The node's own number as shown: exclusive when expanded, else inclusive."""
        shows_excl = node in self.expanded and self.forest.has_children(node)
        return float((self.excl if shows_excl else self.incl)[node])

    def _ref_raw(self, node: int) -> float:
        if self.ref_incl is None:
            return float("nan")
        shows_excl = node in self.expanded and self.forest.has_children(node)
        return float((self.ref_excl if shows_excl else self.ref_incl)[node])

    def selection_total(self) -> float:
        """100 % in 'percent of selection' mode: the selected node's inclusive value."""
        return float(self.incl[self.selected]) if self.selected >= 0 else self.root_total()

    def shown(self, node: int) -> float:
        """The number in the value column, in the current mode's unit."""
        v = self.raw(node)
        if self.mode == "percent_root":
            return _percent(v, self.root_total())
        if self.mode == "percent_selection":
            return _percent(v, self.selection_total())
        if self.mode == "difference" and self.ref_incl is not None:
            return v - self._ref_raw(node)
        return v                          # no reference to compare with: the values themselves

    def node_unit(self, node: int) -> str:
        return self.unit

    def shown_unit(self, node: int) -> str:
        return "%" if self.mode in ("percent_root", "percent_selection") else self.node_unit(node)

    def compares(self) -> bool:
        """Whether the values on show are differences to a reference."""
        return self.mode == "difference" and self.ref_incl is not None

    def fraction(self, node: int) -> float:
        if self.compares():
            return _ratio(self.shown(node), self.diff_scale)
        if self.mode == "percent_selection":
            return _ratio(self.raw(node), self.selection_total())
        return _ratio(self.raw(node), self.scale)

    # ---- navigation -------------------------------------------------------------
    def node_of(self, index: QModelIndex) -> int:
        return int(index.internalId()) if index.isValid() else -1

    def index_of(self, node: int, column: int = 0) -> QModelIndex:
        if node < 0 or node >= len(self.forest):
            return QModelIndex()
        if self.forest.visible is not None and not self.forest.visible[node]:
            return QModelIndex()
        return self.createIndex(self.forest.row_of(node), column, node)

    # ---- QAbstractItemModel ---------------------------------------------------------
    # Qt calls these for every row it lays out: keep them to a few Python operations.
    def index(self, row, column, parent=QModelIndex()):  # noqa: B008 - Qt signature
        node = parent.internalId() if parent.isValid() else -1
        kids = self.forest._kids.get(node)
        if kids is None:
            kids = self.forest.children(node)
        if row < len(kids) and column < 2 and row >= 0:
            return self.createIndex(row, column, kids[row])
        return QModelIndex()

    def parent(self, index=QModelIndex()):  # noqa: B008 - Qt signature
        if not index.isValid():
            return QModelIndex()
        p = int(self.forest.parent[index.internalId()])
        return self.createIndex(self.forest.row_of(p), 0, p) if p >= 0 else QModelIndex()

    def rowCount(self, parent=QModelIndex()):  # noqa: N802, B008 - Qt signature
        if not parent.isValid():
            return len(self.forest.children(-1))
        return len(self.forest.children(parent.internalId())) if parent.column() == 0 else 0

    def hasChildren(self, parent=QModelIndex()):  # noqa: N802, B008 - Qt signature
        if not parent.isValid():
            return len(self.forest) > 0
        return parent.column() == 0 and self.forest.has_kids[parent.internalId()]

    def columnCount(self, parent=QModelIndex()):  # noqa: N802, B008 - Qt signature
        return 2

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return "Name" if section == 0 else self.value_header
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        role = int(role)
        if role not in _ROLES or not index.isValid():
            return None
        node = index.internalId()
        col = index.column()
        if role == _DISPLAY:
            if col == 0:
                return f"{self.name(node)}  \u270e" if node in self.notes else self.name(node)
            return format_value(self.shown(node), self.shown_unit(node))
        if role == _DECORATION:
            return colour(self.fraction(node)) if col == 0 else None
        if role == _ALIGN:
            return _RIGHT if col == 1 else None
        if role == _TOOLTIP:
            return self._tooltip(node)
        if role == _FONT:
            return self.font(node) if col == 0 else None
        if role == _FOREGROUND:
            return self.foreground(node)
        if role == FRACTION_ROLE:
            return self.fraction(node)
        return node                                   # NODE_ROLE

    def foreground(self, node: int):
        """Grey for an expanded node whose own (exclusive) value is nothing."""
        if node in self.expanded and self.forest.has_kids[node] and self.excl[node] == 0:
            return _MUTED
        return None

    def _tooltip(self, node: int) -> str:
        kind = "exclusive" if node in self.expanded and self.forest.has_children(node) else "inclusive"
        unit = self.node_unit(node)
        lines = [self.tooltip(node),
                 f"{kind}: {format_value(self.raw(node), unit)}",
                 f"inclusive {format_value(float(self.incl[node]), unit)}, "
                 f"exclusive {format_value(float(self.excl[node]), unit)}"]
        if self.mode == "difference":
            lines.append(f"difference to the reference: {format_value(self.shown(node), unit)}")
        lines += [f"\u270e {text}" for text in self.notes.get(node, [])]
        return "\n".join(lines)

    def set_notes(self, notes: dict[int, list[str]]) -> None:
        """Annotations per node: a pencil after the name, the texts in the tooltip."""
        if notes != self.notes:
            self.notes = notes
            if len(self.forest):
                self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, 0))
            self.layoutChanged.emit()


def _percent(v: float, total: float) -> float:
    return 100.0 * v / total if total else float("nan")


def _ratio(v: float, scale: float) -> float:
    if not scale or not np.isfinite(v):
        return float("nan") if not np.isfinite(v) else 0.0
    return max(-1.0, min(1.0, v / abs(scale)))


def italic() -> QFont:
    f = QFont()
    f.setItalic(True)
    return f
