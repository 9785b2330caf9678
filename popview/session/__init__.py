"""Session files: open experiments, bookmarks, annotations, view state (no Qt).

    from popview.session import Session, load, save
    s = load("analysis.popview")
    s.add_bookmark("imbalance", view, note="rank 3 is late")
    save(s, "analysis.popview")
"""
from popview.session.model import ANNOTATION_KINDS, Annotation, Bookmark, ExperimentRef, Session
from popview.session.recovery import Recovery
from popview.session.relocate import Resolution, resolve, source_fingerprint
from popview.session.schema import SCHEMA_VERSION, SessionError
from popview.session.store import SUFFIX, backup_path, load, save

__all__ = [
    "ANNOTATION_KINDS", "Annotation", "Bookmark", "ExperimentRef", "Recovery", "Resolution", "SCHEMA_VERSION",
    "SUFFIX", "Session", "SessionError", "backup_path", "load", "resolve", "save", "source_fingerprint",
]
