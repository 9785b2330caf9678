"""OTF2 archives (Score-P, Scalasca, APEX...): the anchor `traces.otf2`, its
global definitions and per-location event files, or the experiment directory."""
from popview.readers.otf2.archive import anchor, detect


def convert(path, writer, progress):
    """Convert an archive (the decoder and its numba kernels load only now)."""
    from popview.readers.otf2.conversion import convert as convert_archive

    return convert_archive(path, writer, progress)


__all__ = ["anchor", "convert", "detect"]
