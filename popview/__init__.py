"""popview: a visual analyzer for the performance of parallel programs.

    import popview
    exp = popview.open("run.prv.gz")      # converts once into an HDF5 cache
    exp.info()
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

from popview._version import __version__  # noqa: E402
from popview.experiment import Experiment, open  # noqa: A004,E402


def series(runs, reference=None, scaling: str = "auto", focus=None, cache_dir=None, use_replay: bool = True):
    """Runs of one application at several scales (popview.analysis.series.Series)."""
    from popview.analysis.series import series as make_series
    return make_series(runs, reference=reference, scaling=scaling, focus=focus, cache_dir=cache_dir,
                       use_replay=use_replay)


__all__ = ["__version__", "Experiment", "open", "series"]
