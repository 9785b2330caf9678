"""What a reader tells the rest of popview about its format, and nothing more.

Each reader package (popview.readers.paraver, .otf2, .cube, or a plug-in
registered with popview.readers.register) exposes, importable without its
heavy parts:

    FORMAT: Format                              labels, file patterns, kind
    detect(path) -> bool                        is `path` this format?
    anchor(path) -> Path                        the file that stands for the run
    source_files(anchor) -> list[Path]          what the conversion reads (fingerprint)
    convert(anchor, writer, progress) -> Definitions
    export_profile(path, profile, definitions, attrs)   optional: with FORMAT.profile_suffix

Outside popview/readers nothing names a format: the cache, the analysis, the
window and the commands ask these.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    name: str                          # stored in the cache as Definitions.source_format
    label: str                         # "Paraver trace"
    patterns: tuple[str, ...]          # file-dialog patterns: ("*.prv", "*.prv.gz")
    example: str                       # how a user names it: "a Paraver trace (.prv, .prv.gz)"
    has_records: bool = True           # a trace (records in time, a timeline) or a profile
    name_suffixes: tuple[str, ...] = ()   # stripped from file names to name the run
    generic_names: tuple[str, ...] = ()   # file names that say nothing: the run is named by its folder
    profile_suffix: str = ""           # a format popview writes profiles in (export_profile): its suffix
    reuses_memory: bool = False        # its conversion's threads keep and reuse their own buffers: a
                                       # process that only converts gains nothing from glibc keeping
                                       # freed arrays for it (popview.cache.heap), and peaks higher

    def run_name(self, file_name: str, folder_name: str) -> str:
        """The run's name: the file name without the format's suffix, or the folder's
        when the file is called like every run of this format ('traces', 'profile')."""
        name = file_name
        for suffix in self.name_suffixes:
            if name.endswith(suffix):
                name = name[: -len(suffix)]
                break
        return folder_name if name in self.generic_names and folder_name else name
