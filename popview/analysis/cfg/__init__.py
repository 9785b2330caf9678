"""Paraver .cfg files as popview view descriptions: reader, writer, and what popview evaluates."""
from .model import Binning, CfgView, Criterion, Derivation, Filters, Function, Histogram, Window
from .reader import CfgError, parse_cfg, read_cfg

__all__ = ["Binning", "CfgError", "CfgView", "Criterion", "Derivation", "Filters", "Function", "Histogram",
           "Window", "parse_cfg", "read_cfg"]
