"""A numeric channel's coarser level: two bins made one exactly as np.nansum / np.nanmax
over the pair made it (NaN only where both are; signed zeros and infinities as they
gave them), bit for bit, so the caches do not change."""
import numpy as np
import pytest

from popview.cache.pyramid import _pair_bins


@pytest.mark.parametrize("spread", [True, False])
@pytest.mark.parametrize("seed", range(20))
def test_pair_bins_is_nansum_or_nanmax_of_the_pair(spread, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(int(rng.integers(1, 70)), 2 * int(rng.integers(1, 3000))))
    for value, share in ((np.nan, 0.4), (-0.0, 0.1), (0.0, 0.05), (np.inf, 0.02), (-np.inf, 0.02)):
        x[rng.random(x.shape) < share] = value
    pair = x.reshape(len(x), -1, 2)
    both = np.isnan(pair).all(axis=2)
    with np.errstate(invalid="ignore"):
        expected = np.nansum(pair, axis=2) if spread else np.nanmax(np.where(both[..., None], 0, pair), axis=2)
    expected[both] = np.nan
    assert _pair_bins(x[:, 0::2], x[:, 1::2], spread).tobytes() == expected.tobytes()
