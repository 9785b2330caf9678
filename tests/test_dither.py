"""Ordered dithering of a share per pixel (popview.analysis.dither)."""
import numpy as np
import pytest

from popview.analysis import dither


@pytest.mark.parametrize("share", [0.05, 0.25, 0.5, 0.8, 0.97])
def test_a_constant_share_draws_that_fraction_of_pixels_spread_evenly(share):
    drawn = dither.drawn(np.full((1, 1000), share), 0, 10_000)[0]
    assert abs(drawn.mean() - share) < 0.005
    # spread: every run of 50 pixels holds its share too (error diffusion's property, kept)
    assert np.abs(drawn.reshape(20, 50).mean(axis=1) - share).max() <= 0.05


def test_a_pixel_keeps_its_threshold_when_the_view_pans_and_none_is_drawn_without_a_share():
    here = dither.thresholds(700, 1700, 100)                # 10 ns a pixel
    panned = dither.thresholds(700 + 10 * 37, 1700 + 10 * 37, 100)
    np.testing.assert_array_equal(here[37:], panned[:-37])
    assert not dither.drawn(np.zeros((2, 100)), 0, 1000).any()
    assert dither.drawn(np.ones((2, 100)), 0, 1000).all()
