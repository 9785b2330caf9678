"""Start-up: `popview --version` and a warm `popview info` import nothing heavy
(numba, h5py, pandas, Qt, numpy), and `info` answers a converted run from its
cache's stored summary (popview.cache.summary), which says exactly what the
opened cache says and is never trusted when it may be wrong."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import popview
from popview.cache import integrity, summary
from popview.experiment import stored_info
from popview.testing.synthetic import Shape, write

HEAVY = ("numba", "h5py", "pandas", "PySide6", "numpy", "hdf5plugin", "llvmlite")
ROOT = Path(__file__).resolve().parents[1]


def _heavy_after(code: str, tmp_path: Path) -> tuple[list[str], str]:
    """The heavy modules a fresh interpreter holds after running `code`, and what it printed."""
    probe = f"{code}\nimport sys\nprint('HEAVY', sorted(m for m in {HEAVY!r} if m in sys.modules))"
    env = dict(os.environ, PYTHONPATH=str(ROOT), POPVIEW_PRECOMPILE="0", POPVIEW_STATE_DIR=str(tmp_path / "state"),
               XDG_CONFIG_HOME=str(tmp_path / "config"))
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    assert last.startswith("HEAVY "), out.stdout
    return eval(last[len("HEAVY "):]), out.stdout      # noqa: S307 - our own probe's list of names


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """A small synthetic trace and its cache folder, converted once."""
    tmp = tmp_path_factory.mktemp("startup")
    prv = tmp / "run.prv"
    write(prv, Shape(processes=2, threads=2, iterations=3))
    with popview.open(prv, cache_dir=tmp / "cache") as exp:
        info = exp.info()
    return prv, tmp / "cache", info


def test_the_command_line_and_version_import_nothing_heavy(tmp_path):
    heavy, _ = _heavy_after("import popview.cli", tmp_path)
    assert heavy == []
    heavy, out = _heavy_after("from popview.cli import main\nmain(['--version'])", tmp_path)
    assert heavy == [] and "popview " in out


def test_warm_info_imports_nothing_heavy_and_says_what_the_cache_says(converted, tmp_path):
    prv, cache, info = converted
    heavy, out = _heavy_after(f"from popview.cli import main\nassert main(['info', {str(prv)!r}, '--json', "
                              f"'--cache-dir', {str(cache)!r}]) == 0", tmp_path)
    assert heavy == [], "a converted run's info loaded HDF5, numpy or the kernels"
    assert json.loads(out[:out.rindex("HEAVY")]) == info


def test_the_stored_summary_is_the_opened_caches_info(converted):
    prv, cache, info = converted
    assert stored_info(prv, cache) == info
    stored = summary.read(Path(info["cache"]))
    assert stored["fingerprint"] and stored["bytes"] == Path(info["cache"]).stat().st_size


def test_a_profile_has_its_summary_too(tmp_path):
    from popview.readers.cube.export import write_cubex
    from popview.testing.synthetic_profile import small_definitions, small_profile

    cubex = tmp_path / "p.cubex"
    write_cubex(cubex, small_profile(), small_definitions())
    with popview.open(cubex, cache_dir=tmp_path / "c") as exp:
        info = exp.info()
    assert info["metrics"] and stored_info(cubex, tmp_path / "c") == info


def _copy(converted, tmp_path) -> tuple[Path, Path, Path]:
    """The converted run copied (trace and cache), to be changed by a test."""
    prv, cache, info = converted
    new_prv = tmp_path / prv.name
    for f in prv.parent.glob("run.*"):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    with popview.open(new_prv, cache_dir=tmp_path / "cache") as exp:
        target = exp.cache_path
    assert stored_info(new_prv, tmp_path / "cache") is not None
    return new_prv, tmp_path / "cache", target


def test_a_summary_whose_bytes_changed_is_not_read(converted, tmp_path):
    prv, cache, target = _copy(converted, tmp_path)
    with open(target, "r+b") as f:
        head = f.read(4096)
        at = head.index(b'"processes":') + len(b'"processes":')
        f.seek(at)
        f.write(b"7")
    assert summary.read(target) is None and stored_info(prv, cache) is None
    with popview.open(prv, cache_dir=cache) as exp:    # the cache itself is intact: opened, not converted
        assert not exp.converted and exp.info()["processes"] == 2


def test_a_truncated_or_resealed_cache_has_no_summary(converted, tmp_path):
    prv, cache, target = _copy(converted, tmp_path)
    integrity.reseal(target)
    assert summary.read(target) is None, "a cache changed in place keeps no summary"
    info = summary.read(Path(converted[2]["cache"]))["info"]
    integrity.seal(target, {"schema_version": 0, "fingerprint": "", "info": {"format": "paraver"}})
    assert summary.read(target) is None, "a summary without the fields info shows"
    integrity.seal(target, {"schema_version": 0, "fingerprint": "", "info": info})
    assert summary.read(target) is not None
    with open(target, "ab") as f:
        f.write(b"\0" * 10)
    assert summary.read(target) is None, "the summary is of a file of another size"


def test_a_changed_source_or_schema_is_not_answered_from_the_summary(converted, tmp_path, monkeypatch):
    prv, cache, target = _copy(converted, tmp_path)
    monkeypatch.setattr("popview.experiment.SCHEMA_VERSION", -1)
    assert stored_info(prv, cache) is None
    monkeypatch.undo()
    with open(prv, "ab") as f:
        f.write(b"\n")
    assert stored_info(prv, cache) is None


def test_a_cache_with_the_earlier_512_byte_user_block_still_opens(tmp_path, monkeypatch):
    """Caches of earlier releases keep their seal in 512 bytes (no room for a summary):
    they verify and answer info by being opened, not converted again."""
    monkeypatch.setattr(integrity, "USERBLOCK", 512)
    prv = tmp_path / "run.prv"
    write(prv, Shape(processes=2, iterations=2))
    with popview.open(prv, cache_dir=tmp_path / "c") as exp:
        info = exp.info()
        with open(exp.cache_path, "rb") as f:
            assert integrity.userblock_size(f) == 512
    monkeypatch.undo()
    assert stored_info(prv, tmp_path / "c") is None
    with popview.open(prv, cache_dir=tmp_path / "c") as exp:
        assert not exp.converted and exp.info() == info


def test_the_commands_run_numpys_blas_on_one_thread_unless_told(tmp_path):
    """OpenBLAS starting its threads cost 60-120 ms of every command's `import numpy`; popview
    makes no BLAS call. A value in the environment wins; a process that imported numpy first
    (a library user's) is left alone."""
    code = ("import os, sys\nfrom popview.cli import main\nmain(['--version'])\n"
            "print('BLAS', os.environ.get('OPENBLAS_NUM_THREADS'))")
    for given, expected in ((None, "1"), ("4", "4")):
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        env.pop("OPENBLAS_NUM_THREADS", None)
        if given:
            env["OPENBLAS_NUM_THREADS"] = given
        for prefix, want in (("", expected), ("import numpy\n", given)):
            out = subprocess.run([sys.executable, "-c", prefix + code], env=env, capture_output=True, text=True,
                                 timeout=120)
            assert out.returncode == 0, out.stderr
            assert out.stdout.strip().splitlines()[-1] == f"BLAS {want}", (given, prefix)
