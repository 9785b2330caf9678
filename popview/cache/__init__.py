"""The HDF5 cache of converted experiments (h5py; no Qt)."""
from popview.cache.progress import Cancelled, Progress
from popview.cache.errors import CacheDamaged, CacheError, CacheUnwritable
from popview.cache.reader import Reader, open_if_valid
from popview.cache.writer import Writer

__all__ = ["Cancelled", "Progress", "CacheError", "CacheDamaged", "CacheUnwritable", "Reader", "open_if_valid", "Writer"]
