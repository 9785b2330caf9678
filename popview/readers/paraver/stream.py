"""Streams a Paraver trace into the cache writer."""
from __future__ import annotations

import gzip
import mmap
import os
import queue
import threading
import zlib
from collections import deque
from pathlib import Path

import numpy as np

from popview import threads
from popview.cache.progress import Progress
from popview.cache.writer import PreparedChunk, Writer
from popview.model.definitions import Definitions, Location, Process, Region
from popview.model.states import class_of, default_states
from popview.readers import files
from popview.readers.errors import InputError
from popview.readers.paraver import body, eventtypes
from popview.readers.paraver.header import Header, parse_communicator, parse_header
from popview.readers.paraver.pcf import Pcf, parse_pcf
from popview.readers.paraver.row import parse_row
from popview.threads import Pool

BLOCK = 16 << 20
MAX_LINE = 64 << 20         # longer lines are not records (a file of zeros, a compression bomb)
# Text read without one valid record: beyond this it is not a trace.
MAX_BYTES_WITHOUT_RECORDS = 64 << 20
# Blocks parsed at once (the parser releases the GIL); results are taken in file order.
PARSE_THREADS = max(1, min(2, os.cpu_count() or 1))
# Staged rows kept in memory rather than spilled (cache/kept.py) for a trace of at most this much
# text: its columns (about 1.1 bytes a byte of EPOCH text, 165 MB for the 143 MB trace) are then
# sorted, written and summed where they are, not written to the spill's files and read back.
# A larger trace is spilled as before (the budget stops a trace whose text says too little:
# past it, what was kept is written out and the rest spilled). A conversion with the timeline
# overview keeps them too: its derived-data process reads files, and the writer writes what was
# kept out when it starts one (kept.Budget.give_up), as for every reader that keeps rows.
KEEP_TEXT_BYTES = 384 << 20
KEEP_ROWS_BYTES = 512 << 20
GZ_RATIO = 10               # text bytes a byte of .prv.gz, about, to tell whether it is kept


def _open(path: Path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else open(path, "rb")


def side_file(path: Path, suffix: str) -> Path:
    name = path.name
    for ext in (".prv.gz", ".prv"):
        if name.endswith(ext):
            return path.with_name(name[: -len(ext)] + suffix)
    return path.with_suffix(suffix)


def read_header(path: Path) -> tuple[Header, int, int]:
    """Header, number of header lines, and byte offset of the first record."""
    with _open(path) as f:
        first = _header_line(f, path, 1)
        if not first:
            raise InputError(f"{path}: empty file")
        try:
            text = first.decode("ascii")
        except UnicodeDecodeError:
            raise InputError(f"{path}: line 1: not a Paraver trace (binary data)") from None
        header = parse_header(text, str(path))
        consumed, lines = len(first), 1
        for _ in range(header.n_communicators):
            raw = _header_line(f, path, lines + 1)
            comm = parse_communicator(raw.decode("ascii", "replace"))
            if comm is None:
                break
            header.communicators.append(comm)
            consumed += len(raw)
            lines += 1
    return header, lines, consumed


def _header_line(f, path: Path, number: int) -> bytes:
    """One line of the header, refused beyond MAX_LINE (a binary or bomb file has no newline)."""
    line = f.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise InputError(f"{path}: line {number}: longer than {MAX_LINE >> 20} MiB: not a Paraver trace")
    return line


def _blocks(path: Path, skip: int, out: queue.Queue, stop: threading.Event, block: int = BLOCK) -> None:
    """Producer: whole-line blocks of the body (decompressed), then None. A plain file's
    blocks are mapped, not read (_mapped_blocks); a compressed one's are read (in blocks of
    `block` bytes). Whatever ends it early is handed on too (a failure it did not foresee,
    a MemoryError, would otherwise leave the consumer waiting for ever)."""
    try:
        with open(path, "rb") as raw:
            gz = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
            if gz:
                _read_blocks(gzip.GzipFile(fileobj=raw), skip, path.stat().st_size, raw, out, stop, block)
            else:
                _mapped_blocks(raw.fileno(), skip, os.fstat(raw.fileno()).st_size, out, stop)
        out.put(None)
    except BaseException as exc:  # noqa: BLE001 - raised by the consumer (text_blocks)
        out.put(exc)


def _mapped_blocks(fd: int, skip: int, size: int, out: queue.Queue, stop: threading.Event) -> None:
    for item in _mapped_block_items(fd, skip, size, stop):
        out.put(item)


def _mapped_block_items(fd: int, skip: int, size: int, stop: threading.Event | None = None):
    """Each block is a mapping of its own, populated at once, handed on as a view: no
    copy of the text (reading it into buffers cost about 0.4 s of CPU a gigabyte). A
    block's pages leave memory with its last view, when the parser is done with it.
    `size` may be a line boundary short of the file's end (a Dask task's range)."""
    pos = skip
    while pos < size and not (stop is not None and stop.is_set()):
        length = BLOCK
        while True:
            end = min(pos + length, size)
            first = pos - pos % mmap.ALLOCATIONGRANULARITY
            mapped = mmap.mmap(fd, end - first, offset=first, prot=mmap.PROT_READ,
                               flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0))
            cut = mapped.rfind(b"\n", pos - first, end - first) + 1
            if cut or end == size:
                break
            if length > MAX_LINE:
                raise LineTooLong(pos)
            length *= 2                 # a line longer than a block
        if cut:
            yield np.frombuffer(mapped, np.uint8, cut - (pos - first), pos - first), (first + cut) / size
            pos = first + cut
        if end == size and pos < size:
            if size - pos > MAX_LINE:
                raise LineTooLong(pos)
            yield mapped[pos - first:end - first] + b"\n", 1.0, "truncated"
            pos = size


def _read_blocks(stream, skip: int, size: int, raw, out: queue.Queue, stop: threading.Event,
                 block: int = BLOCK) -> None:
    """Each block is read into a buffer of its own behind the previous block's unfinished
    line, and handed on without a copy (joining and slicing bytes cost three copies a block)."""
    stream.read(skip)
    carry = b""
    expanded, limit = skip, files.expansion_limit(size)
    while not stop.is_set():
        buf = np.empty(len(carry) + block, np.uint8)     # not zeroed, unlike a bytearray
        view = memoryview(buf)
        view[:len(carry)] = carry
        n = len(carry) + _read_into(stream, view[len(carry):])
        if n == len(carry):
            break
        expanded += n - len(carry)
        if expanded > limit:
            raise ExpansionTooLarge(expanded, size)
        cut = _after_last_newline(view, n)
        if n - cut > MAX_LINE:
            raise LineTooLong(expanded - (n - cut))
        carry = bytes(view[cut:n])
        if cut:
            out.put((buf[:cut], raw.tell() / max(size, 1)))
    if carry and not stop.is_set():
        out.put((carry + b"\n", 1.0, "truncated"))


class LineTooLong(ValueError):
    def __init__(self, offset: int):
        super().__init__(f"a line at byte {offset:,} of the text is longer than {MAX_LINE >> 20} MiB: "
                         "not Paraver records (binary data or a file of zeros?)")


class ExpansionTooLarge(ValueError):
    def __init__(self, expanded: int, size: int):
        super().__init__(f"decompresses to more than {expanded:,} bytes from {size:,} "
                         f"(over {files.MAX_EXPANSION} times its size: a compression bomb, not a trace)")


def _after_last_newline(view: memoryview, n: int) -> int:
    """Where the last whole line of view[:n] ends (0: none), looking back from the end."""
    window = 1 << 16
    while True:
        start = max(0, n - window)
        k = bytes(view[start:n]).rfind(b"\n")
        if k >= 0:
            return start + k + 1
        if start == 0:
            return 0
        window *= 4


def _read_into(stream, view: memoryview) -> int:
    """Fill `view` from `stream` as far as the stream goes; the bytes read."""
    done = 0
    while done < len(view):
        got = stream.readinto(view[done:])
        if not got:
            break
        done += got
    return done


class _Problems:
    def __init__(self):
        self.count = np.zeros(body.N_PROBLEMS, np.int64)
        self.first = np.full(body.N_PROBLEMS, -1, np.int64)

    def add(self, count, first):
        new = (self.first < 0) & (first >= 0)
        self.first[new] = first[new]
        self.count += count

    def warnings(self, where: str, line: int = 0) -> list[str]:
        """One a kind of problem, its first line numbered from `line`."""
        return [f"{where}: {n} x {body.PROBLEMS[k]} (first at line {self.first[k] + line})"
                for k, n in enumerate(self.count) if n]


class _Tally:
    """What parsed blocks add up to besides their records: problems (their first lines
    counted from the tally's first line, 0), lines, event types and flags. A Dask task
    keeps one for its byte range; the driver merges them in file order."""

    def __init__(self):
        self.problems = _Problems()
        self.types: set[int] = set()
        self.lines = 0
        self.text_bytes = 0
        self.flags = {"burst_mode": False, "flushing": False, "event_records": 0}
        self.truncated = False
        self.cpus: np.ndarray | None = None      # each location's CPU in its records (body.merge_cpus)
        self.sites: dict[int, set] = {}           # region type -> {(value, its source-location value)}

    def add(self, parsed, length: int) -> dict:
        """A block's _parse result: counted; its prepared chunks returned."""
        (count, first, lines, event_records, cpus), chunks, types, burst, flushing, sites = parsed
        _add_sites(self.sites, sites)
        self.problems.add(count, np.where(first >= 0, first + self.lines, first))
        self.cpus = cpus if self.cpus is None else body.merge_cpus(self.cpus, cpus)
        self.lines += int(lines)
        self.text_bytes += length
        self.flags["event_records"] += int(event_records)
        self.types.update(types)
        self.flags["burst_mode"] |= burst
        self.flags["flushing"] |= flushing
        return chunks

    def merge(self, other: "_Tally") -> None:
        self.problems.add(other.problems.count,
                          np.where(other.problems.first >= 0, other.problems.first + self.lines, other.problems.first))
        self.lines += other.lines
        self.text_bytes += other.text_bytes
        self.flags["event_records"] += other.flags["event_records"]
        self.types |= other.types
        self.flags["burst_mode"] |= other.flags["burst_mode"]
        self.flags["flushing"] |= other.flags["flushing"]
        self.truncated |= other.truncated
        _add_sites(self.sites, other.sites)
        if other.cpus is not None:
            self.cpus = other.cpus if self.cpus is None else body.merge_cpus(self.cpus, other.cpus)


def _no_records(path: Path, tally: _Tally, first_line: int) -> InputError:
    return InputError(f"{path}: no valid record in its first {tally.text_bytes:,} bytes "
                      f"(to line {first_line + tally.lines - 1}): not a Paraver trace ("
                      + "; ".join(tally.problems.warnings(path.name, first_line)) + ")")


def _finish_body(defs: Definitions, pcf, path: Path, writer: Writer, tally: _Tally, first_line: int) -> Definitions:
    """After the last block: the records' count checked, warnings, the definitions completed."""
    if _records(writer) == 0:
        raise InputError(f"{path}: no valid records ("
                         + "; ".join(tally.problems.warnings(path.name, first_line) or ["empty body"]) + ")")
    for w in tally.problems.warnings(path.name, first_line):
        defs.warn(w)
    _finish_definitions(defs, pcf, path, tally.types, tally.flags, tally.sites)
    if tally.cpus is not None and len(tally.cpus) == len(defs.locations):
        # Paraver's CPU rows (cfg windows at cpu / node / system level): each thread's CPU,
        # 0-based (-1: its records carry several CPUs, or none), and each node's CPU count
        defs.flags["thread_cpus"] = [int(c) - 1 if c > 0 else -1 for c in tally.cpus]
    writer.set_definitions(defs)
    return defs


_READ_FAILURES = (OSError, EOFError, zlib.error, ValueError)   # a file that cannot be read or decompressed


def text_blocks(path: Path, skip: int, block: int | None = None):
    """The body's whole-line blocks in file order, read by a producer thread (`_blocks`):
    (text, fraction of the file read[, "truncated"]); a read failure raises InputError.
    A compressed file is read in blocks of `block` bytes (default BLOCK, as it is now)."""
    q: queue.Queue = queue.Queue(maxsize=2)
    stop = threading.Event()
    producer = threading.Thread(target=_blocks, args=(path, skip, q, stop, block or BLOCK), daemon=True,
                                name="popview-blocks")
    try:
        threads.start(producer)            # inside the try: a Ctrl-C during the start still stops and joins it
        while (item := q.get()) is not None:
            if isinstance(item, (LineTooLong, ExpansionTooLarge)):
                raise InputError(f"{path}: {item}")
            if isinstance(item, EOFError):          # gzip's "Compressed file ended before the end-of-stream marker"
                raise InputError(f"{path}: the compressed data end early (a truncated .gz file?): {item}")
            if isinstance(item, _READ_FAILURES):
                raise InputError(f"{path}: cannot read: {item}")
            if isinstance(item, BaseException):
                raise item                # not the input's fault: as it is
            yield item
    finally:
        stop.set()
        while producer.is_alive():
            try:
                q.get_nowait()
            except queue.Empty:
                producer.join(0.05)
        if producer.ident is not None:     # started: waited for, ended or not when looked at
            producer.join()


def convert(path: Path, writer: Writer, progress: Progress) -> Definitions:
    path = Path(path)
    header, header_lines, skip = read_header(path)
    if _text_bytes(path) <= KEEP_TEXT_BYTES:       # (a derived-data process reads files: the writer
        writer.keep_in_memory(KEEP_ROWS_BYTES)     # writes the kept rows out when it starts one)
    narrow = writer.spills_narrow()                # the times and values spilled in 4 bytes where they fit
    defs, pcf = _definitions(path, header)
    appl_first_task, task_first_loc = _location_index(header)
    tally = _Tally()
    first_line = header_lines + 1
    tick = int(round(header.unit_ns))

    def take(job) -> None:
        """A parsed block, in file order."""
        future, fraction, length = job
        for table, chunk in tally.add(future.result(), length).items():
            writer.append(table, chunk)
        progress(fraction * 0.95, f"parsing {path.name}")
        if tally.text_bytes > MAX_BYTES_WITHOUT_RECORDS and _records(writer) == 0:
            raise _no_records(path, tally, first_line)

    pending: deque = deque()
    blocks = text_blocks(path, skip)
    try:
        with Pool(PARSE_THREADS, thread_name_prefix="popview-parse") as pool:
            for item in blocks:
                if len(item) == 3:
                    truncated(defs, path)
                pending.append((pool.submit(_parse, np.frombuffer(item[0], np.uint8),
                                            appl_first_task, task_first_loc, tick, header.end_time, narrow),
                                item[1], len(item[0])))
                if len(pending) > PARSE_THREADS:     # one more than the threads: one waits for each
                    take(pending.popleft())
            while pending:
                take(pending.popleft())
    finally:
        blocks.close()               # the producer stops
    return _finish_body(defs, pcf, path, writer, tally, first_line)


def truncated(defs: Definitions, path: Path) -> None:
    """The file ends inside a line (a copy or a write cut short): said, and flagged for the
    analysis, which says how much of the run the records miss (analysis.report.warnings)."""
    defs.warn(f"{path.name}: last line has no newline (truncated file?)")
    defs.flags["truncated"] = True


def _text_bytes(path: Path) -> int:
    """The trace's text, about: a .prv's size, a .prv.gz's times GZ_RATIO."""
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
        return os.fstat(f.fileno()).st_size * (GZ_RATIO if gz else 1)


def _records(writer: Writer) -> int:
    return writer.count("states") + writer.count("events") + writer.count("messages")


def _parse(buf: np.ndarray, appl_first_task, task_first_loc, tick: int, t_end: int, narrow: bool = False):
    """A block parsed and its records prepared for the writer, in a worker thread (the
    kernels release the GIL): the problems found and lines read, the prepared chunks by
    table, the event types seen, and whether burst mode and flushing appear. `narrow`: the
    states' and events' times and values prepared narrow (narrow.py), for a writer that
    spills them."""
    if buf.flags.writeable:             # one signature for every block (a mapped file's are read-only):
        buf = buf.view()                # the kernel compiles once, not twice (2.4 s at first use)
        buf.flags.writeable = False
    res = body.parse_block(buf, 0, appl_first_task, task_first_loc, tick, t_end)
    s_loc, s_begin, s_end, s_state, e_loc, e_time, e_type, e_value, comms = res[:9]
    chunks = {"states": PreparedChunk("states", {"loc": s_loc, "begin": s_begin, "end": s_end, "state": s_state},
                                      narrow),
              "events": PreparedChunk("events", {"loc": e_loc, "time": e_time, "type": e_type, "value": e_value},
                                      narrow)}
    if comms.shape[1]:
        chunks["messages"] = PreparedChunk("messages", {
            "send_loc": comms[0], "recv_loc": comms[1], "send_time": comms[2], "send_phys": comms[3],
            "recv_time": comms[4], "recv_phys": comms[5], "size": comms[6], "tag": comms[7],
            "comm": np.full(comms.shape[1], -1, np.int32)})
    types, burst, flushing, sites = [], False, False, {}
    if len(e_type):
        coded = chunks["events"].tables.get("type")     # the chunk's distinct types, when coded (narrow.py)
        types = (coded if coded is not None else body.distinct(e_type)).tolist()
        if eventtypes.TRACING_MODE in types:
            mode = e_type == eventtypes.TRACING_MODE
            burst = bool((e_value[mode] == eventtypes.BURST_MODE_VALUE).any())
        flushing = eventtypes.FLUSHING in types
        sites = _site_pairs(e_loc, e_time, e_type, e_value, types)
    return res[9:], chunks, types, burst, flushing, sites     # not the columns: the chunks hold them


def _site_pairs(loc, time, etype, value, types) -> dict[int, set]:
    """Region type -> the distinct (value, source-location value) pairs of a block: Extrae
    writes a function's event (60000018: an outlined function) and its line-and-file event
    (60000118) in one record, and numbers their values apart."""
    out, both = {}, None
    present = set(types)
    for code, site in eventtypes.SOURCE_SITE_TYPES.items():
        if code not in present or site not in present:
            continue
        if both is None:                 # pairs of the block's events in one record: once a block
            both = (loc[1:] == loc[:-1]) & (time[1:] == time[:-1])
        for a, b in ((code, site), (site, code)):         # either order within the record
            i = np.flatnonzero(both & (etype[:-1] == a) & (etype[1:] == b))
            if len(i):
                v, w = (value[i], value[i + 1]) if a == code else (value[i + 1], value[i])
                keep = v != 0
                pairs = np.unique(np.column_stack((v[keep], w[keep])), axis=0)
                out.setdefault(code, set()).update(map(tuple, pairs.tolist()))
    return out


def _add_sites(into: dict[int, set], sites: dict[int, set]) -> None:
    for code, pairs in sites.items():
        into.setdefault(code, set()).update(pairs)


def _location_index(header: Header) -> tuple[np.ndarray, np.ndarray]:
    tasks = [t for app in header.applications for t in app]
    appl_first_task = np.zeros(len(header.applications) + 1, np.int64)
    np.cumsum([len(a) for a in header.applications], out=appl_first_task[1:])
    task_first_loc = np.zeros(len(tasks) + 1, np.int64)
    np.cumsum([t.threads for t in tasks], out=task_first_loc[1:])
    return appl_first_task, task_first_loc


def _definitions(path: Path, header: Header) -> tuple[Definitions, Pcf | None]:
    pcf_path, row_path = side_file(path, ".pcf"), side_file(path, ".row")
    pcf = parse_pcf(pcf_path) if pcf_path.exists() else None
    row = parse_row(row_path) if row_path.exists() else {}
    defs = Definitions(source_format="paraver", tool="Extrae / Paraver", date=header.date,
                       t_end=int(round(header.end_time * header.unit_ns)), source_unit_ns=header.unit_ns)
    names = "generic state and event names (MPI calls and OpenMP regions named by their event type and value)"
    if pcf is not None and not (pcf.states or pcf.event_types or pcf.options):
        defs.warn(f"{pcf_path.name}: no Paraver section in it (not a .pcf?): {names}")
        pcf = None                      # read as none: a binary or foreign file was taken silently
    elif pcf is None:
        defs.warn(f"{path.name}: no .pcf beside the trace: {names}")
    if not row:
        defs.warn(f"{row_path.name}: no LEVEL section in it (not a .row?): generic location names" if row_path.exists()
                  else f"{path.name}: no .row beside the trace: generic location names")
    elif "THREAD" in row and len(row["THREAD"]) != header.n_locations:
        defs.warn(f"{row_path.name}: names {len(row['THREAD'])} threads, the trace has {header.n_locations}: "
                  "generic thread names")
    n_nodes = max(len(header.cpus_per_node), 1)
    node_names = row.get("NODE", [])
    defs.nodes = node_names[:n_nodes] if len(node_names) >= n_nodes else [f"node {i + 1}" for i in range(n_nodes)]
    thread_names = row.get("THREAD", [])
    use_names = len(thread_names) == header.n_locations
    for a, app in enumerate(header.applications):
        defs.applications.append(f"application {a + 1}")
        for t, task in enumerate(app):
            defs.processes.append(Process(name=f"{'' if len(header.applications) == 1 else f'{a + 1}.'}rank {t}",
                                          node=task.node, appl=a, rank=t))
            for th in range(task.threads):
                name = thread_names[len(defs.locations)] if use_names else f"THREAD {a + 1}.{t + 1}.{th + 1}"
                defs.locations.append(Location(name=name, process=len(defs.processes) - 1, thread=th))
    defs.communicators = header.communicators
    defs.flags["pcf"] = pcf is not None
    defs.flags["cpus_per_node"] = [int(c) for c in header.cpus_per_node]
    for level, count in (("NODE", len(header.cpus_per_node)), ("CPU", sum(header.cpus_per_node))):
        if count and len(row.get(level, [])) == count:        # Paraver's row labels of the resource model
            defs.flags[f"{level.lower()}_names"] = list(row[level])
    return defs, pcf


def _finish_definitions(defs: Definitions, pcf: Pcf | None, path: Path, seen: set[int], flags: dict,
                        sites: dict[int, set] | None = None) -> None:
    states = default_states()
    if pcf is not None:
        for code, name in pcf.states.items():
            entry = states.setdefault(code, {"name": name, "color": [128, 128, 128], "cls": int(class_of(code, name))})
            entry["name"] = name
        for code, color in pcf.state_colors.items():
            if code in states:
                states[code]["color"] = list(color)
        for w in pcf.warnings:
            defs.warn(w)
    defs.states = states
    defs.event_types = eventtypes.event_types(pcf, seen)
    for code, et in defs.event_types.items():
        if et.kind == "region" and code in seen:
            for value, label in sorted(et.values.items()):
                if value != 0:
                    if label.strip().lower() in _GENERIC_LABELS:   # "1 Begin" of Flushing, Application...
                        label = et.description or et.name
                    label = eventtypes.readable_region(code, label, _source_sites(defs, code, value, sites))
                    defs.regions.append(Region(name=label, paradigm=et.paradigm,
                                               role=eventtypes.region_role(code, label),
                                               event_type=code, event_value=value))
    defs.paradigms = _paradigms(seen)
    defs.counters = [et.name for c, et in defs.event_types.items() if et.kind == "counter" and c in seen]
    defs.flags.update(flags)
    if flags["burst_mode"]:
        defs.warn(f"{path.name}: burst-mode trace: only computation bursts were recorded")


def _source_sites(defs: Definitions, code: int, value: int, sites: dict[int, set] | None) -> list[str]:
    """The .pcf labels of the source locations recorded with a region's value."""
    site = eventtypes.SOURCE_SITE_TYPES.get(code)
    if not sites or code not in sites or site not in defs.event_types:
        return []
    labels = defs.event_types[site].values
    return [labels[w] for v, w in sorted(sites[code]) if v == value and w in labels]


_GENERIC_LABELS = {"begin", "start", "enter", "on", "yes", "1", "open"}


def _paradigms(seen: set[int]) -> list[str]:
    found = []
    if any(50000000 <= c < 51000000 for c in seen):
        found.append("mpi")
    if any(60000000 <= c < 61000000 and c not in (60000019, 60000119, 60000020, 60000120) for c in seen):
        found.append("openmp")
    if any(c in (60000020, 60000120) or 61000000 <= c < 62000000 for c in seen):
        found.append("pthread")               # the model's word (definitions.PARADIGMS), as OTF2's reader says it
    if any(63000000 <= c < 64000000 for c in seen):
        found.append("cuda")
    if any(is_io(c) for c in seen):
        found.append("io")
    return found


def is_io(code: int) -> bool:
    return code == 50000005 or 40000004 <= code <= 40000010 or code == 40000011
