"""Properties of the POP models on random synthetic shapes: every efficiency
lies in [0, 1], the additive and multiplicative identities hold, and the
inputs are the writer's closed-form figures."""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import popview
from popview.analysis.focus import Focus
from popview.analysis.metrics import focus_inputs
from popview.testing.synthetic import Shape, write


@st.composite
def shapes(draw):
    P = draw(st.integers(1, 4))
    T = draw(st.integers(1, 3))
    weights = st.floats(0.2, 3.0, allow_nan=False)
    return Shape(
        processes=P, threads=T, iterations=draw(st.integers(1, 4)),
        work_ns=draw(st.integers(10_000, 2_000_000)),
        rank_weights=tuple(draw(st.lists(weights, min_size=P, max_size=P))),
        thread_weights=tuple(draw(st.lists(weights, min_size=T, max_size=T))),
        serial_fraction=draw(st.sampled_from([0.0, 0.1, 0.5, 0.9])),
        parallel_regions=draw(st.integers(1, 3)),
        sendrecv=draw(st.booleans()), allreduce=draw(st.booleans()) or P == 1, barrier=True,
        mpi_cost_ns=draw(st.integers(1, 50_000)), fork_ns=draw(st.integers(0, 5_000)),
        init_ns=draw(st.sampled_from([0, 30_000])), fini_ns=draw(st.sampled_from([0, 10_000])),
    )


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=shapes(), focus=st.sampled_from(["whole", "callpath:main/timestep", "auto"]))
def test_efficiencies_bounded_and_models_compose(shape, focus):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.prv"
        expected = write(path, shape)
        with popview.open(path, cache_dir=Path(tmp) / "cache") as exp:
            if focus == "whole":
                x = focus_inputs(exp, Focus.whole())
                np.testing.assert_allclose(x.useful, expected.useful_ns / 1e9, rtol=1e-12)
            for model in ("pop-mpi", "hybrid-additive", "hybrid-multiplicative", "critical-path"):
                tree = exp.metrics(model, focus, use_replay=False)
                assert tree.inconsistencies(1e-9) == [], model
                for _, node in tree.walk():
                    if node.kind == "efficiency" and node.value is not None:
                        assert -1e-12 <= node.value <= 1 + 1e-12, (model, node.id, node.value)
                        assert not [w for w in node.warnings if not w.startswith("MPI_Init takes")]
