"""numba's cache of popview's kernels is keyed by the content of their sources (popview.kernel_cache):
an edit numba's own cache does not see (a constant of an imported module, a same-size edit whose
modification time was kept) compiles the kernel anew instead of serving the old code."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import popview
from popview import kernel_cache

PACKAGE = Path(popview.__file__).resolve().parent

KERNEL = """\
from popview.jit import njit
from consts import K


@njit
def value():
    return K + 1
"""

RUN = """\
import sys
sys.path.insert(0, sys.argv[1])
import kern
print(kern.value())
"""


def _run(folder: Path, numba_dir: Path, script: str = RUN) -> str:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(numba_dir), PYTHONPATH=str(PACKAGE.parent), POPVIEW_AOT="0",
               POPVIEW_PRECOMPILE="0", PYTHONDONTWRITEBYTECODE="1")   # Python's own bytecode cache goes by mtime too
    out = subprocess.run([sys.executable, "-c", script, str(folder)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def _folders(numba_dir: Path) -> list[Path]:
    return sorted((numba_dir / kernel_cache.FOLDER).glob("*-*"))


def _age(folder: Path, seconds: float) -> None:
    """Every file of `folder` last written `seconds` ago."""
    when = time.time() - seconds
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (when, when))


def test_an_edit_numbas_cache_misses_compiles_the_kernel_anew(tmp_path):
    code, numba_dir = tmp_path / "code", tmp_path / "numba"
    code.mkdir()
    (code / "kern.py").write_text(KERNEL)
    (code / "consts.py").write_text("K = 10\n")
    assert _run(code, numba_dir) == "11"
    assert _run(code, numba_dir) == "11"
    first = _folders(numba_dir)
    assert len(first) == 1 and list(first[0].rglob("kern.value-*.nbi")), "not cached in a keyed folder"

    # a constant of the imported module (the kernel's file unchanged: numba's own cache served 11)
    (code / "consts.py").write_text("K = 20\n")
    assert _run(code, numba_dir) == "21"
    assert len(_folders(numba_dir)) == 2, "the old key's folder is kept while it may be in use"

    # a same-size edit of the kernel's file whose modification time is kept (numba < 0.68 served 21)
    kern = code / "kern.py"
    before = kern.stat()
    kern.write_text(KERNEL.replace("K + 1", "K - 1"))
    os.utime(kern, ns=(before.st_atime_ns, before.st_mtime_ns))
    for folder in _folders(numba_dir):
        _age(folder, 2 * kernel_cache.UNUSED_S)
    assert _run(code, numba_dir) == "19"
    assert len(_folders(numba_dir)) == 1, "the file's folders of other keys, unused, are not removed"
    assert _run(code, numba_dir) == "19"


def test_a_source_edited_after_its_import_is_not_cached(tmp_path):
    """The code in memory is not the files' content: compiled, never cached under their key."""
    code, numba_dir = tmp_path / "code", tmp_path / "numba"
    code.mkdir()
    (code / "kern.py").write_text(KERNEL)
    (code / "consts.py").write_text("K = 10\n")
    edit_then_run = RUN.replace("print(", "open(sys.argv[1] + '/consts.py', 'w').write('K = 30\\n')\nprint(")
    assert _run(code, numba_dir, edit_then_run) == "11"
    assert not list(numba_dir.rglob("kern.value-*.nbi"))
    assert _run(code, numba_dir) == "31"


def test_the_key_covers_the_modules_imported_at_the_top_level(tmp_path):
    """Imports at the top, in a top-level block, relative, parenthesized, through another
    module: in; in a function or a class: out (a kernel reads module globals only)."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    for name in ("__init__", "a", "b", "c", "d", "e", "lazy", "sub/__init__", "sub/f"):
        (package / f"{name}.py").write_text("X = 1\n")
    (package / "c.py").write_text("from sub import f\n")
    (package / "main.py").write_text(textwrap.dedent('''\
        """A module."""
        import a
        from b import X as Y
        try:
            import c
        except ImportError:
            c = None
        from d import (
            X,  # a comment
        )
        if True:
            from e import X as Z


        def f():
            import lazy
            return lazy


        class K:
            import lazy
        '''))
    found = {Path(p).relative_to(package).as_posix() for p in kernel_cache.sources_of(str(package / "main.py"))}
    assert found == {"main.py", "a.py", "b.py", "c.py", "d.py", "e.py", "sub/__init__.py", "sub/f.py"}


def test_popviews_kernels_read_their_own_modules_constants():
    """The OTF2 kernel reads FORK_JOIN from model/states.py, a module without kernels."""
    sources = kernel_cache.sources_of(str(PACKAGE / "readers" / "otf2" / "kernel.py"))
    assert str(PACKAGE / "model" / "states.py") in sources
    assert str(PACKAGE / "gui" / "app.py") not in sources
