"""Every failure of a command is one line on stderr and exit code 2 (Ctrl-C 130,
SIGTERM 143): never a traceback, never death by a signal. Run as real processes."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paraver.prvtext import write_trace

ROOT = Path(__file__).resolve().parents[1]


def _popview(args, prelude: str = "", stdout=subprocess.PIPE, wait: bool = True, **kw):
    """`popview ARGS` in a fresh interpreter, after `prelude` (fault injection) has run, through
    the program's entry (cli.run: after a command, the process ends by os._exit)."""
    code = (f"import sys\n{prelude}\nfrom popview.cli import run\nsys.argv = ['popview'] + {[str(a) for a in args]!r}\n"
            "run()\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("POPVIEW_DEBUG", None)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=stdout, stderr=subprocess.PIPE, env=env, **kw)
    if not wait:
        return proc
    out, err = proc.communicate(timeout=600)
    return proc.returncode, (out or b"").decode(), err.decode()


def _one_line_error(code: int, err: str, pattern: str, expected: int = 2) -> None:
    assert code == expected, err
    lines = [line for line in err.splitlines()      # first-use compile announcements aside
             if line.strip() and not (line.startswith("popview: ") and not line.startswith("popview: error: "))]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("popview: error: ") and any(p.lower() in lines[0].lower() for p in pattern.split("|")), \
        lines[0]


@pytest.fixture
def trace(tmp_path):
    return write_trace(tmp_path / "trace")


def test_broken_pipe_is_one_line(trace, tmp_path):
    read, write = os.pipe()
    os.close(read)                                   # like `| head` that has already exited
    try:
        code, _, err = _popview(["info", trace, "--cache-dir", tmp_path / "c"], stdout=write)
    finally:
        os.close(write)
    _one_line_error(code, err, "broken pipe")


def test_the_program_ends_at_once_with_its_output_and_exit_handlers(trace, tmp_path):
    """cli.run ends a command's process by os._exit: what it printed (to a pipe: buffered)
    arrives whole, atexit handlers run, and the exit code is the command's."""
    prelude = "import atexit\natexit.register(lambda: print('atexit ran', file=sys.stderr))"
    code, out, err = _popview(["info", trace, "--cache-dir", tmp_path / "c", "--json"], prelude)
    assert code == 0, err
    assert out.rstrip().endswith("}") and len(out) > 200 and "atexit ran" in err
    code, out, err = _popview(["info", tmp_path / "absent.prv", "--cache-dir", tmp_path / "c"], prelude)
    assert code == 2 and "atexit ran" in err


def test_cache_dir_that_is_a_file(trace, tmp_path):
    afile = tmp_path / "not-a-dir"
    afile.write_text("x")
    code, _, err = _popview(["info", trace, "--cache-dir", afile])
    _one_line_error(code, err, "not-a-dir")


def test_output_to_a_full_device(trace, tmp_path):
    code, _, err = _popview(["metrics", trace, "--no-replay", "--cache-dir", tmp_path / "c", "-o", "/dev/full"])
    _one_line_error(code, err, "/dev/full: no space left on the device")


def test_report_never_replaces_a_device(trace, tmp_path):
    target = tmp_path / "null"
    target.symlink_to("/dev/null")          # a link here: a failing check would replace the link only
    code, _, err = _popview(["report", trace, "--cache-dir", tmp_path / "c", "-o", target])
    _one_line_error(code, err, "null: exists and is not a regular file")
    assert target.is_symlink()


def test_report_into_a_missing_folder_names_the_report(trace, tmp_path):
    code, _, err = _popview(["report", trace, "--cache-dir", tmp_path / "c", "-o", tmp_path / "no" / "r.html"])
    _one_line_error(code, err, "no/r.html: No such file or directory")


def test_out_of_memory(trace, tmp_path):
    prelude = ("import popview.readers.paraver.stream as s\n"
               "def oom(*a, **k): raise MemoryError()\n"
               "s.read_header = oom\n")
    code, _, err = _popview(["info", trace, "--cache-dir", tmp_path / "c"], prelude)
    _one_line_error(code, err, "out of memory")


def test_unexpected_error_is_one_line_and_debug_shows_it(trace, tmp_path):
    prelude = ("import popview.readers.paraver.stream as s\n"
               "def bug(*a, **k): raise ZeroDivisionError('boom')\n"
               "s.read_header = bug\n")
    code, _, err = _popview(["info", trace, "--cache-dir", tmp_path / "c"], prelude)
    _one_line_error(code, err, "unexpected ZeroDivisionError: boom")


def test_name_too_long(tmp_path):
    trace = write_trace(tmp_path / "t", name="n" * 250)
    code, out, err = _popview(["info", trace, "--cache-dir", tmp_path / "c"])
    if code == 0:            # the cache shortens long names: nothing to report
        return
    _one_line_error(code, err, "too long")


_SLOW = ("import time, popview.readers.paraver.stream as s\n"
         "def slow(*a, **k):\n"
         "    print('converting', file=sys.stderr, flush=True)\n"
         "    time.sleep(60)\n"
         "s.convert = slow\n"
         "import popview.readers.paraver as p\n"
         "p.convert = slow\n")


@pytest.mark.parametrize("signum, code, word", [(signal.SIGINT, 130, "interrupted"),
                                                 (signal.SIGTERM, 143, "terminated")])
def test_interrupt_and_terminate_during_conversion(trace, tmp_path, signum, code, word):
    proc = _popview(["convert", trace, "--cache-dir", tmp_path / "c"], _SLOW, wait=False)
    line = proc.stderr.readline()
    assert b"converting" in line, line
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    _one_line_error(proc.returncode, err.decode(), word, code)
    assert not [p for p in (tmp_path / "c").rglob("*") if p.is_file()]


def test_derived_data_process_killed(tmp_path):
    body = "".join(f"1:1:1:1:1:{t}:{t + 5}:1\n2:1:1:1:1:{t}:60000019:{t % 3}\n" for t in range(0, 200_000, 10))
    header = "#Paraver (01/02/2024 at 10:00):200000_ns:1(2):1:2(1:1,1:1),0\n"
    trace = write_trace(tmp_path / "t", body=body, header=header)
    prelude = ("from popview.cache import sidecar\n"
               "sidecar.MIN_ROWS = 0\n"
               "submit = sidecar.SideBuilder.submit\n"
               "def submit_and_kill(self, *a, **k):\n"
               "    self._proc.kill()\n"
               "    self._proc.wait()\n"
               "    return submit(self, *a, **k)\n"
               "sidecar.SideBuilder.submit = submit_and_kill\n")
    code, _, err = _popview(["convert", trace, "--cache-dir", tmp_path / "c", "--timeline"], prelude)   # the process builds it
    _one_line_error(code, err, "derived-data process")


def _mount_tmpfs(where: Path, options: str) -> None:
    where.mkdir()
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
    if result.returncode:
        pytest.skip(f"cannot mount a small tmpfs here: {result.stderr.decode().strip()}")


@pytest.fixture
def small_disk(tmp_path):
    where = tmp_path / "small"
    _mount_tmpfs(where, "size=64k")
    yield where
    subprocess.run(["umount", str(where)], check=False)


@pytest.fixture
def read_only_disk(tmp_path):
    where = tmp_path / "ro"
    _mount_tmpfs(where, "ro,size=64k")
    yield where
    subprocess.run(["umount", str(where)], check=False)


def test_cache_on_a_full_disk(tmp_path, small_disk):
    # about 93 KB of cache against the disk's 64 KB (30,000 rows of each made 62 KB once the
    # tables were compressed harder, and fitted)
    body = "".join(f"1:1:1:1:1:{t}:{t + 5}:{t % 7}\n2:2:1:2:1:{t}:42000050:{t * 7919 % 100003}\n"
                   for t in range(0, 1_200_000, 10))
    header = "#Paraver (01/02/2024 at 10:00):1200000_ns:1(2):1:2(1:1,1:1),0\n"
    trace = write_trace(tmp_path / "t", body=body, header=header)
    code, _, err = _popview(["convert", trace, "--cache-dir", small_disk])
    _one_line_error(code, err, "no space left")
    assert not [p for p in small_disk.rglob("*") if p.is_file()], "a partial cache was left behind"


def test_cache_on_a_read_only_disk(trace, read_only_disk):
    code, _, err = _popview(["info", trace, "--cache-dir", read_only_disk])
    _one_line_error(code, err, "read-only file system|permission denied")


def test_a_command_started_with_its_output_closed_runs_quietly(trace, tmp_path):
    """`popview convert T >&-` (a cron job, a daemon): Python starts with sys.stdout None; the
    conversion is done and the exit code 0, no error about flushing None (the command's last flush
    said "unexpected AttributeError", and the program's exit then failed with a traceback, code 1)."""
    code, _, err = _popview(["convert", trace, "--cache-dir", tmp_path / "c"], stdout=None,
                            preexec_fn=lambda: os.close(1))
    assert code == 0 and "error" not in err and "Traceback" not in err, err
    assert list((tmp_path / "c").glob("*.popview.h5"))


@pytest.mark.parametrize("command", [["metrics"], ["info", "--json"], ["diff"]])
def test_every_command_started_with_its_output_closed_runs_quietly(trace, tmp_path, command):
    """`popview metrics T >&-` wrote its table through sys.stdout.write on None: "unexpected
    AttributeError", exit 2; the output is dropped as print() drops it, the exit code 0."""
    paths = [trace, trace] if command[0] == "diff" else [trace]
    code, _, err = _popview([command[0], *paths, *command[1:], "--cache-dir", tmp_path / "c"], stdout=None,
                            preexec_fn=lambda: os.close(1))
    assert code == 0 and "error" not in err and "Traceback" not in err, err
