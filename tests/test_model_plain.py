"""popview.model.plain.as_plain: what dataclasses.asdict gives, faster (the definitions and
profiles a conversion writes as JSON)."""
from __future__ import annotations

import json
from collections import namedtuple
from dataclasses import asdict

import numpy as np

from popview.model.definitions import Definitions, EventType, Location, Process, Region
from popview.model.plain import as_plain
from popview.model.profile import MetricDef

Pair = namedtuple("Pair", "a b")


def _definitions() -> Definitions:
    d = Definitions(source_format="otf2", tool="Score-P", t_end=10**12, nodes=["n0", "n1"],
                    processes=[Process("rank 0", 0), Process("rank 1", 1, rank=1)],
                    locations=[Location("t0", 0, 0), Location("gpu", 1, 1, "gpu")],
                    regions=[Region("main"), Region("MPI_Send", "mpi", "point2point", "a.c", 3)],
                    communicators=[{"id": 0, "appl": 0, "name": "WORLD", "tasks": [1, 2]}],
                    topologies=[{"name": "cart", "dims": [2, 1], "periodic": [True, False],
                                 "coords": {0: [0, 0]}}],
                    paradigms=["mpi"], counters=["PAPI_TOT_INS"],
                    flags={"otf2_event_counts": {"Enter": 3}, "pair": Pair(1, [2]), "t": (1, 2.5, None),
                           "threads_grafted": True},
                    warnings=["a warning"])
    d.event_types[42000050] = EventType(42000050, "PAPI_TOT_INS", "counter", {1: "one", 2: "two"})
    d.event_types[46000000] = EventType(46000000, "OTF2 region", "region", role="region")
    d.callpath_parent, d.callpath_region = np.array([-1, 0], np.int32), np.array([0, 1], np.int32)
    return d


def _old_json_dict(d: Definitions) -> dict:
    """Definitions.to_json_dict as it was written with asdict."""
    out = {k: v for k, v in asdict(d).items() if k not in ("callpath_parent", "callpath_region")}
    out["states"] = {str(k): v for k, v in d.states.items()}
    out["event_types"] = {str(k): {**asdict(v), "values": {str(a): b for a, b in v.values.items()}}
                          for k, v in d.event_types.items()}
    return out


def test_definitions_json_is_byte_for_byte_what_asdict_gave():
    d = _definitions()
    assert json.dumps(d.to_json_dict()) == json.dumps(_old_json_dict(d))
    assert d.to_json_dict() == _old_json_dict(d)


def test_as_plain_equals_asdict_and_copies_what_asdict_copies():
    d = _definitions()
    for obj in [d.regions[1], d.event_types[42000050], MetricDef("time", "Time", "sec", parent=None), d]:
        plain, reference = as_plain(obj), asdict(obj)
        assert list(plain) == list(reference)
        for k in reference:
            if isinstance(reference[k], np.ndarray):
                np.testing.assert_array_equal(plain[k], reference[k])
                assert plain[k] is not getattr(obj, k)          # copied, as asdict copies
            else:
                assert plain[k] == reference[k] and type(plain[k]) is type(reference[k]), k
    plain = as_plain(d)
    plain["communicators"][0]["tasks"].append(3)              # a copy, not the definitions' own
    assert d.communicators[0]["tasks"] == [1, 2]
    assert type(plain["flags"]["pair"]) is Pair and type(plain["flags"]["t"]) is tuple
