"""The .pcf: state names and colours, event types and their value labels.

Several EVENT_TYPE lines may share one VALUES block: every type of the
block gets the values (a reader that keeps only the last type is wrong).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from popview.readers.files import check_size, regular_file

MAX_BYTES = 256 << 20          # a .pcf names states and event types: megabytes at most

_COLOR = re.compile(r"^\s*(-?\d+)\s+\{\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\}")
_SECTIONS = {"DEFAULT_OPTIONS", "DEFAULT_SEMANTIC", "STATES", "STATES_COLOR", "EVENT_TYPE", "VALUES",
             "GRADIENT_COLOR", "GRADIENT_NAMES"}


@dataclass
class PcfType:
    code: int
    name: str
    gradient: int
    values: dict[int, str] = field(default_factory=dict)


@dataclass
class Pcf:
    states: dict[int, str] = field(default_factory=dict)
    state_colors: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    event_types: dict[int, PcfType] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def parse_pcf(path: Path) -> Pcf:
    check_size(path, regular_file(path, ".pcf file").st_size, MAX_BYTES, "a .pcf file")
    pcf = Pcf()
    section = None
    block: list[PcfType] = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            key = line.strip()
            if not key:
                continue
            if key in _SECTIONS:
                if key == "EVENT_TYPE":
                    block = []
                elif key != "VALUES":
                    block = block if section in ("EVENT_TYPE", "VALUES") and key == "VALUES" else []
                section = key
                continue
            _section_line(pcf, section, line, block, lineno, path)
    return pcf


INT32, INT64, BYTE = (-(1 << 31), (1 << 31) - 1), (-(1 << 63), (1 << 63) - 1), (0, 255)


def _bounded(text: str, bounds: tuple[int, int]) -> int:
    """An integer within `bounds` (the width the cache stores it in), else ValueError."""
    value = int(text)
    if not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"{value} out of range")
    return value


def _section_line(pcf: Pcf, section, line: str, block: list[PcfType], lineno: int, path: Path) -> None:
    try:
        if section == "DEFAULT_OPTIONS":
            parts = line.split(None, 1)
            pcf.options[parts[0]] = parts[1].strip() if len(parts) > 1 else ""
        elif section == "STATES":
            code, name = line.strip().split(None, 1)
            pcf.states[_bounded(code, INT32)] = name.strip()
        elif section == "STATES_COLOR":
            m = _COLOR.match(line)
            if m:
                pcf.state_colors[_bounded(m.group(1), INT32)] = tuple(_bounded(m.group(k), BYTE) for k in (2, 3, 4))
        elif section == "EVENT_TYPE":
            grad, code, name = line.strip().split(None, 2)
            code = _bounded(code, INT32)
            et = pcf.event_types.get(code) or PcfType(code, name.strip(), _bounded(grad, INT32))
            et.name = name.strip()
            pcf.event_types[et.code] = et
            block.append(et)
        elif section == "VALUES":
            value, label = (line.strip().split(None, 1) + [""])[:2]
            for et in block:
                et.values[_bounded(value, INT64)] = label.strip()
    except ValueError:
        if len(pcf.warnings) < 20:
            pcf.warnings.append(f"{path.name}: line {lineno}: unreadable or out-of-range {section} entry ignored: "
                                f"{line.strip()[:60]!r}")
