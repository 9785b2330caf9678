"""The layering is checked by import-linter's contracts in pyproject.toml, on the
tree as it is and on a copy with a deliberate violation (which must break it)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = shutil.which("lint-imports", path=os.path.dirname(sys.executable)) or shutil.which("lint-imports")


def _lint(tree: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(tree))
    return subprocess.run([LINT, "--config", str(tree / "pyproject.toml"), "--no-cache"], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=300)


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "popview", tree / "popview", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree)
    return tree


pytestmark = pytest.mark.skipif(LINT is None, reason="import-linter is not installed (pip install -e '.[test]')")


def test_contracts_hold():
    out = _lint(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


@pytest.mark.parametrize("module, line, contract", [
    ("analysis/_violation.py", "from PySide6 import QtCore\n", "Qt is imported by popview.gui alone"),
    ("cache/_violation.py", "import popview.gui.app\n", "Nothing below the window imports it"),
    ("analysis/_violation.py", "from popview.readers import paraver\n", "never through a reader"),
    ("gui/_violation.py", "from popview.readers.cube import REPORTS\n", "known to its reader package alone"),
    ("analysis/_violation.py", "import h5py\n", "HDF5 is the cache's business"),
])
def test_a_deliberate_violation_breaks_its_contract(tmp_path, module, line, contract):
    tree = _copy(tmp_path)
    (tree / "popview" / module).write_text(line)
    out = _lint(tree)
    assert out.returncode != 0
    assert contract in out.stdout and "BROKEN" in out.stdout, out.stdout


def test_no_format_is_named_outside_the_readers():
    """String literals outside popview/readers (and the test-data writers in
    popview/testing) name no format: the registry in popview.readers does."""
    import io
    import re
    import tokenize

    named = re.compile(r"""^[rbuf]*['"](paraver|otf2|cube)['"]$|\.(prv|pcf|row|cubex|otf2)\b""")
    found = []
    for path in sorted((ROOT / "popview").rglob("*.py")):
        rel = path.relative_to(ROOT / "popview")
        if rel.parts[0] in ("readers", "testing"):
            continue
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
            if tok.type == tokenize.STRING and named.search(tok.string) and not tok.string.lstrip("rbuf").startswith(('"""', "'''")):
                found.append(f"{rel}:{tok.start[0]}: {tok.string}")
    assert not found, "formats named outside popview/readers:\n" + "\n".join(found)


def test_no_hdf5_object_is_reached_outside_the_cache():
    """`reader.h5` (the open h5py file) is used inside popview/cache alone; the rest
    reads through Reader's typed methods and popview.cache.nodes."""
    import re

    found = [f"{p.relative_to(ROOT)}:{n}" for p in sorted((ROOT / "popview").rglob("*.py"))
             if p.relative_to(ROOT / "popview").parts[0] not in ("cache", "readers", "testing")
             for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"\.h5\b(?!\w)", line)]
    assert not found, found
