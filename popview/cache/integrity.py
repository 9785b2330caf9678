"""Every byte of a cache that a number comes from is checked before use.

- HDF5's own metadata (superblock, object headers with the attributes, chunk
  indexes) carries checksums in the file format of HDF5 1.10 and later, which
  the library verifies as it loads them: caches are written with that format
  (`LIBVER`).
- Every dataset carries HDF5's Fletcher32 filter: a checksum of each stored
  (compressed) chunk, verified by HDF5 on every read. `verify` checks all
  chunks of a file at once, from the raw bytes, without decompressing them.
- Attributes whose values HDF5 keeps outside the object headers (strings go to
  its global heap, which has no checksum) are covered by a digest of every
  attribute of every object, kept in the root's `attrs_digest`.
"""
from __future__ import annotations

import mmap
import os
from contextlib import contextmanager
from pathlib import Path

import h5py
import numba
import numpy as np
import xxhash

from popview.cache.errors import CacheDamaged

LIBVER = ("v110", "latest")
DIGEST_ATTR = "attrs_digest"
FLETCHER32 = 3        # h5py.h5z.FILTER_FLETCHER32


def open_file(path, mode: str) -> h5py.File:
    """A cache (or part) file in the checksummed format."""
    return h5py.File(path, mode, libver=LIBVER)


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
        f.close()
    except Exception:
        _unclosable.append(f)


def checked() -> dict:
    """Dataset options that make HDF5 store and verify a checksum of every chunk."""
    return {"fletcher32": True}


@numba.njit(cache=True, nogil=True)
def fletcher32(data) -> int:
    """HDF5's Fletcher32 (H5_checksum_fletcher32): 16-bit big-endian words."""
    n = len(data) // 2
    sum1 = np.uint32(0)
    sum2 = np.uint32(0)
    i = 0
    while n:
        t = 360 if n > 360 else n
        n -= t
        for _ in range(t):
            sum1 += (np.uint32(data[i]) << np.uint32(8)) | np.uint32(data[i + 1])
            sum2 += sum1
            i += 2
        sum1 = (sum1 & np.uint32(0xFFFF)) + (sum1 >> np.uint32(16))
        sum2 = (sum2 & np.uint32(0xFFFF)) + (sum2 >> np.uint32(16))
    if len(data) % 2:
        sum1 += np.uint32(data[i]) << np.uint32(8)
        sum2 += sum1
        sum1 = (sum1 & np.uint32(0xFFFF)) + (sum1 >> np.uint32(16))
        sum2 = (sum2 & np.uint32(0xFFFF)) + (sum2 >> np.uint32(16))
    sum1 = (sum1 & np.uint32(0xFFFF)) + (sum1 >> np.uint32(16))
    sum2 = (sum2 & np.uint32(0xFFFF)) + (sum2 >> np.uint32(16))
    return (sum2 << np.uint32(16)) | sum1


def append_checksum(chunk: bytes) -> bytes:
    """A filtered chunk as HDF5's Fletcher32 filter stores it (checksum little-endian after)."""
    return chunk + int(fletcher32(np.frombuffer(chunk, np.uint8))).to_bytes(4, "little")


@numba.njit(cache=True, nogil=True)
def _first_bad(buf, starts, sizes) -> int:
    """Index of the first chunk whose stored checksum does not match (-1: none)."""
    for k in range(len(starts)):
        a, n = starts[k], sizes[k]
        if n < 4 or a + n > len(buf):
            return k
        stored = (np.uint32(buf[a + n - 4]) | (np.uint32(buf[a + n - 3]) << np.uint32(8))
                  | (np.uint32(buf[a + n - 2]) << np.uint32(16)) | (np.uint32(buf[a + n - 1]) << np.uint32(24)))
        got = fletcher32(buf[a:a + n - 4])
        # HDF5 also accepts the checksum of its releases before 1.6.3, bytes swapped in pairs
        swapped = ((got & np.uint32(0x00FF00FF)) << np.uint32(8)) | ((got >> np.uint32(8)) & np.uint32(0x00FF00FF))
        if stored != got and stored != swapped:
            return k
    return -1


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


def verify(h5: h5py.File) -> None:
    """Raise CacheDamaged unless every dataset is checksummed and every chunk and
    attribute matches its checksum."""
    where = h5.filename
    try:
        stored = h5.attrs.get(DIGEST_ATTR)
        if stored is None or bytes(stored).decode() != attrs_digest(h5):
            raise CacheDamaged(f"{where}: cache damaged (attributes do not match their checksum)")
        starts, sizes, names = [], [], []
        for name, dset in _datasets(h5):
            plist = dset.id.get_create_plist()
            if dset.shape == () or FLETCHER32 not in [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]:
                raise CacheDamaged(f"{where}: cache damaged ({name} carries no checksum)")
            found: list = []
            dset.id.chunk_iter(found.append)
            starts += [info.byte_offset for info in found]
            sizes += [info.size for info in found]
            names += [name] * len(found)
    except (OSError, RuntimeError, KeyError, ValueError, UnicodeDecodeError) as exc:
        raise CacheDamaged(f"{where}: cache damaged ({first_line(exc)})") from None
    if starts:
        bad = _check_chunks(Path(where), np.array(starts, np.int64), np.array(sizes, np.int64))
        if bad >= 0:
            raise CacheDamaged(f"{where}: cache damaged (a chunk of {names[bad]} does not match its checksum)")


def _datasets(h5: h5py.File) -> list[tuple[str, h5py.Dataset]]:
    found = []
    h5.visititems(lambda name, obj: found.append((name, obj)) if isinstance(obj, h5py.Dataset) else None)
    return found


def _check_chunks(path: Path, starts: np.ndarray, sizes: np.ndarray) -> int:
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if not size:
            return 0
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            buf = np.frombuffer(mapped, np.uint8)
            try:
                return int(_first_bad(buf, starts, sizes))
            finally:
                del buf


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
