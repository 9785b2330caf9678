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
    memory when `path` is (in_memory)."""
    held = _held.get(os.path.abspath(path))
    if held is not None:
        if mode == "w":
            held.seek(0)
            held.truncate()
        path = held
    if mode == "w":
        return h5py.File(path, mode, libver=LIBVER, userblock_size=USERBLOCK)
    return h5py.File(path, mode, libver=LIBVER)


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
    """open_file for writing, closed safely when anything fails: a full disk fails
    HDF5's flush at closing too, after which releasing the file's objects crashed the
    process. Room is made first (`make_room`: the conversion's scratch files removed),
    then the file closed; a file that still cannot be closed is kept, not released."""
    f = open_file(path, mode)
    try:
        yield f
    except BaseException:
        _close_after_failure(f, make_room)
        raise
    try:
        f.close()
    except BaseException:
        _close_after_failure(f, make_room)
        raise


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
    """xxh3-128 of every attribute (name and value) of every object but the digest."""
    h = xxhash.xxh3_128()

    def add(name: str, obj) -> None:
        h.update(name.encode() + b"\0")
        for key in sorted(obj.attrs):
            if obj is h5 and key == DIGEST_ATTR:
                continue
            value = obj.attrs[key]
            h.update(key.encode() + b"\0" + repr(value.tolist() if hasattr(value, "tolist") else value).encode() + b"\0")

    add("/", h5)
    h5.visititems(add)
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
    with open_file(path, "r+") as h5:
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
