"""popview: a visual analyzer for the performance of parallel programs.

    import popview
    exp = popview.open("run.prv.gz")      # converts once into an HDF5 cache
    exp.info()
"""
from popview._version import __version__
from popview.experiment import Experiment, open  # noqa: A004


def series(runs, reference=None, scaling: str = "auto", focus=None, cache_dir=None, use_replay: bool = True):
    """Runs of one application at several scales (popview.analysis.series.Series)."""
    from popview.analysis.series import series as make_series
    return make_series(runs, reference=reference, scaling=scaling, focus=focus, cache_dir=cache_dir,
                       use_replay=use_replay)


__all__ = ["__version__", "Experiment", "open", "series"]
