"""The .cubex container: a tar archive read into memory, never extracted.

A small tar parser of our own instead of `tarfile` because CubeW 4.8 wrote
header checksums off by a constant (GNU tar and `tarfile` refuse those
files); a bad checksum here is a warning, not an error. Member names are
checked so that nothing named '../x' or '/etc/x' is ever accepted.
"""
from __future__ import annotations

import zlib
from pathlib import Path, PurePosixPath

from popview.readers import files
from popview.readers.errors import InputError

BLOCK = 512


def read_members(path: Path) -> tuple[dict[str, memoryview], list[str]]:
    """{member name: contents} of a .cubex and the warnings raised while reading it.

    Contents are views into the one in-memory copy of the file."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
    if raw[:2] == b"\x1f\x8b":
        raw = _gunzip(path, raw)
    return parse_tar(path, raw)


def _gunzip(path: Path, raw, what: str = "archive") -> bytes:
    """Gzip data expanded, at most files.expansion_limit(its size) bytes (a bomb is refused)."""
    limit = files.expansion_limit(len(raw))
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(raw, limit)
    except zlib.error as exc:
        raise InputError(f"{path}: {what}: corrupt gzip compression: {exc}") from None
    if d.unconsumed_tail:
        raise InputError(f"{path}: {what}: expands beyond {limit:,} bytes from {len(raw):,} "
                         f"(over {files.MAX_EXPANSION} times its size: a compression bomb, not a profile)")
    if not d.eof:
        raise InputError(f"{path}: {what}: truncated gzip stream")
    return out


def gunzip_member(path: Path, name: str, data) -> bytes:
    """A gzip-compressed member (anchor.xml of Cube >= 4.3 may be one)."""
    return _gunzip(path, data, f"member {name}")


def parse_tar(path: Path, raw: bytes) -> tuple[dict[str, memoryview], list[str]]:
    members: dict[str, memoryview] = {}
    view = memoryview(raw)
    warnings: list[str] = []
    pos, long_name, pax_name = 0, None, None
    while pos + BLOCK <= len(raw):
        header = raw[pos:pos + BLOCK]
        if header.count(0) == BLOCK:
            break
        _check_sum(path, header, pos, warnings)
        size = _octal(path, header[124:136], pos, "size")
        kind = header[156:157]
        start, end = pos + BLOCK, pos + BLOCK + size
        if end > len(raw):
            raise InputError(f"{path}: tar member at byte {pos} is truncated "
                             f"({size} bytes announced, {len(raw) - start} present)")
        body = view[start:end]
        pos = start + -(-size // BLOCK) * BLOCK
        if kind == b"L":                                   # GNU long name for the next member
            long_name = bytes(body).rstrip(b"\0").decode("utf-8", "replace")
            continue
        if kind in (b"x", b"g"):                           # pax extended header
            pax_name = _pax_path(bytes(body)) if kind == b"x" else pax_name
            continue
        name = long_name or pax_name or _header_name(header)
        long_name = pax_name = None
        if kind not in (b"0", b"\0", b"7"):                # directories, links, devices: not data
            continue
        members[safe_name(path, name)] = body
    if not members:
        raise InputError(f"{path}: not a Cube archive (no tar members found)")
    return members, warnings


def safe_name(path: Path, name: str) -> str:
    """The member name, refusing absolute paths and '..' components."""
    p = PurePosixPath(name.replace("\\", "/"))
    drive = bool(p.parts) and p.parts[0].endswith(":")
    if not p.parts or p.is_absolute() or drive or ".." in p.parts:
        raise InputError(f"{path}: unsafe tar member name {name!r} (empty, absolute or containing '..')")
    return str(p)


def _header_name(header: bytes) -> str:
    name = header[0:100].split(b"\0", 1)[0]
    if header[257:262] == b"ustar":
        prefix = header[345:500].split(b"\0", 1)[0]
        if prefix:
            name = prefix + b"/" + name
    return name.decode("utf-8", "replace")


def _pax_path(body: bytes) -> str | None:
    for line in body.split(b"\n"):
        _, _, kv = line.partition(b" ")
        key, _, value = kv.partition(b"=")
        if key == b"path":
            return value.decode("utf-8", "replace")
    return None


def _octal(path: Path, field: bytes, pos: int, what: str) -> int:
    if field[:1] in (b"\x80", b"\xff"):                   # base-256 encoding of large numbers
        if field[:1] == b"\xff":
            raise InputError(f"{path}: tar header at byte {pos}: negative {what}")
        return int.from_bytes(field[1:], "big")
    text = field.split(b"\0", 1)[0].strip()
    try:
        return int(text or b"0", 8)
    except ValueError:
        raise InputError(f"{path}: not a Cube archive (tar header at byte {pos} has an invalid {what})") from None


def _check_sum(path: Path, header: bytes, pos: int, warnings: list[str]) -> None:
    stored = _octal(path, header[148:156], pos, "checksum")
    blanked = header[:148] + b" " * 8 + header[156:]
    if stored in (sum(blanked), sum(b - 256 if b > 127 else b for b in blanked)):
        return
    if header[257:262] != b"ustar" and not warnings:
        raise InputError(f"{path}: not a Cube archive (tar header at byte {pos}: bad checksum, no ustar magic)")
    msg = f"{path}: tar header checksums are wrong (a known CubeW 4.8 bug); read anyway"
    if msg not in warnings:
        warnings.append(msg)
