"""The .row: labels of CPUs, nodes, threads, tasks... (every LEVEL block)."""
from __future__ import annotations

from pathlib import Path

from popview.readers.files import check_size, regular_file

MAX_BYTES = 256 << 20          # a .row names CPUs, nodes and threads: megabytes at most


def parse_row(path: Path) -> dict[str, list[str]]:
    """LEVEL name (upper case) -> its labels, in order."""
    check_size(path, regular_file(path, ".row file").st_size, MAX_BYTES, "a .row file")
    levels: dict[str, list[str]] = {}
    current: list[str] | None = None
    remaining = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.strip()
            parts = line.split()
            if len(parts) >= 4 and parts[0] == "LEVEL" and parts[2] == "SIZE":
                current = levels.setdefault(parts[1].upper(), [])
                try:
                    remaining = int(parts[3])
                except ValueError:
                    remaining = 0
                continue
            if current is not None and remaining > 0 and line:
                current.append(line)
                remaining -= 1
    return levels
