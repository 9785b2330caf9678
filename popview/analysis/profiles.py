"""The profile of an experiment (metric x call path x location), for
traces and Cube files alike: Cube caches hold the file's profile, trace
caches the process-level profile built at conversion."""
from __future__ import annotations

from popview.cache.profile_store import read_profile
from popview.model.profile import Profile


def trace_profile(exp) -> Profile:
    h5 = exp.reader.h5
    if "cumulative" not in h5 or "profile" not in h5["cumulative"]:
        raise KeyError(f"{exp.cache_path}: the cache holds no trace profile (convert it again)")
    return read_profile(h5["cumulative"]["profile"])


def experiment_profile(exp) -> Profile:
    """The stored profile of a Cube experiment, or the trace's profile."""
    h5 = exp.reader.h5
    if "profile" in h5:
        return read_profile(h5["profile"])
    return trace_profile(exp)
