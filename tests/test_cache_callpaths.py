"""Kernels of the call-path collector."""
from __future__ import annotations

import numpy as np
import pytest

from popview.cache.callpaths import member_mask


@pytest.mark.parametrize("members", [[], [7], [40000003, 50000001, 50000002, 50000003], [-5, 0, 2**31 - 1]])
def test_member_mask_is_isin(members):
    members = np.array(members, np.int32)
    values = np.random.default_rng(2).choice(
        np.concatenate([members, np.array([-6, 1, 8, 42000050, 50000000, 50000004], np.int32)]), 5000).astype(np.int32)
    np.testing.assert_array_equal(member_mask(values, members), np.isin(values, members))
