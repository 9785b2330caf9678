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
from popview.cache.order import _first_rows
print(_first_rows(np.array([2, 3, 1])).tolist())
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
    assert result == "[0, 2, 5]"
    assert Path(cache_dir) == tmp_path / "xdg" / "popview" / "numba"
    assert _numba_files(Path(cache_dir)), "the kernel's compiled code was not cached there"
    assert _numba_files(PACKAGE) == before, "numba wrote into the package"


def test_numba_cache_dir_from_the_environment_wins(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "mine"), PYTHONPATH=str(PACKAGE.parent))
    out = subprocess.run([sys.executable, "-c", "import popview, numba; print(numba.config.CACHE_DIR)"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == str(tmp_path / "mine")


FIRST_USE = """
import numba
import popview
from popview.firstuse import watch_compiles
seen = []
watch_compiles(lambda kernel, done, started: seen.append((kernel, done, started)))
from popview.cache.order import _first_rows
import numpy as np
_first_rows(np.array([1, 2]))
print(seen[0][0], seen[-1][1] >= 1)
seen.clear()
_first_rows(np.array([1, 2]))     # compiled now: nothing to announce
print(len(seen))
"""


def test_a_kernel_compile_is_announced_once(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), PYTHONPATH=str(PACKAGE.parent))
    out = subprocess.run([sys.executable, "-c", FIRST_USE], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["cache.order._first_rows", "True", "0"]
    again = subprocess.run([sys.executable, "-c", FIRST_USE.split("print(seen[0][0]")[0] + "print(len(seen))"],
                           env=env, capture_output=True, text=True, timeout=300)
    assert again.stdout.strip() == "0", "a cached kernel was compiled again"


def test_the_terminal_line_names_the_step_and_sums_it_up():
    import io

    from popview.firstuse import TerminalLine

    stream = io.StringIO()
    line = TerminalLine(stream, every_s=60)
    line("cache.codes.code_index", 0, 1)
    line("cache.codes._index", 1, 2)                # within a minute: not repeated in a log
    line.close()
    text = stream.getvalue().splitlines()
    assert text[0] == "popview: preparing popview for first use, once: compiling its kernels (0 done, now cache.codes.code_index)"
    assert len(text) == 2 and text[1].startswith("popview: preparing popview for first use, once: 1 kernels compiled in")


def test_the_commands_announce_compiles(monkeypatch, tmp_path, capsys):
    import popview.firstuse
    from popview.cli import main

    called = []
    monkeypatch.setattr(popview.firstuse, "announce_on_terminal", lambda: called.append(True) or (lambda: None))
    main(["convert", str(tmp_path / "absent.prv")])      # (info answers a missing file before: no kernels)
    assert called == [True]
