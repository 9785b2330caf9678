"""The profile of an experiment (metric x call path x location), for
traces and Cube files alike: Cube caches hold the file's profile, trace
caches the process-level profile built at conversion."""
from __future__ import annotations

from popview.model.profile import Profile


def trace_profile(exp) -> Profile:
    profile = exp.reader.profile("cumulative/profile")
    if profile is None:
        raise KeyError(f"{exp.cache_path}: the cache holds no trace profile (convert it again)")
    return profile


def experiment_profile(exp) -> Profile:
    """The stored profile of a Cube experiment, or the trace's profile."""
    stored = exp.reader.profile("profile")
    return stored if stored is not None else trace_profile(exp)
