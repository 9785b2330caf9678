"""Paraver traces (.prv / .prv.gz with .pcf and .row), as Extrae writes them."""
from popview.readers.paraver.convert import convert, detect

__all__ = ["convert", "detect"]
