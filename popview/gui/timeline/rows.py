"""Which rows the timeline shows: locations grouped by node and process,
with groups collapsed to one row on demand (no Qt)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GROUPINGS = ("threads", "processes", "nodes")


@dataclass(frozen=True)
class Row:
    loc: int            # location drawn in this row (a collapsed group shows its first one)
    label: str
    group: tuple        # ("location", l) | ("process", p) | ("node", n)
    members: tuple      # locations the row stands for


class RowLayout:
    """Visible rows of one experiment and the location -> row map."""

    def __init__(self, defs):
        self.defs = defs
        self.collapsed: set[tuple] = set()
        self.rows: list[Row] = []
        names = [loc.name for loc in defs.locations]
        self._names_repeat = len(set(names)) < len(names)
        self.refresh()

    def set_grouping(self, grouping: str) -> None:
        """Collapse every process ("processes"), every node ("nodes") or nothing ("threads")."""
        d = self.defs
        if grouping == "processes":
            self.collapsed = {("process", p) for p in range(len(d.processes))}
        elif grouping == "nodes":
            self.collapsed = {("node", n) for n in self._nodes()}
        else:
            self.collapsed = set()
        self.refresh()

    def toggle(self, group: tuple) -> None:
        """Collapse or expand the group a row belongs to (a location row collapses its process)."""
        if group[0] == "location":
            group = ("process", self.defs.locations[group[1]].process)
        if group in self.collapsed:
            self.collapsed.discard(group)
        else:
            self.collapsed.add(group)
        self.refresh()

    def expand(self, group: tuple) -> None:
        self.collapsed.discard(group)
        self.refresh()

    def _nodes(self) -> list[int]:
        return sorted({p.node for p in self.defs.processes})

    def refresh(self) -> None:
        d = self.defs
        by_process: dict[int, list[int]] = {}
        for i, loc in enumerate(d.locations):
            by_process.setdefault(loc.process, []).append(i)
        rows: list[Row] = []
        done_nodes: set[int] = set()
        for p in sorted(by_process):
            locs = by_process[p]
            proc = d.processes[p] if p < len(d.processes) else None
            node = proc.node if proc else -1
            if ("node", node) in self.collapsed:
                if node in done_nodes:
                    continue
                done_nodes.add(node)
                members = tuple(i for q in sorted(by_process) for i in by_process[q]
                                if q < len(d.processes) and d.processes[q].node == node)
                rows.append(Row(members[0], self._node_name(node), ("node", node), members))
            elif ("process", p) in self.collapsed and len(locs) > 1:
                name = proc.name if proc else f"process {p}"
                rows.append(Row(locs[0], f"{name} ({len(locs)} threads)", ("process", p), tuple(locs)))
            else:
                rows.extend(Row(i, self._location_label(i), ("location", i), (i,)) for i in locs)
        self.rows = rows
        self.row_of = np.full(len(d.locations), -1, np.int64)
        for r, row in enumerate(rows):
            self.row_of[list(row.members)] = r
        self.locs = np.array([row.loc for row in rows], np.int64)

    def _location_label(self, i: int) -> str:
        """The location's name, prefixed by its process's when names repeat ("Master thread")."""
        loc = self.defs.locations[i]
        if not self._names_repeat:
            return loc.name
        proc = self.defs.processes[loc.process] if loc.process < len(self.defs.processes) else None
        return f"{proc.name} · {loc.name}" if proc else loc.name

    def _node_name(self, node: int) -> str:
        nodes = self.defs.nodes
        return nodes[node] if 0 <= node < len(nodes) else f"node {node}"

    def __len__(self) -> int:
        return len(self.rows)
