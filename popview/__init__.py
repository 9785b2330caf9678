"""popview: a visual analyzer for the performance of parallel programs.

    import popview
    exp = popview.open("run.prv.gz")      # converts once into an HDF5 cache
    exp.info()
"""
from popview._version import __version__
from popview.experiment import Experiment, open  # noqa: A004

__all__ = ["__version__", "Experiment", "open"]
