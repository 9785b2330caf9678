"""OTF2 archives (Score-P, Scalasca, APEX...): the anchor `traces.otf2`, its
global definitions and per-location event files, or the experiment directory."""
from popview.readers.otf2.archive import anchor, detect
from popview.readers.otf2.convert import convert

__all__ = ["anchor", "convert", "detect"]
