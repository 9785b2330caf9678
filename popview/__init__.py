"""popview: a visual analyzer for the performance of parallel programs.

    import popview
    exp = popview.open("run.prv.gz")      # converts once into an HDF5 cache
    exp.info()

The package itself imports nothing heavy: `Experiment` and `open` load the
cache, numba and h5py when first used, so `popview --version` and the
commands that never open a trace start at once.
"""
import os
import sys


def _numba_cache_in_user_cache_dir() -> None:
    """numba keeps compiled kernels beside their source by default: inside site-packages,
    where the files outlive an uninstall and shadow a later install. Put them in the user
    cache directory instead; this runs before any kernel is defined. NUMBA_CACHE_DIR wins."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    import platformdirs

    path = os.path.join(platformdirs.user_cache_dir("popview"), "numba")
    os.environ["NUMBA_CACHE_DIR"] = path
    numba = sys.modules.get("numba")
    if numba is not None:                 # imported before popview: its config is already read
        numba.config.CACHE_DIR = path


_numba_cache_in_user_cache_dir()
if os.environ.get("POPVIEW_ANNOUNCE_COMPILES"):      # a process the command line started: say so too
    from popview.firstuse import announce_on_terminal

    announce_on_terminal()
if os.environ.get("POPVIEW_RECORD_KERNELS"):        # tests/benchmarks/record_kernels.py: the kernels' list
    from popview.precompile import record_to

    record_to(os.environ["POPVIEW_RECORD_KERNELS"])

from popview._version import __version__  # noqa: E402


def open(path, *args, **options):  # noqa: A001 - mirrors builtins.open on purpose
    """Open a trace or profile, converting it (once) into the cache: see popview.experiment.open."""
    from popview.experiment import open as open_experiment
    return open_experiment(path, *args, **options)


def series(runs, reference=None, scaling: str = "auto", focus=None, cache_dir=None, use_replay: bool = True):
    """Runs of one application at several scales (popview.analysis.series.Series)."""
    from popview.analysis.series import series as make_series
    return make_series(runs, reference=reference, scaling=scaling, focus=focus, cache_dir=cache_dir,
                       use_replay=use_replay)


def __getattr__(name: str):
    if name == "Experiment":
        from popview.experiment import Experiment
        return Experiment
    raise AttributeError(f"module 'popview' has no attribute {name!r}")


__all__ = ["__version__", "Experiment", "open", "series"]
