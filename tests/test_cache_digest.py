"""The whole-file digest is hashed a slice at a time (its pages let go): the same digest
as one pass over the bytes, whatever the slice, and the mapped pages do not stay."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xxhash

from popview.cache import integrity


@pytest.mark.parametrize("userblock", [0, 512, 4096])
@pytest.mark.parametrize("slice_bytes", [4096, 3 * 4096, 1 << 20])
def test_digest_in_slices_is_the_digest_of_the_bytes(tmp_path, monkeypatch, userblock, slice_bytes):
    data = np.random.default_rng(userblock + slice_bytes).integers(0, 256, 3_000_001, np.uint8).tobytes()
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    monkeypatch.setattr(integrity, "_DIGEST_SLICE", slice_bytes)
    assert integrity._file_digest(path, userblock) == xxhash.xxh3_128(data[userblock:]).hexdigest()


def test_digest_of_a_file_no_longer_than_its_user_block(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 512)
    assert integrity._file_digest(path, 512) == xxhash.xxh3_128(b"").hexdigest()


def test_digest_keeps_at_most_a_slice_of_the_file_resident(tmp_path):
    """A fresh process's peak grows by about one slice, not by the file (256 MB here)."""
    path = tmp_path / "big.bin"
    with open(path, "wb") as f:
        f.write(os.urandom(1 << 20) * 256)
    code = ("import resource, sys; from pathlib import Path; from popview.cache import integrity; "
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; "
            "integrity._file_digest(Path(sys.argv[1]), 512); "
            "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)")
    env = dict(os.environ, PYTHONPATH=str(Path(integrity.__file__).parents[2]))
    grew = int(subprocess.run([sys.executable, "-c", code, str(path)], check=True, capture_output=True,
                              text=True, env=env).stdout.split()[-1])
    assert grew < integrity._DIGEST_SLICE + (32 << 20), f"peak grew by {grew / 1e6:.0f} MB"


def test_attrs_digest_is_that_of_every_object_opened(tmp_path):
    """integrity.attrs_digest opens only the objects that have attributes: the digest of every
    object opened and its attributes read, as the caches written before it were signed
    (names of objects without attributes included, in visititems' order)."""
    import h5py

    from popview.cache.integrity import DIGEST_ATTR, attrs_digest

    def every_object_opened(h5):
        h = xxhash.xxh3_128()

        def add(name, obj):
            h.update(name.encode() + b"\0")
            for key in sorted(obj.attrs):
                if obj is h5 and key == DIGEST_ATTR:
                    continue
                value = obj.attrs[key]
                h.update(key.encode() + b"\0" + repr(value.tolist() if hasattr(value, "tolist") else value).encode()
                         + b"\0")
        add("/", h5)
        h5.visititems(add)
        return h.hexdigest()

    with h5py.File(tmp_path / "c.h5", "w") as f:
        f.attrs["complete"] = True
        f.attrs[DIGEST_ATTR] = np.bytes_("x")
        f.create_dataset("b/ds", data=np.arange(3))
        f["b/ds"].attrs["unit"] = "ns"
        f.create_group("a/été/empty")
        f["a"].attrs["n"] = np.arange(4)
        f.create_dataset("z", data=[1.5])
        first = attrs_digest(f)
        assert first == every_object_opened(f)
        f["a/été/empty"].attrs["late"] = 1
        assert attrs_digest(f) == every_object_opened(f) != first
        del f["a/été/empty"].attrs["late"]
        f.create_group("a/été/empty2")
        assert attrs_digest(f) == every_object_opened(f) != first
