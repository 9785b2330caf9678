"""popview writes nothing inside its installed package at run time: numba's
compiled kernels go to the user cache directory (files left in the package's
__pycache__ outlive an uninstall and shadow a later install)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import popview

PACKAGE = Path(popview.__file__).resolve().parent

SCRIPT = """
import numpy as np
import popview
from popview.cache.codes import code_index
print(code_index(np.array([3, 5, 9]), np.array([5, 9])).tolist())
import numba
print(numba.config.CACHE_DIR)
"""


def _numba_files(root: Path) -> set[Path]:
    return {p for pattern in ("*.nbi", "*.nbc") for p in root.rglob(pattern)}


def test_kernels_are_cached_in_the_user_cache_dir_not_in_the_package(tmp_path):
    before = _numba_files(PACKAGE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), PYTHONPATH=str(PACKAGE.parent))
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result, cache_dir = out.stdout.split("\n")[:2]
    assert result == "[-1, 0, 1]"
    assert Path(cache_dir) == tmp_path / "xdg" / "popview" / "numba"
    assert _numba_files(Path(cache_dir)), "the kernel's compiled code was not cached there"
    assert _numba_files(PACKAGE) == before, "numba wrote into the package"


def test_numba_cache_dir_from_the_environment_wins(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "mine"), PYTHONPATH=str(PACKAGE.parent))
    out = subprocess.run([sys.executable, "-c", "import popview, numba; print(numba.config.CACHE_DIR)"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == str(tmp_path / "mine")
