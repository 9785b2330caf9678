"""Analyzer2D / Analyzer3D tags: what each sets on a Histogram."""
from __future__ import annotations

from .model import Binning, Histogram
from .values import ValueSyntax, boolean, integer, number, numbers

# Presentation-only histogram tags, kept verbatim for writing back.
HISTOGRAM_GUI = (
    "Analyzer2D.X", "Analyzer2D.Y", "Analyzer2D.Width", "Analyzer2D.Height", "Analyzer2D.HideCols",
    "Analyzer2D.HorizVert", "Analyzer2D.Color", "Analyzer2D.SemanticColor", "Analyzer2D.Zoom",
    "Analyzer2D.SortCols", "Analyzer2D.SortCriteria", "Analyzer2D.SortReverse", "Analyzer2D.ComputeGradient",
    "Analyzer2D.MinimumGradient", "Analyzer2D.MaximumGradient", "Analyzer2D.PixelSize", "Analyzer2D.CodeColor",
    "Analyzer2D.ColorMode", "Analyzer2D.ShowOnlyTotals", "Analyzer2D.ShortHeaderLabels",
    "Analyzer2D.DrawModeObjects", "Analyzer2D.DrawModeColumns", "Analyzer2D.Objects", "Analyzer2D.Synchronize",
    "Analyzer2D.ComputeYScaleZero", "Analyzer2D.NumColumns", "Analyzer2D.UseCustomDelta",
    "Analyzer2D.UseFixedDelta", "Analyzer2D.FixedValue", "Analyzer2D.Scientific",
)
LEGACY_HISTOGRAM = ("Analyzer2D.ShowWindows", "Analyzer2D.Expanded", "Analyzer2D.TextMode")


def _planes(histogram: Histogram) -> Binning:
    if histogram.planes is None:
        histogram.planes = Binning(window=0)
    return histogram.planes


def _parameters(reader, histogram: Histogram, value: str) -> None:
    tokens = value.split()
    if not tokens:
        raise ValueSyntax("no parameter count")
    declared, values = integer(tokens[0]), numbers(tokens[1:])
    reader.check_count("Analyzer2D.Parameters", declared, len(values))
    if len(values) not in (2, 4):
        raise ValueSyntax(f"{len(values)} values: 2 (data min, max) or 4 (and burst min, max) expected")
    histogram.data_range = (values[0], values[1])
    histogram.burst_range = (values[2], values[3]) if len(values) == 4 else None


_SETTERS = {
    "Analyzer2D.Name": lambda h, v: setattr(h, "name", v),
    "Analyzer2D.ControlWindow": lambda h, v: setattr(h.columns, "window", integer(v)),
    "Analyzer2D.DataWindow": lambda h, v: setattr(h, "data_window", integer(v)),
    "Analyzer2D.Statistic": lambda h, v: setattr(h, "statistic", v),
    "Analyzer2D.CalculateAll": lambda h, v: setattr(h, "calculate_all", boolean(v)),
    "Analyzer2D.Accumulator": lambda h, v: setattr(h, "accumulator", v),
    "Analyzer2D.AnalysisLimits": lambda h, v: setattr(h, "limits", v),
    "Analyzer2D.ComputeYScale": lambda h, v: setattr(h.columns, "compute", boolean(v)),
    "Analyzer2D.Minimum": lambda h, v: setattr(h.columns, "minimum", number(v)),
    "Analyzer2D.Maximum": lambda h, v: setattr(h.columns, "maximum", number(v)),
    "Analyzer2D.Delta": lambda h, v: setattr(h.columns, "delta", number(v)),
    "Analyzer2D.3D_ControlWindow": lambda h, v: setattr(_planes(h), "window", integer(v)),
    "Analyzer2D.3D_Minimum": lambda h, v: setattr(_planes(h), "minimum", number(v)),
    "Analyzer2D.3D_Maximum": lambda h, v: setattr(_planes(h), "maximum", number(v)),
    "Analyzer2D.3D_Delta": lambda h, v: setattr(_planes(h), "delta", number(v)),
    "Analyzer3D.ComputeYScale": lambda h, v: setattr(_planes(h), "compute", boolean(v)),
    "Analyzer2D.3D_FixedValue": lambda h, v: setattr(h, "plane_shown", number(v)),
}


def apply_histogram_tag(reader, histogram: Histogram, tag: str, value: str) -> None:
    """Set what `tag` says on `histogram`; `reader` takes notes and counts."""
    if tag == "Analyzer2D.Parameters":
        _parameters(reader, histogram, value)
    elif tag in _SETTERS:
        _SETTERS[tag](histogram, value)
    elif tag in HISTOGRAM_GUI:
        histogram.gui[tag] = value
    elif tag in LEGACY_HISTOGRAM:
        reader.note(f"legacy tag {tag}: skipped (the current Paraver loader ignores it)")
    else:
        reader.note(f"unknown tag {tag[:60]!r} skipped")


def check_planes(histogram: Histogram) -> str | None:
    """A 3D tag without its 3D_ControlWindow leaves the planes undefined."""
    if histogram.planes is not None and histogram.planes.window == 0:
        return f"histogram {histogram.name!r} has 3D bins but no 3D_ControlWindow"
    return None
