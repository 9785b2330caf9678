"""The focus of analysis (FoA): what part of a run every POP figure is about."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Focus:
    """kind: whole | callpath | window | iterations | auto.

    callpath: '/'-separated region names from the root ('main/loop').
    t0, t1: window in ns from the start of the run.
    first, last: iteration numbers (inclusive) of the repeating `callpath`.
    """

    kind: str = "whole"
    callpath: str | None = None
    t0: int | None = None
    t1: int | None = None
    first: int | None = None
    last: int | None = None

    @classmethod
    def whole(cls) -> "Focus":
        return cls("whole")

    @classmethod
    def on_callpath(cls, path: str) -> "Focus":
        return cls("callpath", callpath=path)

    @classmethod
    def window(cls, t0: int, t1: int) -> "Focus":
        if t1 <= t0:
            raise ValueError(f"empty time window [{t0}, {t1}]")
        return cls("window", t0=int(t0), t1=int(t1))

    @classmethod
    def iterations(cls, callpath: str, first: int, last: int) -> "Focus":
        return cls("iterations", callpath=callpath, first=int(first), last=int(last))

    @classmethod
    def parse(cls, text: str) -> "Focus":
        """CLI form: whole | auto | callpath:PATH | window:T0:T1 (seconds) | iterations:PATH:I:J."""
        kind, _, rest = text.partition(":")
        if kind in ("whole", "auto") and not rest:
            return cls(kind)
        if kind == "callpath" and rest:
            return cls.on_callpath(rest)
        if kind == "window":
            times = rest.split(":")
            seconds = [_seconds(t) for t in times]
            if len(times) != 2 or None in seconds:
                raise ValueError(f"bad focus {text!r}: a time window is window:T0:T1, two times in seconds "
                                 "from the start of the run (window:1.5:2.0)")
            t0, t1 = (round(t * 1e9) for t in seconds)
            if t1 <= t0:
                raise ValueError(f"bad focus {text!r}: the window's end must come after its start")
            return cls.window(t0, t1)
        if kind == "iterations":
            path, first, last = (rest.rsplit(":", 2) + ["", ""])[:3] if rest.count(":") >= 2 else ("", "", "")
            if not path or not _whole_number(first) or not _whole_number(last):
                raise ValueError(f"bad focus {text!r}: iterations are iterations:PATH:I:J, a call path and the "
                                 "first and last iteration numbers, counted from 0 (iterations:main/timestep:10:20)")
            return cls.iterations(path, int(first), int(last))
        raise ValueError(f"unknown focus {text!r}: use whole, auto, callpath:PATH, window:T0:T1 or iterations:PATH:I:J")

    def label(self) -> str:
        if self.kind == "callpath":
            return self.callpath or ""
        if self.kind == "window":
            return f"{self.t0 / 1e9:.6g} s - {self.t1 / 1e9:.6g} s"
        if self.kind == "iterations":
            return f"{self.callpath} iterations {self.first}-{self.last}"
        return self.kind

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, d: dict) -> "Focus":
        return cls(**{k: d[k] for k in ("kind", "callpath", "t0", "t1", "first", "last") if k in d})


def _seconds(text: str) -> float | None:
    """A finite number of seconds, or None."""
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) and abs(v) < 1e9 else None


def _whole_number(text: str) -> bool:
    return text.strip().lstrip("-").isdigit()
