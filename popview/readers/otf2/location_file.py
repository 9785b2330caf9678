"""One decoded OTF2 location, as a Dask task hands it to the driver: a file of numpy
arrays (`.npz`, read with allow_pickle=False) and a JSON skeleton saying how they nest.

No pickle: the driver reads a file from a folder that workers on other machines share, and
only numbers, strings, arrays and the few result classes listed here can come out of it.
"""
from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from pathlib import Path

import numpy as np

from popview.readers.otf2.mapping import Halves, Mapped, Problems
from popview.readers.otf2.threads import Summary

CLASSES = {cls.__name__: cls for cls in (Summary, Mapped, Halves, Problems)}
SKELETON = "skeleton"


def write(path: Path, result) -> None:
    """`result` to `path`, whole or not at all (a temporary name, then a rename)."""
    arrays: dict[str, np.ndarray] = {}
    skeleton = json.dumps(_encode(result, arrays)).encode("utf-8")
    arrays[SKELETON] = np.frombuffer(skeleton, np.uint8)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.rename(tmp, path)


def read(path: Path):
    """What `write` wrote; ValueError for anything else."""
    with np.load(path, allow_pickle=False) as stored:
        arrays = {k: stored[k] for k in stored.files}
    skeleton = arrays.pop(SKELETON, None)
    if skeleton is None:
        raise ValueError(f"{path}: not a decoded location (no skeleton)")
    return _decode(json.loads(skeleton.tobytes().decode("utf-8")), arrays, path)


def _encode(obj, arrays: dict):
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            raise TypeError("an array of Python objects cannot be written")
        key = f"a{len(arrays)}"
        arrays[key] = obj
        return {"a": key}
    if isinstance(obj, Counter):
        return {"C": [[_encode(k, arrays), _encode(v, arrays)] for k, v in obj.items()]}
    if isinstance(obj, dict):
        return {"d": [[_encode(k, arrays), _encode(v, arrays)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return {"l" if isinstance(obj, list) else "t": [_encode(v, arrays) for v in obj]}
    name = type(obj).__name__
    if CLASSES.get(name) is type(obj):
        return {"o": name, "f": {f.name: _encode(getattr(obj, f.name), arrays) for f in dataclasses.fields(obj)}}
    raise TypeError(f"a {name} cannot be written")


def _decode(node, arrays: dict, path: Path):
    if not isinstance(node, dict):
        return node
    if "a" in node:
        return arrays[node["a"]]
    if "l" in node or "t" in node:
        items = [_decode(v, arrays, path) for v in node.get("l", node.get("t"))]
        return items if "l" in node else tuple(items)
    if "d" in node or "C" in node:
        pairs = {_decode(k, arrays, path): _decode(v, arrays, path) for k, v in node.get("d", node.get("C"))}
        return pairs if "d" in node else Counter(pairs)
    cls = CLASSES.get(node.get("o"))
    if cls is None:
        raise ValueError(f"{path}: unknown kind of value {node.get('o')!r}")
    obj = cls.__new__(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    for name, value in node["f"].items():
        if name not in fields:
            raise ValueError(f"{path}: {cls.__name__} has no field {name!r}")
        setattr(obj, name, _decode(value, arrays, path))
    return obj
