"""Conversions in threads, as the window runs them (one per run of a series, at once)."""
from __future__ import annotations

import ast
import threading

import popview
from popview.testing.synthetic import Shape, write


def _no_python_parsing(*_args, **_kw):
    raise AssertionError("a conversion parsed a Python literal (not safe in threads on CPython 3.11)")


def test_a_conversion_parses_no_python_literals(tmp_path, monkeypatch):
    """numpy reads an .npy header with ast.literal_eval, whose AST constructor shares one
    recursion counter between threads on CPython 3.11: two conversions at once failed with
    "AST constructor recursion depth mismatch". The scratch files are bare binary."""
    trace = tmp_path / "t.prv"
    write(trace, Shape(processes=2, threads=2, iterations=3))
    monkeypatch.setattr(ast, "literal_eval", _no_python_parsing)
    exp = popview.open(trace, cache_dir=tmp_path / "cache")
    try:
        assert exp.definitions.n_locations == 4
    finally:
        exp.close()


def _values(tree) -> dict:
    found, todo = {}, list(tree.roots)
    while todo:
        node = todo.pop()
        found[node.id] = node.value
        todo += node.children
    return found


def test_runs_converted_at_once_in_threads_equal_runs_converted_alone(tmp_path):
    shapes = [Shape(processes=p, threads=t, iterations=4) for p, t in ((1, 1), (2, 1), (2, 2), (4, 2))]
    traces = []
    for i, shape in enumerate(shapes):
        traces.append(tmp_path / f"run{i}.prv")
        write(traces[-1], shape)
    opened, errors = {}, []

    def convert(i: int) -> None:
        try:
            opened[i] = popview.open(traces[i], cache_dir=tmp_path / "threads")
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(f"{traces[i].name}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=convert, args=(i,)) for i in range(len(traces))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i, trace in enumerate(traces):
        alone = popview.open(trace, cache_dir=tmp_path / "alone")
        try:
            assert opened[i].info()["records"] == alone.info()["records"], trace.name
            assert _values(opened[i].metrics()) == _values(alone.metrics()), trace.name
        finally:
            alone.close()
            opened[i].close()
