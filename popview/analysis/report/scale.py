"""How a POP figure is judged and coloured: shared by the Advisor, the
scaling table and the HTML report, so all three speak the same language."""
from __future__ import annotations

import math

ACCEPTABLE = 0.8
"""POP's rule of thumb: efficiencies below 80 % deserve a closer look."""

# One scale, from POP's usage: 80 % and above is good. The words, the colours (the
# gradient's stops fall on the same bounds) and the HTML report all read these.
BANDS = ((0.95, "Excellent"), (ACCEPTABLE, "Good"), (0.6, "Fair"), (0.4, "Poor"), (0.0, "Very poor"))
RATINGS = tuple(word for _, word in reversed(BANDS))
ROUNDING_NOISE = 0.005
"""An efficiency up to 100.5 % is 100 % measured with rounding noise, not an inconsistency."""

# Red -> yellow -> green (ColorBrewer RdYlGn), stretched so that the
# acceptable mark falls where yellow turns green; and, for red-green colour
# blindness, red -> yellow -> blue (RdYlBu) on the same stops.
PALETTES = {
    "red-green": (
        (0.0, (165, 0, 38)), (0.4, (220, 60, 40)), (0.6, (244, 109, 67)), (0.7, (253, 174, 97)),
        (0.7999, (254, 224, 139)), (ACCEPTABLE, (166, 217, 106)), (0.95, (26, 152, 80)), (1.0, (0, 104, 55))),
    "colour-blind": (
        (0.0, (165, 0, 38)), (0.4, (215, 48, 39)), (0.6, (244, 109, 67)), (0.7, (253, 174, 97)),
        (0.7999, (254, 224, 144)), (ACCEPTABLE, (171, 217, 233)), (0.95, (69, 117, 180)), (1.0, (49, 54, 149))),
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
    """The word of an efficiency on POP's scale, judged on the value as shown (0.1 %
    steps), so that two rows reading 100.0 % never get different words."""
    if not is_number(value):
        return "not available"
    shown = round(value, 3)
    return next(word for bound, word in BANDS if shown >= bound or bound == 0.0)


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
