"""OTF2 archives (Score-P, Scalasca, APEX...): the anchor `traces.otf2`, its
global definitions and per-location event files, or the experiment directory."""
from pathlib import Path

from popview.readers.format import Format
from popview.readers.otf2.archive import anchor, detect

# Archives up to this size (all their files) convert with the kernels run as Python
# (popview.jit.interpreted): numba's fixed cost, 0.6-0.7 s of CPU, is more than their work.
INTERPRETED_BYTES = 320 << 10
# ... unless the kernels compiled ahead of time (popview.aot) hold this one: then compiled there
AHEAD_OF_TIME_KERNEL = ("popview.readers.otf2.decoder", "decode_into")

FORMAT = Format("otf2", "OTF2 trace", ("*.otf2",), "an OTF2 trace (traces.otf2 or its folder)",
                name_suffixes=(".otf2",), generic_names=("traces",), reuses_memory=True)


def source_files(anchor: Path) -> list[Path]:
    """The anchor, the global definitions and every file of the archive's folder."""
    anchor = Path(anchor)
    folder, defs = anchor.with_suffix(""), anchor.with_suffix(".def")
    return [anchor] + ([defs] if defs.exists() else []) + (
        [p for p in sorted(folder.rglob("*")) if p.is_file()] if folder.is_dir() else [])


def convert(path, writer, progress):
    """Convert an archive (the decoder and its numba kernels load only now)."""
    from popview.readers.otf2.conversion import convert as convert_archive

    return convert_archive(path, writer, progress)


def convert_distributed(path, writer, progress, client):
    """Convert on Dask workers, a task a location (popview.readers.otf2.distributed)."""
    from popview.readers.otf2.conversion import convert as convert_archive

    return convert_archive(path, writer, progress, client)


__all__ = ["FORMAT", "anchor", "convert", "convert_distributed", "detect", "source_files"]
