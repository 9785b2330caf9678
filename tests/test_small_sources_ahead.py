"""A small OTF2 archive runs its kernels as Python (popview.jit) unless the kernels compiled
ahead of time (popview.aot) hold the format's: then compiled there, numba not loaded either
(experiment._compiled_ahead)."""
from __future__ import annotations

import popview
from popview import aot, experiment, jit
from popview.readers import otf2
from popview.testing.otf2_writer import write_trace


def test_the_decision_follows_the_module(monkeypatch):
    monkeypatch.delenv(aot.ENV, raising=False)
    monkeypatch.setattr(aot, "functions", lambda: {otf2.AHEAD_OF_TIME_KERNEL: {}})
    assert experiment._compiled_ahead(otf2)
    monkeypatch.setattr(aot, "functions", lambda: {("popview.cache.order", "take"): {}})
    assert not experiment._compiled_ahead(otf2)            # a module without the format's kernels
    monkeypatch.setattr(aot, "functions", lambda: {otf2.AHEAD_OF_TIME_KERNEL: {}})
    monkeypatch.setenv(aot.ENV, "0")
    assert not experiment._compiled_ahead(otf2)            # switched off
    assert not experiment._compiled_ahead(object())        # a format without the attribute


def test_a_small_archive_is_interpreted_only_without_the_module(tmp_path, monkeypatch):
    written = write_trace(tmp_path / "trace", ranks=2, iterations=4, threads=1)
    modes, real = [], experiment._read_source

    def spy(*args, **kwargs):
        modes.append(jit.is_interpreted())
        return real(*args, **kwargs)

    monkeypatch.setattr(experiment, "_read_source", spy)
    for held in (False, True):
        monkeypatch.setattr(experiment, "_compiled_ahead", lambda module, held=held: held)
        popview.open(written.anchor, cache_dir=tmp_path / f"c{held}").close()
    assert modes == [True, False]
