"""Write a CfgView as a Paraver cfg (new header, version 3.4) in the layout the kernel's
loader reads: windows first (referenced by position), then the histograms."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .model import COMPOSE_SLOTS, FILTER_KEYS, LEVELS, CfgView, Function, Histogram, Window

_RULER = "#" * 80
_SINGLE_LEVELS = ("cpu", "appl", "task", "thread", "node", "system", "workload")
_DERIVED_LEVELS = ("appl", "task", "node", "system", "workload")


def number_text(value: int | float) -> str:
    """Integers as digits, floats with the kernel's 12 decimals when that is exact, else repr."""
    if isinstance(value, bool):
        raise TypeError("a boolean is not a cfg number")
    if isinstance(value, int):
        return str(value)
    fixed = f"{value:.12f}"
    return fixed if float(fixed) == value else repr(value)


def _one_line(text: str, what: str) -> str:
    if "\n" in text or "\r" in text:
        raise ValueError(f"{what} {text[:40]!r} spans several lines; a cfg holds it on one")
    return text


def _bool(value: bool) -> str:
    return "true" if value else "false"


def write_cfg(view: CfgView) -> str:
    """The cfg text of `view`."""
    out = ["#ParaverCFG", "ConfigFile.Version: 3.4", f"ConfigFile.NumWindows: {len(view.windows)}"]
    if view.description:
        out += ["ConfigFile.BeginDescription", view.description, "ConfigFile.EndDescription"]
    if view.cfg4d:
        out.append("CFG4D_ENABLED")
    for window in view.windows:
        out += ["", "", _RULER, f"< NEW DISPLAYING WINDOW {_one_line(window.name, 'window name')} >", _RULER]
        out += _window_lines(window)
    for histogram in view.histograms:
        out += ["", "< NEW ANALYZER2D >"] + _histogram_lines(histogram)
    return "\n".join(out) + "\n"


def save_cfg(view: CfgView, path: str | Path) -> None:
    """Write `view` to `path` through a temporary file, so no half-written cfg is left."""
    path = Path(path)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="latin-1", newline="\n") as stream:
            stream.write(write_cfg(view))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _window_lines(window: Window) -> list[str]:
    lines = [f"window_name {window.name}", f"window_type {'composed' if window.derived else 'single'}",
             f"window_id {window.position}"]
    if window.derived:
        d = window.derivation
        lines.append(f"window_factors {number_text(d.factors[0])} {number_text(d.factors[1])}")
        if any(d.shifts):
            lines.append(f"window_shifts {d.shifts[0]} {d.shifts[1]}")
        lines += [f"window_operation {d.operation}", f"window_identifiers {d.parents[0]} {d.parents[1]}"]
    lines += [f"{tag} {_one_line(value, tag)}" for tag, value in window.gui.items()]
    filters = window.filters
    for tag, attribute in (("window_logical_filtered", "logical"), ("window_physical_filtered", "physical"),
                           ("window_comm_fromto", "fromto_and"), ("window_comm_tagsize", "tagsize_and"),
                           ("window_comm_typeval", "typeval_and")):
        if getattr(filters, attribute) is not None:
            lines.append(f"{tag} {_bool(getattr(filters, attribute))}")
    lines += _scalar_lines(window)
    lines.append(f"window_level {window.level}")
    lines += [f"window_object {level} {selection}" for level, selection in window.objects]
    lines += _function_lines(window)
    lines += [f"{tag} {value}" for tag, value in window.aliases]
    return lines


def _scalar_lines(window: Window) -> list[str]:
    lines = []
    for tag, attribute in (("window_units", "units"), ("window_maximum_y", "maximum_y"),
                           ("window_minimum_y", "minimum_y"), ("window_begin_time_relative", "begin_relative"),
                           ("window_end_time_relative", "end_relative"), ("window_begin_time", "begin_time"),
                           ("window_stop_time", "end_time"), ("window_color_mode", "color_mode"),
                           ("window_gradient_function", "gradient_function"), ("window_drawmode", "drawmode"),
                           ("window_drawmode_rows", "drawmode_rows")):
        value = getattr(window, attribute)
        if value is None:
            continue
        text = value if isinstance(value, str) else number_text(value)
        if tag == "window_end_time_relative":
            lines.append(f"window_scale_relative {text}")     # older loaders read the end from here
        lines.append(f"{tag} {_one_line(text, tag)}")
    return lines


def _function_lines(window: Window) -> list[str]:
    order = _DERIVED_LEVELS if window.derived else _SINGLE_LEVELS
    levels = [lvl for lvl in order if lvl in window.functions]
    levels += [lvl for lvl in LEVELS if lvl in window.functions and lvl not in levels]
    pairs = [(lvl, window.functions[lvl].name) for lvl in levels]
    if not window.derived:
        pairs += [(key, window.filters.criteria[key].function) for key in FILTER_KEYS
                  if key in window.filters.criteria]
    lines = []
    if pairs:
        body = ", ".join(f"{{{key}, {name}}}" for key, name in pairs)
        trailing = "," if window.derived else ""
        lines.append(f"window_selected_functions {{ {len(pairs)}, {{ {body}{trailing} }} }}")
    slots = [slot for slot in COMPOSE_SLOTS if slot in window.compose]
    if slots:
        body = ", ".join(f"{{{slot}, {window.compose[slot].name}}}" for slot in slots)
        lines.append(f"window_compose_functions {{ {len(slots)}, {{ {body} }} }}")
    for slot, function in [(lvl, window.functions[lvl]) for lvl in levels] + \
                          [(slot, window.compose[slot]) for slot in slots]:
        if function.params:
            lines.append(f"window_semantic_module {slot} {function.name} {_params_text(function)}")
    for key in FILTER_KEYS:
        criterion = window.filters.criteria.get(key)
        if criterion is None or window.derived:
            continue
        if criterion.values:
            lines.append(f"window_filter_module {key} {len(criterion.values)} "
                         + " ".join(number_text(v) for v in criterion.values))
        if criterion.labels:
            for label in criterion.labels:
                if '"' in label:
                    raise ValueError(f"filter label {label[:40]!r} holds a double quote, which a cfg cannot carry")
            lines.append(f"window_filter_module {key}_label {len(criterion.labels)} "
                         + " ".join(f'"{_one_line(label, "label")}"' for label in criterion.labels))
    return lines


def _params_text(function: Function) -> str:
    chunks = ", ".join(" ".join([str(len(values))] + [number_text(v) for v in values])
                       for values in function.params)
    return f"{{ {len(function.params)}, {{ {chunks} }} }}"


def _histogram_lines(histogram: Histogram) -> list[str]:
    title = lambda flag: "True" if flag else "False"     # noqa: E731 - histograms write capitalised booleans
    lines = [f"Analyzer2D.Name: {_one_line(histogram.name, 'histogram name')}",
             f"Analyzer2D.ControlWindow: {histogram.columns.window}",
             f"Analyzer2D.DataWindow: {histogram.data_window}"]
    for tag, value in (("Accumulator", histogram.accumulator), ("Statistic", histogram.statistic),
                       ("AnalysisLimits", histogram.limits)):
        if value is not None:
            lines.append(f"Analyzer2D.{tag}: {_one_line(value, tag)}")
    if histogram.calculate_all is not None:
        lines.append(f"Analyzer2D.CalculateAll: {title(histogram.calculate_all)}")
    if histogram.data_range is not None:
        values = list(histogram.data_range) + list(histogram.burst_range or ())
        lines.append(f"Analyzer2D.Parameters: {len(values)} " + " ".join(number_text(v) for v in values))
    lines += _binning_lines(histogram.columns, "Analyzer2D.ComputeYScale", "Analyzer2D.")
    if histogram.planes is not None:
        lines.append(f"Analyzer2D.3D_ControlWindow: {histogram.planes.window}")
        lines += _binning_lines(histogram.planes, "Analyzer3D.ComputeYScale", "Analyzer2D.3D_")
    if histogram.plane_shown is not None:
        lines.append(f"Analyzer2D.3D_FixedValue: {number_text(histogram.plane_shown)}")
    lines += [f"{tag}: {_one_line(value, tag)}" for tag, value in histogram.gui.items()]
    lines += [f"{tag} {value}" for tag, value in histogram.aliases]
    return lines


def _binning_lines(binning, compute_tag: str, prefix: str) -> list[str]:
    lines = []
    if binning.compute is not None:
        lines.append(f"{compute_tag}: {'True' if binning.compute else 'False'}")
    for name, value in (("Minimum", binning.minimum), ("Maximum", binning.maximum), ("Delta", binning.delta)):
        if value is not None:
            lines.append(f"{prefix}{name}: {number_text(value)}")
    return lines
