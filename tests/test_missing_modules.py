"""A module missing from an install is an error that names it, never a silently
skipped format, command or pane."""
from __future__ import annotations

import sys

import pytest

from popview.failures import one_line
from popview.readers import reader_for
from popview.testing.otf2_writer import write_trace


def test_a_missing_reader_is_named_not_skipped(tmp_path, monkeypatch):
    write_trace(tmp_path / "run", ranks=2, iterations=2)
    monkeypatch.setitem(sys.modules, "popview.readers.otf2", None)
    with pytest.raises(ModuleNotFoundError) as caught:
        reader_for(tmp_path / "run" / "traces.otf2")
    assert one_line(caught.value) == ("popview is installed incompletely: its module popview.readers.otf2 "
                                      "is missing (reinstall popview)")


def test_a_missing_command_is_named(monkeypatch):
    from popview import cli

    monkeypatch.setitem(sys.modules, "popview.commands.report", None)
    with pytest.raises(ModuleNotFoundError, match="popview.commands.report"):
        cli._command_modules()


def test_a_missing_dependency_is_named():
    exc = ModuleNotFoundError("No module named 'h5py'", name="h5py")
    assert one_line(exc) == "a package popview needs is not installed: h5py (reinstall popview with its dependencies)"
