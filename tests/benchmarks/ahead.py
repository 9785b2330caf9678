"""The kernels compiled ahead of time (popview.aot) of a source tree, made ready before a
benchmark times it, as they are after a user's first run: otherwise the first timed command
would start their build in the background (docs/cache.md, Kernels) and the runs would mix the
two ways. `POPVIEW_AOT=0` in the environment times numba's way instead (nothing is built)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def installed_env(**extra) -> dict:
    """The environment of a command as installed: bytecode cached, as pip leaves an installed
    package (the shell of these sessions sets PYTHONDONTWRITEBYTECODE=1, under which every
    popview process compiled its modules from source: 0.1-0.2 s of CPU a command)."""
    env = dict(os.environ, **extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def ready(tree: Path, build: bool = True) -> str:
    """The module's status for `tree` ("used: N kernels ...", or why not), built first when it
    is missing and `build` (30-60 s of CPU, once per tree and machine)."""
    if not (Path(tree) / "popview" / "aot.py").exists():
        return "none (this tree has no popview.aot)"
    env = dict(os.environ, PYTHONPATH=str(tree))

    def status() -> str:
        out = subprocess.run([sys.executable, "-m", "popview.aot", "status"], env=env, capture_output=True,
                             text=True, cwd=tree)
        return (out.stdout.strip() or out.stderr.strip()[-300:]).splitlines()[-1]

    found = status()
    if build and found.startswith("not built") and "Error" not in found:
        subprocess.run([sys.executable, "-m", "popview.aot", "build"], env=env, capture_output=True, cwd=tree)
        found = status()
    return found
