"""Every byte of a cache that a number comes from is checked before use.

- The whole file is covered by an xxh3-128 digest kept in its HDF5 user block
  (16 KiB at its start that HDF5 leaves to the application; 512 bytes in caches
  of earlier releases), written when the cache is complete, just before it is
  renamed into place. Opening a cache hashes the file once (about 3.6 GB/s
  here) and compares: metadata, attributes, HDF5's global heap and every chunk,
  in one pass. The cache's stored summary (summary.py) follows the digest in
  the user block, with a checksum of its own.
- Every dataset also carries HDF5's Fletcher32 filter, a checksum of each stored
  (compressed) chunk, which HDF5 verifies whenever it reads the chunk: a file
  damaged after it was opened fails the read instead of giving numbers.
- HDF5's own metadata is written in the 1.10 format (`LIBVER`), whose
  structures carry checksums the library verifies as it loads them, and the
  attributes are covered by `attrs_digest` too: both catch damage where the
  file is read without `verify`.
"""
from __future__ import annotations

import errno
import io
import mmap
import os
from contextlib import contextmanager
from pathlib import Path

import h5py
import numpy as np

from popview.jit import njit
import xxhash

from popview.cache.errors import CacheDamaged

LIBVER = ("v110", "latest")
USERBLOCK = 16384               # bytes at the start of a cache that HDF5 leaves alone: the seal, the summary
_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
_SEAL = b"popview cache xxh3-128 "
DIGEST_ATTR = "attrs_digest"
FLETCHER32 = 3        # h5py.h5z.FILTER_FLETCHER32


def open_file(path, mode: str) -> h5py.File:
    """A cache (or part) file in the checksummed format, with room for the seal; held in
    memory when `path` is (in_memory). Written ("w", "r+") through a _Guarded file: no
    write fails inside HDF5 (use it through writing(), which raises what failed)."""
    held = _held.get(os.path.abspath(path))
    if held is not None:
        if mode == "w":
            held.seek(0)
            held.truncate()
        target = held
    elif mode != "r":
        target = _Guarded(path, mode)
    else:
        target = path
    try:
        if mode == "w":
            return h5py.File(target, mode, libver=LIBVER, userblock_size=USERBLOCK)
        return h5py.File(target, mode, libver=LIBVER)
    except BaseException:
        if isinstance(target, _Guarded):
            target.close()
        raise


class _Guarded:
    """The file HDF5 writes a cache (or a companion, a part file) through (h5py's `fileobj`
    driver), whose writes never fail inside HDF5. A write that fails inside HDF5 (a disk
    filled up: ENOSPC, EDQUOT; a file size limit: EFBIG) leaves the file's metadata dirty,
    and releasing its objects afterwards crashed the process (SIGSEGV in H5D_close, a
    SIGBUS, "Can't decrement id ref count": seen converting with RLIMIT_FSIZE and on a
    full tmpfs, the timeline overview's pass above all). Here the first failed write is
    kept (`failure`: its errno and this file's path) and it and every later write are taken
    as done: held in memory to be read back (up to LOST_BYTES; beyond, dropped: the file is
    thrown away anyway). HDF5 goes on, and closes the file, as if the disk had room; the
    failure is raised by Python code (check: writing(), ChunkedWriter after each chunk),
    outside HDF5, as an ordinary OSError."""

    LOST_BYTES = 64 << 20

    def __init__(self, path, mode: str):
        self.path = os.fspath(path)
        flags = os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0) \
            | (os.O_CREAT | os.O_TRUNC if mode == "w" else 0)
        self.fd = os.open(self.path, flags, 0o666)
        self._pos = 0
        self._size = os.fstat(self.fd).st_size
        self.failure: OSError | None = None
        self._lost: list[tuple[int, bytes]] = []     # (offset, bytes) written since the failure
        self._lost_bytes = 0
        name = repr(self)
        _held_names[name] = self.path
        _guards[name] = self

    def __repr__(self) -> str:
        # the name h5py gives the file (ASCII): its path when it is one, else a tag (folder_of)
        return self.path if self.path.isascii() else f"<popview file {id(self):x}>"

    def check(self) -> None:
        """Raise the write that failed, if one did."""
        if self.failure is not None:
            raise OSError(self.failure.errno, self.failure.strerror, self.path)

    # the file-like methods h5py's fileobj driver calls
    def seek(self, offset: int, whence: int = 0) -> int:
        self._pos = offset if whence == 0 else self._pos + offset if whence == 1 else self._size + offset
        return self._pos

    def tell(self) -> int:
        return self._pos

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        at, n, done = self._pos, len(view), 0
        if self.failure is None:
            try:
                while done < n:
                    wrote = _pwrite(self.fd, view[done:], at + done)
                    if wrote <= 0:
                        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                    done += wrote
            except OSError as exc:
                self.failure = exc
        if done < n:
            self._keep(at + done, view[done:])
        self._pos = at + n
        self._size = max(self._size, self._pos)
        return n

    def _keep(self, at: int, view) -> None:
        if self._lost_bytes + len(view) <= self.LOST_BYTES:
            self._lost.append((at, bytes(view)))
            self._lost_bytes += len(view)

    def readinto(self, buf) -> int:
        view = memoryview(buf).cast("B")
        at, n = self._pos, len(view)
        got = 0
        while got < n:
            more = _pread_into(self.fd, view[got:], at + got)
            if more <= 0:
                break
            got += more
        if got < n:
            view[got:] = bytes(n - got)            # past the end: zeros, as HDF5's own driver reads
        for offset, data in self._lost:          # in order: a later write over an earlier one wins
            a, b = max(at, offset), min(at + n, offset + len(data))
            if a < b:
                view[a - at:b - at] = data[a - offset:b - offset]
        self._pos = at + n
        return n

    def read(self, size: int = -1) -> bytes:
        buf = bytearray(max(0, self._size - self._pos) if size < 0 else size)
        self.readinto(buf)
        return bytes(buf)

    def truncate(self, size: int | None = None) -> int:
        size = self._pos if size is None else size
        if self.failure is None:
            try:
                os.ftruncate(self.fd, size)
            except OSError as exc:
                self.failure = exc
        self._size = size
        return size

    def flush(self) -> None:
        pass

    def close(self) -> None:
        name = repr(self)
        if _guards.get(name) is self:
            del _guards[name]
            _held_names.pop(name, None)
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)

    def __del__(self):
        try:
            self.close()
        except Exception:        # noqa: BLE001 - at interpreter exit
            pass


def _pwrite(fd: int, view, at: int) -> int:
    if hasattr(os, "pwrite"):
        return os.pwrite(fd, view, at)
    os.lseek(fd, at, os.SEEK_SET)            # no pwrite (Windows): one thread writes a file at a time
    return os.write(fd, view)


def _pread_into(fd: int, view, at: int) -> int:
    if hasattr(os, "preadv"):
        return os.preadv(fd, [view], at)
    os.lseek(fd, at, os.SEEK_SET)
    data = os.read(fd, len(view))
    view[:len(data)] = data
    return len(data)


# Files being written (_Guarded), by the name h5py gives them.
_guards: dict[str, _Guarded] = {}


def guard_of(obj) -> _Guarded | None:
    """The _Guarded file the open HDF5 object `obj` (a file, a dataset) is written through;
    None for another (read, held in memory)."""
    try:
        return _guards.get(obj.file.filename)
    except Exception:        # noqa: BLE001 - a closed object
        return None


# Files written in memory (in_memory): path -> the bytes HDF5 writes, and the name h5py gives
# such a file -> path (folder_of).
_held: dict[str, io.BytesIO] = {}
_held_names: dict[str, str] = {}


@contextmanager
def in_memory(path):
    """Within, the HDF5 file at `path` (open_file, writing) is written into memory, never
    to the disk; yields a function that writes what it holds to `path` with plain writes.
    A write that fails inside HDF5 (a disk filled up) leaves objects whose release crashes
    the process (SIGSEGV in H5D_close); a file written so cannot fail inside HDF5, and
    its writing to the disk fails as an ordinary OSError (ENOSPC)."""
    key = os.path.abspath(path)
    held = _held[key] = io.BytesIO()
    _held_names[repr(held)] = key

    def write_out() -> None:
        with open(key, "wb") as f:
            f.write(held.getbuffer())

    try:
        yield write_out
    finally:
        _held.pop(key, None)
        _held_names.pop(repr(held), None)
        held.close()


def folder_of(f: h5py.File) -> Path:
    """The folder of the open file `f` (of the path it is held for, in memory: in_memory)."""
    name = f.filename
    return Path(_held_names.get(name, name)).resolve().parent


# Files whose closing failed even after room was made: never deallocated, since HDF5
# crashes on releasing the objects of a file it could not flush.
_unclosable: list = []


@contextmanager
def writing(path, mode: str, make_room=None):
    """open_file for writing, closed safely when anything fails; a write that failed (a
    full disk: _Guarded keeps it from HDF5, which goes on as if it had not) is raised once
    the file is closed, as an OSError naming the file, in place of what followed it.
    Room is made first (`make_room`: the conversion's scratch files removed), then the
    file closed; a file that still cannot be closed is kept, not released."""
    f = open_file(path, mode)
    guard = guard_of(f)
    try:
        try:
            yield f
        except BaseException as exc:
            _close_after_failure(f, make_room)
            if guard is not None and guard.failure is not None and isinstance(exc, Exception):
                guard.check()       # what failed first (what followed read back what was lost)
            raise
        try:
            f.close()
        except BaseException:
            _close_after_failure(f, make_room)
            raise
        if guard is not None:
            guard.check()
    finally:
        if guard is not None:
            guard.close()


def _close_after_failure(f: h5py.File, make_room) -> None:
    if make_room is not None:
        try:
            make_room()
        except Exception:
            pass
    try:
        open_ids = h5py.h5f.get_obj_ids(f.id, h5py.h5f.OBJ_ALL)
    except Exception:
        open_ids = []
    try:
        f.close()
    except Exception:
        # every object of the file is kept too: releasing a dataset of a file whose flush
        # failed decrements HDF5's count, and its last release retries the flush and crashed
        _unclosable.append((f, open_ids))


def checked() -> dict:
    """Dataset options that make HDF5 store and verify a checksum of every chunk."""
    return {"fletcher32": True}


def _word_sums_python(data):
    """_word_sums by numpy (interpreted runs, popview.jit): the same sums, blocks of 2^20 words."""
    n = len(data) // 2
    words = (data[0:2 * n:2].astype(np.uint64) << np.uint64(8)) | data[1:2 * n:2]
    a = b = 0
    block = 1 << 20
    for i in range(0, n, block):
        w = words[i:i + block]
        s = int(w.sum())
        ws = int((w * np.arange(len(w), dtype=np.uint64)).sum())
        b = (b + (n - i) * s - ws) % 65535          # Σ (n - k) w_k over this block
        a = (a + s) % 65535
    return np.uint64(a), np.uint64(b), bool(words.any())


@njit(cache=True, nogil=True, python=_word_sums_python)
def _word_sums(data):
    """(Σ w, Σ (n - i) w) modulo 65535 of the n big-endian 16-bit words w of `data`, and
    whether any is not 0: in blocks of 256 words, whose sums fit 32 bits and vectorise."""
    n = len(data) // 2
    m = np.uint64(65535)
    a = np.uint64(0)
    b = np.uint64(0)
    seen = np.uint32(0)
    i = 0
    while i < n:
        t = min(256, n - i)
        s = np.uint32(0)
        ws = np.uint32(0)
        base = 2 * i
        for j in range(t):
            w = (np.uint32(data[base + 2 * j]) << np.uint32(8)) | np.uint32(data[base + 2 * j + 1])
            s += w
            ws += np.uint32(j) * w
        seen |= s
        b = (b + np.uint64(t) * a + np.uint64(t) * np.uint64(s) - np.uint64(ws)) % m   # Σ (t - j) w_j
        a = (a + np.uint64(s)) % m
        i += t
    return a, b, seen != 0


@njit(cache=True, nogil=True)
def fletcher32(data) -> int:
    """HDF5's Fletcher32 (H5_checksum_fletcher32) of a byte array. Its running sums
    folded to 16 bits end as the sums' residues modulo 65535, written 1..65535 (0
    only when every byte is 0): computed that way, in blocks (five times faster)."""
    m = np.uint64(65535)
    a, b, nonzero = _word_sums(data)
    if len(data) % 2:
        w = np.uint64(data[len(data) - 1]) << np.uint64(8)
        nonzero = nonzero or w != 0
        a = (a + w) % m
        b = (b + a) % m
    if not nonzero:
        return np.uint32(0)
    a = a if a else m
    b = b if b else m
    return np.uint32((b << np.uint64(16)) | a)


def append_checksum(chunk: bytes) -> bytes:
    """A filtered chunk as HDF5's Fletcher32 filter stores it (checksum little-endian after)."""
    return chunk + int(fletcher32(np.frombuffer(chunk, np.uint8))).to_bytes(4, "little")


def attrs_digest(h5: h5py.File) -> str:
    """xxh3-128 of every attribute (name and value) of every object but the digest. The
    objects are visited as visititems() does (the same names, in the same order), but only
    those with attributes are opened: opening each of a cache's 60 objects was most of the
    7-9 ms this took at every conversion's end and every open that verifies (2 ms now)."""
    from h5py import h5o

    h = xxhash.xxh3_128()

    def add(name: str, obj) -> None:
        h.update(name.encode() + b"\0")
        for key in sorted(obj.attrs):
            if obj is h5 and key == DIGEST_ATTR:
                continue
            value = obj.attrs[key]
            h.update(key.encode() + b"\0" + repr(value.tolist() if hasattr(value, "tolist") else value).encode() + b"\0")

    def visit(name: bytes, info) -> None:
        if info.num_attrs:
            add(name.decode(), h5[name.decode()])
        else:
            h.update(name + b"\0")

    add("/", h5)
    h5o.visit(h5.id, visit, info=True)
    return h.hexdigest()


def sign(h5: h5py.File) -> None:
    """Store the attributes' digest (the last write before the file is complete)."""
    h5.attrs[DIGEST_ATTR] = np.bytes_(attrs_digest(h5))


def seal(path: Path, summary: dict | None = None) -> None:
    """Write the digest of the whole file (but its user block) into its user block,
    and after it the cache's `summary` (summary.py) when given and when it fits."""
    from popview.cache import summary as stored

    path = Path(path)
    with open(path, "r+b") as f:
        room = userblock_size(f)
        digest = _file_digest(path, room)
        block = _SEAL + digest.encode() + b"\n"
        if summary is not None:
            annex = stored.encode(digest, {**summary, "bytes": os.fstat(f.fileno()).st_size})
            if len(block) + len(annex) <= room:
                block += annex
        f.seek(0)
        f.write(block.ljust(room, b"\0"))


def userblock_size(f) -> int:
    """The size of the user block of the open HDF5 file `f` (where HDF5 finds its superblock's
    signature: at 0, 512, 1024, 2048, ... bytes), read without HDF5."""
    at = 0
    while True:
        f.seek(at)
        found = f.read(len(_HDF5_SIGNATURE))
        if found == _HDF5_SIGNATURE:
            return at
        if len(found) < len(_HDF5_SIGNATURE):
            raise CacheDamaged(f"{getattr(f, 'name', 'file')}: not an HDF5 file")
        at = max(512, 2 * at)


def reseal(path: Path) -> None:
    """Sign and seal again a cache changed in place on purpose (tools and benchmarks
    that rebuild one group: popview itself never changes a cache in place). The
    stored summary is dropped (`popview info` then reads the cache itself)."""
    with writing(path, "r+") as h5:
        sign(h5)
    seal(Path(path))


def stored_digest(path) -> str | None:
    """The digest a sealed file's user block holds (its identity: a cache's timeline
    overview names the cache it belongs to by it), read without HDF5; None when unsealed."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(_SEAL) + 32)
    except OSError:
        return None
    return digest_in(head)


def digest_in(head: bytes) -> str | None:
    """The digest of the seal at the start of `head` (a file's first bytes), None without one."""
    if not head.startswith(_SEAL) or len(head) < len(_SEAL) + 32:
        return None
    try:
        return head[len(_SEAL):len(_SEAL) + 32].decode("ascii")
    except UnicodeDecodeError:
        return None


def verify(h5: h5py.File) -> None:
    """Raise CacheDamaged unless the file matches its digest and every dataset carries
    its chunks' checksums."""
    where = Path(h5.filename)
    try:
        room = h5.userblock_size
        with open(where, "rb") as f:
            head = f.read(room)
        if not head.startswith(_SEAL) or head[len(_SEAL):len(_SEAL) + 32].decode("ascii") != _file_digest(where, room):
            raise CacheDamaged(f"{where}: cache damaged (its bytes do not match their checksum)")
        for name, dset in _datasets(h5):
            plist = dset.id.get_create_plist()
            if dset.shape == () or FLETCHER32 not in [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]:
                raise CacheDamaged(f"{where}: cache damaged ({name} carries no checksum)")
        stored = h5.attrs.get(DIGEST_ATTR)
        if stored is None or bytes(stored).decode() != attrs_digest(h5):
            raise CacheDamaged(f"{where}: cache damaged (attributes do not match their checksum)")
    except (OSError, RuntimeError, KeyError, ValueError, UnicodeDecodeError) as exc:
        raise CacheDamaged(f"{where}: cache damaged ({first_line(exc)})") from None


# Bytes hashed between two releases of the mapped pages.
_DIGEST_SLICE = 64 << 20


def _file_digest(path: Path, userblock: int) -> str:
    """xxh3-128 of the file past its user block, hashed from a memory map (no copy), a
    slice at a time, each slice's pages let go once hashed: mapped pages count as the
    process's memory, and the whole 441 MB cache of the 1 GB trace mapped at once made
    the conversion's peak (its main process: 710 -> 949 MB)."""
    digest = xxhash.xxh3_128()
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size <= userblock:
            return digest.hexdigest()
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped, memoryview(mapped) as whole:
            for a in range(userblock, size, _DIGEST_SLICE):
                b = min(size, a + _DIGEST_SLICE)
                with whole[a:b] as part:
                    digest.update(part)
                first = a - a % mmap.PAGESIZE
                mapped.madvise(mmap.MADV_DONTNEED, first, b - first)   # the pages stay cached, not resident here
    return digest.hexdigest()


def _datasets(h5: h5py.File) -> list[tuple[str, h5py.Dataset]]:
    found = []
    h5.visititems(lambda name, obj: found.append((name, obj)) if isinstance(obj, h5py.Dataset) else None)
    return found


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
