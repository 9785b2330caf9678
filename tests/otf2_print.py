"""Event counts per record kind as the `otf2-print` tool reports them."""
from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

_LINE = re.compile(r"^([A-Z][A-Z0-9_]+)\s+\d+\s+\d+")


def otf2_print_counts(anchor: Path) -> Counter:
    """{normalised record name: count}; skips the test when the tool is absent."""
    tool = shutil.which("otf2-print")
    if tool is None:
        pytest.skip("otf2-print (Debian otf2-tools) is not installed")
    out = subprocess.run([tool, str(anchor)], capture_output=True, text=True, check=True).stdout
    counts: Counter = Counter()
    for line in out.splitlines():
        m = _LINE.match(line)
        if m:
            counts[normalise(m.group(1))] += 1
    return counts


# otf2-print spells a few records differently from the bindings' class names.
_ALIASES = {"parameteruint64": "parameterunsignedint", "parameterint64": "parameterint"}


def normalise(name: str) -> str:
    """ENTER / Enter, MPI_COLLECTIVE_BEGIN / MpiCollectiveBegin -> one spelling."""
    key = name.replace("_", "").lower()
    return _ALIASES.get(key, key)
