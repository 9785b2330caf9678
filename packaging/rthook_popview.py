"""Runtime hook of the bundle: the bundle carries only the HDF5 filter popview
writes and reads (Zstd); hdf5plugin's complaints about the others it left out
are dropped, while any other hdf5plugin error still shows."""
import logging

KEPT_FILTERS = ("zstd",)


class _LeftOutFilters(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        left_out = "File not found" in message or "Failed to load filter" in message
        return not left_out or any(name in message for name in KEPT_FILTERS)


logging.getLogger("hdf5plugin._utils").addFilter(_LeftOutFilters())
