"""Mutations of a valid seed file: bit flips, byte changes, insertions, deletions,
splices, truncation, and numbers replaced by extreme ones (text or binary). One
`random.Random` drives them, so the long runs (plain random) and the test run
(hypothesis' `randoms()`, which shrinks) share the same mutations."""
from __future__ import annotations

import copy
import json
import random

TEXT_NUMBERS = [b"0", b"-1", b"1", b"2147483648", b"4294967296", b"9223372036854775807", b"9223372036854775808",
                b"-9223372036854775808", b"18446744073709551615", b"99999999999999999999999", b"1e308", b"nan",
                b"00000000000000000000001", b"", b"-", b"+1", b" 1", b"1_000"]
BINARY_INTS = [0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, (1 << 63) - 1, 1 << 63,
               (1 << 64) - 1, (1 << 64) - 10]
TEXT_PIECES = [b"\n", b":", b"(", b")", b",", b"\0", b"\r\n", b"\xff\xfe", b"#", b"<", b"/>", b"&amp;", b"]]>",
               b"\"", b"{", b"}", b"[", b"]", b"[" * 5000, b"{\"a\":" * 3000, b"\\u0000", b"EVENT_TYPE\n", b"VALUES\n", b"STATES\n", b"LEVEL X SIZE 9\n"]


def mutate(seed: bytes, rnd: random.Random, text: bool, max_ops: int = 6) -> bytes:
    data = bytearray(seed)
    for _ in range(rnd.randint(1, max_ops)):
        op = rnd.choice(OPS_TEXT if text else OPS_BINARY)
        op(data, rnd)
    return bytes(data)


def _pos(data: bytearray, rnd: random.Random) -> int:
    return rnd.randint(0, max(len(data) - 1, 0))


def _flip(data, rnd):
    if data:
        data[_pos(data, rnd)] ^= 1 << rnd.randint(0, 7)


def _byte(data, rnd):
    if data:
        data[_pos(data, rnd)] = rnd.randint(0, 255)


def _insert(data, rnd):
    piece = rnd.choice(TEXT_PIECES) if rnd.random() < 0.5 else bytes(rnd.randint(0, 255) for _ in range(rnd.randint(1, 8)))
    p = _pos(data, rnd)
    data[p:p] = piece


def _delete(data, rnd):
    if data:
        p = _pos(data, rnd)
        del data[p:p + rnd.randint(1, 64)]


def _splice(data, rnd):
    """A piece of the file copied elsewhere (repeats records, headers, chunks)."""
    if data:
        a = _pos(data, rnd)
        piece = bytes(data[a:a + rnd.randint(1, 256)])
        b = _pos(data, rnd)
        if rnd.random() < 0.5:
            data[b:b] = piece
        else:
            data[b:b + len(piece)] = piece


def _truncate(data, rnd):
    if data:
        del data[_pos(data, rnd):]


def _text_number(data, rnd):
    """A run of digits replaced by an extreme number."""
    digits = [i for i, c in enumerate(data) if 48 <= c <= 57]
    if not digits:
        return
    start = end = rnd.choice(digits)
    while start > 0 and 48 <= data[start - 1] <= 57:
        start -= 1
    while end < len(data) and 48 <= data[end] <= 57:
        end += 1
    data[start:end] = rnd.choice(TEXT_NUMBERS)


def _binary_int(data, rnd):
    """An integer of 1, 2, 4 or 8 bytes, either byte order, written over the file."""
    size = rnd.choice((1, 2, 4, 8))
    value = rnd.choice(BINARY_INTS) & ((1 << (8 * size)) - 1)
    raw = value.to_bytes(size, rnd.choice(("little", "big")))
    p = _pos(data, rnd)
    data[p:p + size] = raw


OPS_TEXT = [_flip, _byte, _insert, _delete, _splice, _truncate, _text_number, _text_number, _text_number]
OPS_BINARY = [_flip, _byte, _insert, _delete, _splice, _truncate, _binary_int, _binary_int, _binary_int]


# ---- JSON: values replaced by values of other types -------------------------------------
ODD_VALUES = [None, True, -1, 0, 2 ** 70, -(2 ** 70), 1e308, -0.0, "", "x" * 5000, [], {}, [[[[]]]], {"": None},
              "../../etc/passwd", "/dev/zero", "\u0000", 3.5]


def mutate_json(seed: bytes, rnd: random.Random) -> bytes:
    """The seed's JSON with a few nodes replaced, removed or nested deeply; sometimes bytes-mutated too."""
    doc = json.loads(seed)
    for _ in range(rnd.randint(1, 4)):
        doc = _replace_node(doc, rnd)
    try:
        text = json.dumps(doc).encode()
    except RecursionError:            # nestings nested in each other: deeper than json can write
        text = seed.replace(b"[", b"[" * 3000 + b"[", 1) + b"]" * 3000
    return mutate(text, rnd, text=True, max_ops=2) if rnd.random() < 0.3 else text


def _odd(rnd):
    return copy.deepcopy(rnd.choice(ODD_VALUES))       # never the shared object: it would be mutated


def _replace_node(doc, rnd):
    paths = []

    def walk(node, path):
        paths.append(path)
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, path + [k])
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, path + [i])

    walk(doc, [])
    path = rnd.choice(paths)
    if not path:
        return _odd(rnd)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    what = rnd.random()
    if what < 0.15:
        del parent[path[-1]]
    elif what < 0.2:
        nested = _odd(rnd)
        for _ in range(rnd.choice((10, 100, 500))):
            nested = [nested]
        parent[path[-1]] = nested
    else:
        parent[path[-1]] = _odd(rnd)
    return doc

