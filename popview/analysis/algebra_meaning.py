"""What the POP metrics of an algebra result (popview.analysis.algebra, written as a
profile by popview.combined) mean, and what they cannot.

- A difference A - B holds differences of times: efficiencies computed from it
  would be nonsense. Its metrics are the difference of A's and B's own metrics
  (popview.analysis.tree_delta), when both runs can be opened; otherwise every
  metric is not available, with the reason.
- A mean or a merge is a profile like a measured one: its metrics are computed
  from it, with a note saying what it is.
- Runs collapsed to one location per process measure no threads: the
  thread-level metrics are not available. Collapsed to one location per run,
  no parallel efficiency at all can be measured.

The result's description is `definitions.flags["algebra"]` (operation, runs,
sources, collapse), which the profile reader takes from the file.
"""
from __future__ import annotations

from pathlib import Path

from popview.analysis.node import MetricTree
from popview.analysis.tree_delta import difference_tree, not_available

THREAD_LEVEL = ("thread", "openmp", "amdahl", "hybrid_load", "hybrid_communication", "hybrid_parallel")


def algebra_info(exp) -> dict | None:
    """The algebra a profile is the result of ({operation, runs, sources, collapse}), or None."""
    d = getattr(exp, "definitions", None)
    info = d.flags.get("algebra") if d is not None else None
    return info if isinstance(info, dict) and info.get("operation") else None


def describe(info: dict) -> str:
    runs = info.get("runs") or []
    op = info["operation"]
    if op == "difference" and len(runs) == 2:
        return f"difference {runs[0]} - {runs[1]}"
    return f"{op} of {len(runs)} runs ({', '.join(runs)})"


def set_sources(exp, sources: list) -> None:
    """The open runs a result was made from (the window passes its own; A first)."""
    exp.__dict__["_algebra_sources"] = (list(sources), "")
    exp.__dict__["_algebra_sources_given"] = True


def sources_given(exp) -> bool:
    """Whether the caller gave the sources (set_sources), rather than the result opening them."""
    return bool(exp.__dict__.get("_algebra_sources_given"))


def sources(exp) -> tuple[list | None, str]:
    """The runs the result was made from, opened; (None, why) when they cannot be."""
    cached = exp.__dict__.get("_algebra_sources")
    if cached is not None:
        return cached
    info = algebra_info(exp) or {}
    paths = [Path(p) for p in info.get("sources") or []]
    if len(paths) < 2:
        answer = (None, "the file does not name the runs it was made from")
    elif missing := [str(p) for p in paths if not p.exists()]:
        answer = (None, f"the runs it was made from are not at hand ({', '.join(missing)})")
    else:
        import popview
        here = Path(exp.cache_path).parent
        cache_dir = None if here == Path(exp.source).parent else here
        try:
            answer = ([popview.open(p, cache_dir=cache_dir) for p in paths], "")
        except Exception as exc:  # noqa: BLE001 - said as the reason, the result itself stays usable
            answer = (None, f"the runs it was made from cannot be opened: {exc}")
    exp.__dict__["_algebra_sources"] = answer
    return answer


def difference_metrics(exp, model: str, focus, **options) -> MetricTree | None:
    """A - B of the source runs' metric trees, or None when the sources are not at hand."""
    from popview.analysis.metrics import metrics
    runs, _ = sources(exp)
    if not runs:
        return None
    a, b = runs[0], runs[1]
    ta = metrics(a, model, focus, reference=b, **options)      # A's scalabilities against B, as `popview diff`
    tb = metrics(b, model, focus, **options)
    names = (algebra_info(exp) or {}).get("runs") or [a.name, b.name]
    tree = difference_tree(ta, tb, "A", "B")
    tree.notes.insert(0, f"A = {names[0]}, B = {names[1]}")
    return tree


def adjust(exp, tree: MetricTree) -> MetricTree:
    """The metric tree of an algebra result as its algebra allows (see the module's text)."""
    info = algebra_info(exp)
    if info is None:
        return tree
    op, collapse = info["operation"], info.get("collapse") or "none"
    if op == "difference":
        _, why = sources(exp)
        return not_available(tree, "a difference of two runs holds differences of times, from which no "
                                   f"efficiency follows; A - B of the runs' own metrics needs both runs: {why}",
                             keep=lambda n: False)
    if collapse == "run":
        tree = not_available(tree, "the runs were collapsed to one value per run: no parallel efficiency or "
                                   "balance can be measured from a single location",
                             keep=lambda n: n.kind not in ("efficiency", "scalability"))
    elif collapse == "process":
        tree = not_available(tree, "the runs were collapsed to one value per process: no thread is measured",
                             keep=lambda n: not any(k in n.id for k in THREAD_LEVEL))
    tree.notes.insert(0, f"metrics of the {describe(info)}: computed from its profile like a measured one")
    return tree
