"""The `popview` command line as one family: help texts everywhere, the
window's usage at the top, the same words in every sub-command."""
from __future__ import annotations

import argparse

import pytest

from popview.cli import _command_modules, build_parser, main
from popview.commands.common import shorten


def _subparsers(parser):
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def test_every_argument_of_every_command_has_a_help_text():
    parser = build_parser(_command_modules())
    missing = [f"{name} {a.dest}" for name, sub in _subparsers(parser).items() for a in sub._actions
               if not a.help]
    assert missing == []


def test_the_top_level_help_shows_the_window_with_traces(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: popview [-h] [--version] [--demo] [TRACE ...]")
    assert "popview {info,convert,metrics,report,diff,merge,mean,paramedir}" in out


def test_reference_means_the_same_in_metrics_and_report():
    subs = _subparsers(build_parser(_command_modules()))
    helps = {name: next(a.help for a in subs[name]._actions if a.dest == "reference") for name in ("metrics", "report")}
    assert helps["metrics"] == helps["report"]
    scaling = {name: next(a.option_strings for a in subs[name]._actions if a.dest in ("scaling", "mode"))
               for name in ("metrics", "report")}
    assert all("--scaling" in opts for opts in scaling.values())


def test_a_shortened_path_keeps_its_file_name():
    path = "/work/shared/traces/pypop/mpi/epoch_example_traces/epoch_16proc.prv.gz"
    short = shorten(path, 40)
    assert len(short) == 40 and short.endswith("epoch_16proc.prv.gz") and short.startswith("...")
    assert shorten("a.prv", 40) == "a.prv"


def test_the_window_without_a_display_says_so_in_one_line(monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    assert main(["--demo"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no display found" in err and "xvfb-run" in err


def test_a_mistyped_command_is_said_so_not_opened_as_a_file(tmp_path, capsys, monkeypatch):
    """`popview metric run.prv` started the window on a file 'metric' (on a server: "no display
    found"); a word close to a command that is no file is said to be one."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("popview.gui.app.run_gui", lambda argv: 99)     # the window, were it started
    assert main(["metric", "run.prv"]) == 2
    err = capsys.readouterr().err
    assert "'metric' is neither a command nor a file: did you mean `popview metrics`?" in err, err
    (tmp_path / "metric").write_text("")          # a file of that name is a file to open
    from popview.cli import mistyped_command
    assert mistyped_command(["metric"]) is None
    assert mistyped_command(["run.prv"]) is None and mistyped_command(["--demo"]) is None
