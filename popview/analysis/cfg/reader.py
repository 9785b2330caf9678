"""Read a Paraver .cfg (versions 3.1-3.4, old and new headers) into a CfgView.

Follows the Paraver kernel's loader: line oriented, first token is the tag, `#` lines and
blank lines skipped, a trailing CR stripped, unknown tags ignored (here: noted).  Windows
are referenced by their 1-based position.  Semantic parameters apply only to the function
selected at their level.  Files that are not views (Dimemas configurations, templates with
@PLACEHOLDER@s) are refused with a one-line CfgError naming the file and line.
"""
from __future__ import annotations

import re
from pathlib import Path

from . import tags
from .histogram_tags import apply_histogram_tag, check_planes
from .model import FILTER_KEYS, LEVELS, Binning, CfgView, Criterion, Derivation, Function, Histogram, Window
from .values import ValueSyntax, boolean, counted_pairs, integer, labels, number, numbers, parameters

MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_LINE_CHARS = 1024 * 1024
MAX_WINDOWS = 10_000
_PLACEHOLDER = re.compile(r"@[A-Za-z_][A-Za-z0-9_]*@")
_DIMEMAS_SHEBANGS = ("#DIMEMAS_CONFIGURATION", "SDDFA")


class CfgError(ValueError):
    """A cfg popview refuses: the one-line message names the file, the line and the reason."""


def read_cfg(path: str | Path) -> CfgView:
    """Read the cfg at `path` (bounded in size; latin-1, since cfgs carry no declared encoding)."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise CfgError(cannot_read(path, err)) from None
    if len(raw) > MAX_FILE_BYTES:
        raise CfgError(f"{path}: larger than {MAX_FILE_BYTES} bytes, not a Paraver cfg")
    if not raw.strip():
        raise CfgError(f"{path}: the file is empty, not a Paraver cfg")
    if b"\0" in raw[:4096]:
        raise CfgError(f"{path}: binary data, not a Paraver cfg (a cfg is a text file)")
    return parse_cfg(raw.decode("latin-1"), source=str(path))


def check_readable(path: str | Path) -> None:
    """CfgError (read_cfg's message) when `path` cannot be opened for reading: missing, a
    folder, permission denied. Cheap (no read): the window asks it before waiting for a trace."""
    try:
        with open(path, "rb"):
            pass
    except OSError as err:
        raise CfgError(cannot_read(Path(path), err)) from None


def cannot_read(path: Path, err: OSError) -> str:
    return f"{path}: cannot read: {err.strerror or err}"


def parse_cfg(text: str, source: str = "<cfg>") -> CfgView:
    """Parse cfg text; `source` names it in messages and notes."""
    return _Reader(source).run(text.split("\n"))


class _Reader:
    def __init__(self, source: str):
        self.source = source
        self.view = CfgView(source=source, version="", header_style="")
        self.window: Window | None = None
        self.histogram: Histogram | None = None
        self.params: dict[str, dict[str, tuple]] = {}
        self.pending_derived: dict[str, object] = {}
        self.lineno = 0

    # -- driving -----------------------------------------------------------------------------
    def run(self, lines: list[str]) -> CfgView:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        self._refuse_non_views(lines)
        in_description = False
        description: list[str] = []
        for self.lineno, line in enumerate(lines, start=1):
            if len(line) > MAX_LINE_CHARS:
                self.fail(f"line of {len(line)} characters (more than {MAX_LINE_CHARS})")
            if in_description:
                if line.strip() in ("ConfigFile.EndDescription", "end_description"):
                    in_description = False
                else:
                    description.append(line)
                continue
            if not line.strip() or line.startswith("#"):
                continue
            if line.strip() in ("ConfigFile.BeginDescription", "begin_description"):
                in_description = True
                continue
            self.dispatch(line)
        self.finish_current()
        if not self.view.version:
            self.fail("no version header (ConfigFile.Version: or version) before the end of the file", line=0)
        self.view.description = "\n".join(description)
        declared = self.view.declared_windows
        if declared is not None and declared != len(self.view.windows):
            self.note(f"declares {declared} windows, holds {len(self.view.windows)} (the count is not trusted)",
                      line=0)
        self.check_references()
        return self.view

    def _refuse_non_views(self, lines: list[str]) -> None:
        first = next((n for n, line in enumerate(lines, 1) if line.strip()), 0)
        if first and lines[first - 1].strip() in _DIMEMAS_SHEBANGS:
            self.lineno = first
            self.fail(f"a Dimemas configuration ({lines[first - 1].strip()}), not a Paraver view cfg")
        is_cfg = False
        for self.lineno, line in enumerate(lines, start=1):
            tag = line.split(" ", 1)[0]
            if tag in ("#ParaverCFG", "ConfigFile.Version:", "version"):
                is_cfg = True
            if not line.startswith("#") and (found := _PLACEHOLDER.search(line)):
                self.fail(f"template placeholder {found.group(0)} not filled in: a cfg template, not a view")
        if not is_cfg:
            self.lineno = 0
            self.fail("not a Paraver cfg: no #ParaverCFG, ConfigFile.Version: or version header")

    def dispatch(self, line: str) -> None:
        stripped = line.strip()
        if stripped == "CFG4D_ENABLED":
            self.view.cfg4d = True
            return
        if stripped.startswith("<"):
            if "NEW ANALYZER2D" in stripped:
                self.start_histogram()
            return                                    # window banners carry no data
        tag, _, value = stripped.partition(" ")
        value = value.strip()
        try:
            handler = self.handlers().get(tag)
            if handler is not None:
                handler(self, value)
            elif tag in tags.HEADER:
                self.header(tag, value)
            elif tag in tags.LEGACY:
                self.note(f"legacy tag {tag} skipped (the current Paraver loader ignores it)")
            elif tag in tags.CFG4D:
                self.alias(tag, value)
            elif tag.startswith("Analyzer2D.") or tag.startswith("Analyzer3D."):
                self.histogram_tag(tag, value)
            elif tag in tags.WINDOW_GUI:
                self.current_window(tag).gui[tag] = value
            else:
                self.note(f"unknown tag {tag[:60]!r} skipped")
        except ValueSyntax as err:
            self.fail(f"{tag.rstrip(':')}: {err}")

    @staticmethod
    def handlers():
        return _WINDOW_HANDLERS

    # -- messages ----------------------------------------------------------------------------
    def fail(self, reason: str, line: int | None = None) -> None:
        where = self.lineno if line is None else line
        raise CfgError(f"{self.source}:{where}: {reason}" if where else f"{self.source}: {reason}")

    def note(self, text: str, line: int | None = None) -> None:
        where = self.lineno if line is None else line
        self.view.notes.append(f"line {where}: {text}" if where else text)

    # -- header ------------------------------------------------------------------------------
    def header(self, tag: str, value: str) -> None:
        if tag in ("ConfigFile.Version:", "version"):
            if self.view.version:
                self.note("a second header: windows keep their positions counted from the start of the file")
            self.view.version = value
            self.view.header_style = "new" if tag.startswith("ConfigFile") else "old"
            if value not in ("3.1", "3.2", "3.3", "3.4"):
                self.note(f"version {value[:20]!r} is not one of 3.1-3.4; read as 3.4")
        elif self.view.declared_windows is None:
            self.view.declared_windows = integer(value)

    # -- windows -----------------------------------------------------------------------------
    def current_window(self, tag: str) -> Window:
        if self.window is None:
            self.fail(f"{tag} outside a window (no window_name before it)")
        return self.window

    def start_window(self, name: str) -> None:
        self.finish_current()
        if len(self.view.windows) >= MAX_WINDOWS:
            self.fail(f"more than {MAX_WINDOWS} windows")
        self.window = Window(name=name, position=len(self.view.windows) + 1, line=self.lineno)
        self.params, self.pending_derived = {}, {"line": self.lineno}
        self.saw_level = False

    def finish_current(self) -> None:
        if self.window is not None:
            self.finish_window()
        if self.histogram is not None:
            self.finish_histogram()

    def finish_window(self) -> None:
        window, self.window = self.window, None
        for slot_map in (window.functions, window.compose):
            for slot, function in slot_map.items():
                params = self.params.get(slot, {}).get(function.name)
                if params is not None:
                    function.params = params
        if not self.saw_level:
            self.note(f"window {window.position} {window.name!r} has no window_level: thread, the kernel's default",
                      line=window.line)
        pending = self.pending_derived
        if pending.get("type") == "composed":
            for needed in ("operation", "parents"):
                if needed not in pending:
                    self.fail(f"derived window {window.name!r} has no window_{'identifiers' if needed == 'parents' else needed}",
                              line=window.line)
            window.derivation = Derivation(operation=pending["operation"], parents=pending["parents"],
                                           factors=pending.get("factors", (1.0, 1.0)),
                                           shifts=pending.get("shifts", (0, 0)))
        self.view.windows.append(window)

    def name(self, value: str) -> None:
        self.start_window(value)

    def type_(self, value: str) -> None:
        self.current_window("window_type")
        if value not in ("single", "composed"):
            raise ValueSyntax(f"window type {value[:30]!r} is neither single nor composed")
        self.pending_derived["type"] = value

    def level(self, value: str) -> None:
        window = self.current_window("window_level")
        level = "appl" if value == "ptask" else value
        if level not in LEVELS:
            raise ValueSyntax(f"level {value[:30]!r} is not one of {', '.join(LEVELS)}")
        window.level, self.saw_level = level, True

    def selected_functions(self, value: str) -> None:
        window = self.current_window("window_selected_functions")
        declared, pairs = counted_pairs(value)
        self.check_count("window_selected_functions", declared, len(pairs))
        for key, function in pairs:
            key = "appl" if key == "ptask" else key
            if key in LEVELS:
                window.functions[key] = Function(tags.modern_name(function))
                self.legacy_name_note(function)
            elif key in FILTER_KEYS:
                window.filters.criteria.setdefault(key, Criterion()).function = function
            else:
                self.note(f"selected function slot {key[:30]!r} unknown, skipped")

    def compose_functions(self, value: str) -> None:
        window = self.current_window("window_compose_functions")
        declared, pairs = counted_pairs(value)
        self.check_count("window_compose_functions", declared, len(pairs))
        for key, function in pairs:
            slot = tags.compose_slot(key)
            if slot is None:
                self.note(f"compose slot {key[:30]!r} unknown to popview, skipped")
                continue
            window.compose[slot] = Function(tags.modern_name(function))
            self.legacy_name_note(function)

    def semantic_module(self, value: str) -> None:
        self.current_window("window_semantic_module")
        level, _, rest = value.partition(" ")
        slot = tags.compose_slot(level) if level not in LEVELS and level != "ptask" else \
            ("appl" if level == "ptask" else level)
        brace = rest.find("{")
        if slot is None or brace < 0:
            raise ValueSyntax(f"{value[:60]!r} is not '<level> <function> {{ n, {{ ... }} }}'")
        function = tags.modern_name(rest[:brace].strip())
        declared, params = parameters(rest[brace:])
        self.check_count(f"parameters of {function}", declared, len(params))
        self.params.setdefault(slot, {})[function] = params

    def filter_module(self, value: str) -> None:
        window = self.current_window("window_filter_module")
        kind, _, rest = value.partition(" ")
        key = kind[:-len("_label")] if kind.endswith("_label") else kind
        if key not in FILTER_KEYS:
            self.note(f"filter module {kind[:30]!r} unknown, skipped")
            return
        count_token, _, items = rest.strip().partition(" ")
        declared = integer(count_token)
        criterion = window.filters.criteria.setdefault(key, Criterion())
        if kind.endswith("_label"):
            found = tuple(labels(items))
            self.check_count(f"window_filter_module {kind}", declared, len(found))
            criterion.labels = found
        else:
            found = numbers(items.split())
            self.check_count(f"window_filter_module {kind}", declared, len(found))
            criterion.values = found

    def flag(self, tag: str, value: str) -> None:
        setattr(self.current_window(tag).filters, tags.FILTER_FLAGS[tag], boolean(value))

    def objects(self, value: str) -> None:
        window = self.current_window("window_object")
        level, _, selection = value.partition(" ")
        if selection.count("{") != selection.count("}"):
            raise ValueSyntax(f"unbalanced braces in {value[:60]!r}")
        window.objects.append((level, selection.strip()))

    def scalar(self, tag: str, value: str) -> None:
        window = self.current_window(tag)
        attribute, kind = tags.WINDOW_SCALARS[tag]
        if kind == "number":
            setattr(window, attribute, number(value))
        elif kind == "drawmode":
            setattr(window, attribute, tags.drawmode_name(value))
        else:
            setattr(window, attribute, value)

    def end_relative(self, tag: str, value: str) -> None:
        window = self.current_window(tag)
        end = number(value)
        if tag == "window_scale_relative" and window.end_relative is not None:
            if window.end_relative != end:
                self.note(f"window_scale_relative {value} differs from window_end_time_relative; the latter kept")
            return
        window.end_relative = end

    def derived_tag(self, tag: str, value: str) -> None:
        self.current_window(tag)
        tokens = value.split()
        if tag == "window_operation":
            if value not in tags.DERIVED_OPERATIONS:
                raise ValueSyntax(f"operation {value[:40]!r} is not a Paraver derived operation")
            self.pending_derived["operation"] = value
            return
        if len(tokens) != 2:
            raise ValueSyntax(f"{value[:60]!r} should hold two values")
        if tag == "window_identifiers":
            self.pending_derived["parents"] = (integer(tokens[0]), integer(tokens[1]))
        elif tag == "window_factors":
            self.pending_derived["factors"] = numbers(tokens)
        else:
            self.pending_derived["shifts"] = (integer(tokens[0]), integer(tokens[1]))

    def ignore(self, value: str) -> None:
        """window_id: the kernel references windows by position, not by this number."""

    # -- histograms --------------------------------------------------------------------------
    def start_histogram(self) -> None:
        self.finish_current()
        self.histogram = Histogram(name="", columns=Binning(window=0), data_window=0, line=self.lineno)

    def histogram_tag(self, tag: str, value: str) -> None:
        if self.histogram is None:
            self.note(f"{tag} before any '< NEW ANALYZER2D >': a histogram starts here")
            self.start_histogram()
        apply_histogram_tag(self, self.histogram, tag.rstrip(":"), value)

    def finish_histogram(self) -> None:
        histogram, self.histogram = self.histogram, None
        if histogram.columns.window == 0 or histogram.data_window == 0:
            self.fail(f"histogram {histogram.name!r} lacks its ControlWindow or DataWindow", line=histogram.line)
        if (problem := check_planes(histogram)) is not None:
            self.fail(problem, line=histogram.line)
        self.view.histograms.append(histogram)

    def alias(self, tag: str, value: str) -> None:
        target = self.histogram if self.histogram is not None else self.window
        if target is None:
            self.note(f"{tag} outside a window or histogram, skipped")
            return
        target.aliases.append((tag, value))

    # -- checks ------------------------------------------------------------------------------
    def check_count(self, what: str, declared: int | None, found: int) -> None:
        if declared is not None and declared != found:
            self.note(f"{what} declares {declared}, lists {found}; the listed ones are used")

    def legacy_name_note(self, function: str) -> None:
        if function in tags.LEGACY_FUNCTION_NAMES:
            self.note(f"legacy function name {function!r} read as {tags.modern_name(function)!r}")

    def check_references(self) -> None:
        count = len(self.view.windows)
        for window in self.view.windows:
            if window.derived:
                for parent in window.derivation.parents:
                    if not 1 <= parent < window.position:
                        self.fail(f"derived window {window.name!r} references window {parent}, which does not "
                                  f"come before it (windows are numbered 1..{count} by position)", line=window.line)
        for histogram in self.view.histograms:
            refs = [histogram.columns.window, histogram.data_window]
            refs += [histogram.planes.window] if histogram.planes else []
            for ref in refs:
                if not 1 <= ref <= count:
                    self.fail(f"histogram {histogram.name!r} references window {ref}; the cfg has {count}",
                              line=histogram.line)


def _bind(method, tag):
    return lambda reader, value: method(reader, tag, value)


_WINDOW_HANDLERS = {
    "window_name": _Reader.name,
    "window_type": _Reader.type_,
    "window_id": _Reader.ignore,
    "window_level": _Reader.level,
    "window_selected_functions": _Reader.selected_functions,
    "window_compose_functions": _Reader.compose_functions,
    "window_semantic_module": _Reader.semantic_module,
    "window_filter_module": _Reader.filter_module,
    "window_object": _Reader.objects,
    **{tag: _bind(_Reader.flag, tag) for tag in tags.FILTER_FLAGS},
    **{tag: _bind(_Reader.scalar, tag) for tag in tags.WINDOW_SCALARS},
    **{tag: _bind(_Reader.end_relative, tag) for tag in ("window_end_time_relative", "window_scale_relative")},
    **{tag: _bind(_Reader.derived_tag, tag) for tag in
       ("window_operation", "window_identifiers", "window_factors", "window_shifts")},
}
