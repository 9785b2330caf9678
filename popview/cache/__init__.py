"""The HDF5 cache of converted experiments (h5py; no Qt)."""
from popview.cache.progress import Cancelled, Progress
from popview.cache.reader import CacheError, Reader, open_if_valid
from popview.cache.writer import Writer

__all__ = ["Cancelled", "Progress", "CacheError", "Reader", "open_if_valid", "Writer"]
