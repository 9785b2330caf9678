"""Fuzz targets, one per reader: a seed built here (never a copy of shared data),
the file the mutation goes to, and the reader call. A target passes an input
when the reader either reads it or raises InputError (its clear one-line
error); anything else (another exception, a hang, a crash) is a finding."""
from __future__ import annotations

import gzip
import random
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tests.fuzz.mutate import mutate, mutate_json

class CountingWriter:
    """What readers need of the cache writer, without HDF5: counts and checks rows."""

    def __init__(self):
        self.rows: Counter = Counter()
        self.t_max = 0
        self.extra_writers: list = []
        self.definitions = None

    def append(self, table: str, chunk) -> None:
        if hasattr(chunk, "n"):                   # a PreparedChunk
            self.rows[table] += chunk.n
            if chunk.n:
                self.t_max = max(self.t_max, chunk.t_max)
            return
        columns = list(chunk.values())
        self.rows[table] += len(columns[0]) if columns else 0

    def expect_locations(self, n: int) -> None:
        """The reader announces its location count (the writer sizes its staging): checked only."""
        assert n >= 0

    def keep_in_memory(self, limit: int) -> None:
        """The reader asks for its rows to stay in memory up to `limit` bytes: checked only."""
        assert limit >= 0

    def count(self, table: str) -> int:
        return self.rows[table]

    def spills_narrow(self) -> bool:
        """Chunks may be prepared narrow (4-byte times and values where they fit), as a
        spilling writer takes them: the fuzz runs the narrowing on mutated input too."""
        return True

    def derived_can_begin(self) -> bool:
        """No derived data here: a reader finishes its own work first, as before a finish()."""
        return False

    def begin_derived(self, progress) -> bool:
        return False

    def time_max(self) -> int:
        return self.t_max

    def set_definitions(self, defs) -> None:
        import json

        json.dumps(defs.to_json_dict(), allow_nan=False)   # what the cache stores must serialise
        self.definitions = defs

@dataclass
class Target:
    name: str
    setup: Callable[[Path], dict]          # writes the seed archive into a folder; returns its context
    run: Callable[[dict, bytes], None]     # writes the mutated bytes and reads them
    text: bool                             # text mutations (numbers) or binary ones (integers)
    seed_of: Callable[[dict], bytes]
    full_every: int = 0                    # long runs: every n-th input through popview.open with a real cache

    def mutate(self, ctx: dict, rnd: random.Random) -> bytes:
        seed = self.seed_of(ctx)
        if ctx.get("json"):
            return mutate_json(seed, rnd)
        return mutate(seed, rnd, self.text)

def _progress():
    from popview.cache.progress import Progress

    return Progress()

# ---------------------------------------------------------------- Paraver
def _paraver_setup(folder: Path) -> dict:
    from tests.paraver.prvtext import BODY, HEADER, PCF, ROW, write_trace

    folder.mkdir(parents=True, exist_ok=True)
    prv = write_trace(folder / "seed", body=BODY * 3)
    return {"folder": folder, "prv": prv, "header": HEADER.encode(), "body": (BODY * 3).encode(),
            "pcf": PCF.encode(), "row": ROW.encode()}

def _convert_paraver(prv: Path) -> None:
    from popview.readers.paraver import stream

    stream.convert(prv, CountingWriter(), _progress())

def _paraver_run(part: str):
    def run(ctx: dict, data: bytes) -> None:
        pieces = {"header": ctx["header"], "body": ctx["body"], "pcf": ctx["pcf"], "row": ctx["row"]}
        pieces[part] = data
        work = ctx["folder"] / "work"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        text = pieces["header"] + pieces["body"]
        gz = part == "body" and data[:1] in (b"1", b"2") and len(data) % 5 == 0   # sometimes compressed
        prv = work / ("t.prv.gz" if gz else "t.prv")
        prv.write_bytes(gzip.compress(text, 1) if gz else text)
        (work / "t.pcf").write_bytes(pieces["pcf"])
        (work / "t.row").write_bytes(pieces["row"])
        ctx["last_path"] = prv
        _convert_paraver(prv)
    return run

# ---------------------------------------------------------------- OTF2
def _otf2_setup(folder: Path) -> dict:
    from popview.testing.otf2_writer import write_trace

    folder.mkdir(parents=True, exist_ok=True)
    seed = folder / "seed"
    if not seed.exists():
        write_trace(seed, ranks=2, iterations=3)
    return {"folder": folder, "seed": seed}

def _otf2_run(which: str):
    def run(ctx: dict, data: bytes) -> None:
        from popview.readers.otf2 import conversion

        work = ctx["folder"] / "work"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(ctx["seed"], work)
        (work / _otf2_file(ctx, which)).write_bytes(data)
        ctx["last_path"] = work
        conversion.convert(work, CountingWriter(), _progress())
    return run

def _otf2_file(ctx: dict, which: str) -> str:
    """The member fuzzed: a location's events, its local definitions, or the global ones."""
    return {"evt": "traces/0.evt", "def": ctx.get("def_member", "traces/0.def")}[which]

def _otf2_def_mutate_choice(ctx: dict, rnd: random.Random) -> None:
    ctx["def_member"] = "traces.def" if rnd.random() < 0.3 else "traces/0.def"

# ---------------------------------------------------------------- Cube
def _cube_setup(folder: Path) -> dict:
    from tests.test_cube_synthetic import members

    folder.mkdir(parents=True, exist_ok=True)
    variants = [members("<", False), members(">", True, gz_anchor=False), members("<", True, gz_anchor=True)]
    return {"folder": folder, "variants": variants, "variant": 0}

def _cube_write(ctx: dict, content: dict[str, bytes]) -> Path:
    from tests.test_cube_synthetic import write_cubex

    path = ctx["folder"] / "p.cubex"
    write_cubex(path, content)
    return path

def _cube_read(path: Path) -> None:
    from popview.readers import cube

    parsed, profile, _ = cube.load(path)
    cube.definitions(parsed, profile)

def _cube_member_run(member: str):
    def run(ctx: dict, data: bytes) -> None:
        content = dict(ctx["variants"][ctx["variant"]])
        content[member] = data
        path = _cube_write(ctx, content)
        ctx["last_path"] = path
        _cube_read(path)
    return run

def _cube_tar_seed(ctx: dict) -> bytes:
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in ctx["variants"][ctx["variant"]].items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()

def _cube_tar_run(ctx: dict, data: bytes) -> None:
    path = ctx["folder"] / "p.cubex"
    path.write_bytes(gzip.compress(data, 1) if data[:1] == b"0" else data)
    ctx["last_path"] = path
    _cube_read(path)

# ---------------------------------------------------------------- sessions
def _session_setup(folder: Path) -> dict:
    from popview.session import store
    from tests.test_session_store import full_session

    folder.mkdir(parents=True, exist_ok=True)
    path = store.save(full_session(folder), folder / "seed.popview")
    return {"folder": folder, "seed_text": path.read_bytes(), "json": True}

def _session_run(ctx: dict, data: bytes) -> None:
    from popview.session import store

    path = ctx["folder"] / "s.popview"
    path.write_bytes(data)
    ctx["last_path"] = path
    store.load(path)

TARGETS = {t.name: t for t in [
    Target("prv_header", _paraver_setup, _paraver_run("header"), True, lambda c: c["header"]),
    Target("prv_body", _paraver_setup, _paraver_run("body"), True, lambda c: c["body"], full_every=25),
    Target("pcf", _paraver_setup, _paraver_run("pcf"), True, lambda c: c["pcf"]),
    Target("row", _paraver_setup, _paraver_run("row"), True, lambda c: c["row"]),
    Target("otf2_def", _otf2_setup, _otf2_run("def"), False,
           lambda c: (c["seed"] / _otf2_file(c, "def")).read_bytes()),
    Target("otf2_evt", _otf2_setup, _otf2_run("evt"), False,
           lambda c: (c["seed"] / "traces/0.evt").read_bytes(), full_every=25),
    Target("cube_tar", _cube_setup, _cube_tar_run, False, _cube_tar_seed),
    Target("cube_anchor", _cube_setup, _cube_member_run("anchor.xml"), True,
           lambda c: c["variants"][c["variant"]]["anchor.xml"]),
    Target("cube_index", _cube_setup, _cube_member_run("1.index"), False,
           lambda c: c["variants"][c["variant"]]["1.index"]),
    Target("cube_data", _cube_setup, _cube_member_run("1.data"), False,
           lambda c: c["variants"][c["variant"]]["1.data"]),
    Target("session", _session_setup, _session_run, True, lambda c: c["seed_text"]),
]}

def prepare(target: Target, ctx: dict, rnd: random.Random) -> bytes:
    """Choose the seed variant / member for this input, then mutate it."""
    if "variants" in ctx:
        ctx["variant"] = rnd.randrange(len(ctx["variants"]))
    if target.name == "otf2_def":
        _otf2_def_mutate_choice(ctx, rnd)
    return target.mutate(ctx, rnd)

def run_full(target: Target, ctx: dict, cache_dir: Path) -> None:
    """The last input again through popview.open with a real cache (cache layer included)."""
    import popview

    shutil.rmtree(cache_dir, ignore_errors=True)
    cache_dir.mkdir(parents=True)
    with popview.open(ctx["last_path"], cache_dir=cache_dir) as exp:
        exp.info()
