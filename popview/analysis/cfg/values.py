"""Bounded parsing of the values inside cfg lines: numbers, braces, quoted labels."""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

MAX_NUMBER_CHARS = 400        # DBL_MAX is written with 310 digits + 13 for the fraction
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,4})?")
_PAIR = re.compile(r"\{\s*([^{},]+?)\s*,\s*([^{}]*?)\s*\}")
_COUNTED = re.compile(r"\{\s*(\d{1,6})\s*,")
_LABEL = re.compile(r'"([^"]*)"')


class ValueSyntax(ValueError):
    """A value that does not parse; the reader adds the file and line."""


def number(token: str) -> int | float:
    """An int for plain digits that fit 64 bits, else a float (310-digit DBL_MAX included).

    Written-out decimals stay floats, so a description written back reads the same text.
    """
    if len(token) > MAX_NUMBER_CHARS:
        raise ValueSyntax(f"number of {len(token)} characters (more than {MAX_NUMBER_CHARS})")
    if not _NUMBER.fullmatch(token):
        raise ValueSyntax(f"{token[:40]!r} is not a number")
    try:
        exact = Decimal(token)
    except InvalidOperation:                       # pragma: no cover - the regex admits decimals only
        raise ValueSyntax(f"{token[:40]!r} is not a number") from None
    if any(mark in token for mark in ".eE") or abs(exact) >= 2 ** 64:
        return float(exact)
    return int(exact)


def numbers(tokens: list[str]) -> tuple[int | float, ...]:
    return tuple(number(t) for t in tokens)


def integer(token: str) -> int:
    value = number(token)
    if not isinstance(value, int) and abs(value) < 2 ** 63 and value == int(value):
        value = int(value)                         # positions and counts written as 3.000000
    if not isinstance(value, int):
        raise ValueSyntax(f"{token[:40]!r} is not a whole number")
    return value


def boolean(token: str) -> bool:
    low = token.strip().lower()
    if low in ("true", "1"):
        return True
    if low in ("false", "0"):
        return False
    raise ValueSyntax(f"{token[:40]!r} is neither true nor false")


def counted_pairs(text: str) -> tuple[int | None, list[tuple[str, str]]]:
    """`{ N, { {a, b}, {c, d}, } }` -> (N, [(a, b), (c, d)]); N is None when absent."""
    head = _COUNTED.match(text.strip())
    return (int(head.group(1)) if head else None), _PAIR.findall(text)


def labels(text: str) -> list[str]:
    return _LABEL.findall(text)


def parameters(text: str) -> tuple[int, tuple[tuple[int | float, ...], ...]]:
    """`{ n, { k v1 .. vk, k v1 .. } }` -> (n, ((v1..vk), ...)) for window_semantic_module."""
    body = text.strip()
    head = _COUNTED.match(body)
    if head is None or not body.endswith("}"):
        raise ValueSyntax(f"parameters {body[:60]!r} are not of the form {{ n, {{ k v..., ... }} }}")
    inner = body[head.end():-1].strip()            # drop "{ n," and the outer "}"
    if not (inner.startswith("{") and inner.endswith("}")):
        raise ValueSyntax(f"parameters {body[:60]!r} lack their inner braces")
    inner = inner[1:-1]
    params = []
    for chunk in inner.split(","):
        tokens = chunk.split()
        if not tokens:
            continue
        count = integer(tokens[0])
        if count != len(tokens) - 1:
            raise ValueSyntax(f"parameter {chunk.strip()[:60]!r} declares {count} values, has {len(tokens) - 1}")
        params.append(numbers(tokens[1:]))
    return int(head.group(1)), tuple(params)
