"""The file a Dask task writes for one decoded OTF2 location: no pickle, the same values back,
and anything else in its place refused."""
from __future__ import annotations

import pickle
from collections import Counter

import numpy as np
import pytest

from popview.readers.otf2 import location_file
from popview.readers.otf2.mapping import Halves, Mapped, Problems


def a_location():
    events = {"loc": np.zeros(3, np.int32), "time": np.arange(3, dtype=np.int64), "type": np.ones(3, np.int32),
              "value": np.array([1.5, -0.0, np.nan])}
    mapped = Mapped(events, None, {"begin": np.zeros(0, np.int64)}, np.array([-1, 0]), np.array([4, 7]))
    sends = Halves()
    sends.add(loc=[1, 1], time=[10, 20], comm=[0, 0], src=[0, 0], dst=[1, 1], tag=[5, 6], size=[8, 16])
    problems = Problems()
    problems.add("unmatched", 2)
    return (None, (mapped, sends, Halves(), problems), Counter({3: 7, (1, "x"): 2}))


def test_a_location_comes_back_equal(tmp_path):
    path = tmp_path / "location-1.npz"
    location_file.write(path, a_location())
    summary, (mapped, sends, recvs, problems), counts = location_file.read(path)
    assert summary is None and counts == Counter({3: 7, (1, "x"): 2})
    want = a_location()[1][0]
    for key, column in want.events.items():
        np.testing.assert_array_equal(mapped.events[key], column)
        assert mapped.events[key].dtype == column.dtype
    assert mapped.states is None and list(mapped.visits) == ["begin"]
    np.testing.assert_array_equal(mapped.local_region, [4, 7])
    assert [list(c) for c in sends.tag] == [[5, 6]] and recvs.tag == [] and problems.counts == {"unmatched": 2}
    assert not list(tmp_path.glob("*.tmp"))


def test_a_pickle_in_its_place_is_refused_unread(tmp_path, monkeypatch):
    path = tmp_path / "location-1.npz"
    path.write_bytes(pickle.dumps(a_location()))
    monkeypatch.setattr(pickle, "loads", lambda *_a, **_k: pytest.fail("unpickled"))
    with pytest.raises(ValueError):
        location_file.read(path)


def test_arrays_of_objects_and_foreign_classes_are_refused(tmp_path):
    path = tmp_path / "x.npz"
    np.savez(path, a0=np.array([{"x": 1}], dtype=object),
             skeleton=np.frombuffer(b'{"a": "a0"}', np.uint8))
    with pytest.raises(ValueError):
        location_file.read(path)
    np.savez(path, skeleton=np.frombuffer(b'{"o": "Popen", "f": {}}', np.uint8))
    with pytest.raises(ValueError, match="unknown kind"):
        location_file.read(path)
    with pytest.raises(TypeError):
        location_file.write(tmp_path / "y.npz", object())
