"""The focus of analysis (FoA): what part of a run every POP figure is about."""
from __future__ import annotations

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
            a, _, b = rest.partition(":")
            return cls.window(int(float(a) * 1e9), int(float(b) * 1e9))
        if kind == "iterations":
            path, first, last = rest.rsplit(":", 2)
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
