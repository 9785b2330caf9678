"""How a POP figure is judged and coloured: shared by the Advisor, the
scaling table and the HTML report, so all three speak the same language."""
from __future__ import annotations

import math

ACCEPTABLE = 0.8
"""POP's rule of thumb: efficiencies below 80 % deserve a closer look."""

RATINGS = ("Very poor", "Poor", "Fair", "Good", "Very good", "Excellent")

# Red -> yellow -> green (ColorBrewer RdYlGn), stretched so that the
# acceptable mark falls where yellow turns green; and, for red-green colour
# blindness, red -> yellow -> blue (RdYlBu) on the same stops.
PALETTES = {
    "red-green": (
        (0.0, (165, 0, 38)), (0.3, (215, 48, 39)), (0.5, (244, 109, 67)), (0.6, (253, 174, 97)),
        (0.7, (254, 224, 139)), (ACCEPTABLE, (217, 239, 139)), (0.9, (102, 189, 99)), (1.0, (26, 152, 80))),
    "colour-blind": (
        (0.0, (165, 0, 38)), (0.3, (215, 48, 39)), (0.5, (244, 109, 67)), (0.6, (253, 174, 97)),
        (0.7, (254, 224, 144)), (ACCEPTABLE, (224, 243, 248)), (0.9, (116, 173, 209)), (1.0, (49, 54, 149))),
}
_palette = ["red-green"]


def use_palette(name: str) -> None:
    """Switch every view (and reports written afterwards) to another scale."""
    if name not in PALETTES:
        raise ValueError(f"unknown palette {name!r}; choose from {', '.join(PALETTES)}")
    _palette[0] = name


def palette() -> str:
    return _palette[0]


def is_number(value) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def rating(value: float | None) -> str:
    """Cube's verbal rating: int(v * 5) -> Very poor ... Excellent (capped)."""
    if not is_number(value):
        return "not available"
    return RATINGS[max(0, min(len(RATINGS) - 1, int(value * 5)))]


def colour(value: float | None) -> tuple[int, int, int]:
    """RGB of an efficiency on the scale in use; above 1 keeps the colour of 1."""
    if not is_number(value):
        return (190, 190, 190)
    stops = PALETTES[_palette[0]]
    v = min(max(value, 0.0), 1.0)
    for (a, ca), (b, cb) in zip(stops, stops[1:]):
        if v <= b:
            f = (v - a) / (b - a)
            return tuple(round(x + (y - x) * f) for x, y in zip(ca, cb))
    return stops[-1][1]


def hex_colour(value: float | None) -> str:
    return "#%02x%02x%02x" % colour(value)


def text_on(rgb: tuple[int, int, int]) -> str:
    """Black or white, whichever reads better on `rgb`."""
    r, g, b = rgb
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#ffffff"


def percent(value: float | None, digits: int = 1) -> str:
    return f"{value * 100:.{digits}f} %" if is_number(value) else "n/a"
