"""Hockney's T(n) = alpha + beta*n: recovered from exact times, piecewise only where a protocol switch shows, judged at held-out sizes."""

from __future__ import annotations

import pytest

from hybridtune.errors import HybridtuneError
from hybridtune.predict.hockney import fit_hockney

SIZES = [2 ** k for k in range(0, 23, 2)]      # 1 B .. 4 MiB


def test_one_line_is_recovered_and_judged_at_sizes_it_never_saw():
    fit = fit_hockney([(n, 2e-6 + n / 5e9) for n in SIZES])
    (piece,) = fit.pieces
    assert piece.alpha_s == pytest.approx(2e-6, rel=1e-6)
    assert piece.beta_s_per_byte == pytest.approx(1 / 5e9, rel=1e-6)
    assert piece.n_half == pytest.approx(1e4, rel=1e-6)
    assert fit.held_out_bytes == tuple(SIZES[1::3]) and fit.held_out_error < 1e-9
    assert "one line" in fit.note


def test_a_switch_from_eager_to_rendezvous_gives_two_pieces():
    switch = 2 ** 15        # between the measured 16 KiB and 64 KiB

    def time(n):
        return 1e-6 + n / 8e9 if n < switch else 6e-6 + n / 10e9

    fit = fit_hockney([(n, time(n)) for n in SIZES])
    low, high = fit.pieces
    assert low.alpha_s == pytest.approx(1e-6, rel=1e-6) and high.alpha_s == pytest.approx(6e-6, rel=1e-6)
    assert 2 ** 14 < high.from_bytes <= 2 ** 16      # placed no closer than the sizes allow
    assert fit.held_out_error < 1e-9 and fit.seconds(2 ** 20) == pytest.approx(time(2 ** 20))
    single = fit_hockney([(n, time(n)) for n in SIZES if n < switch])
    assert len(single.pieces) == 1


def test_noise_alone_does_not_make_a_switch():
    wobble = [1.0 + 0.02 * (-1) ** k for k in range(len(SIZES))]
    fit = fit_hockney([(n, (2e-6 + n / 5e9) * w) for n, w in zip(SIZES, wobble)])
    assert len(fit.pieces) == 1 and fit.held_out_error < 0.05


def test_too_few_sizes_or_bad_times_are_refused():
    with pytest.raises(HybridtuneError, match="at least 3 sizes"):
        fit_hockney([(1, 1e-6), (8, 2e-6)])
    with pytest.raises(HybridtuneError, match="positive times"):
        fit_hockney([(1, 1e-6), (8, 0.0), (64, 3e-6)])
    with pytest.raises(HybridtuneError, match="distinct sizes"):
        fit_hockney([(1, 1e-6), (1, 2e-6), (64, 3e-6)])


def test_the_ping_pongs_switch_places_the_second_piece_inside_the_gap_and_the_largest_size_is_fitted():
    doubling = [2 ** k for k in range(3, 23)]       # 8 B .. 4 MiB; 8 KiB is held out

    def time(n):
        return 1.5e-6 + n / 7e9 if n < 8192 else 6e-6 + n / 8e9

    points = [(n, time(n)) for n in doubling]
    alone = fit_hockney(points)
    assert 8192 in alone.held_out_bytes and doubling[-1] not in alone.held_out_bytes
    # the fitted sizes around the switch are 4 KiB and 16 KiB: alone, the second piece starts
    # at 16 KiB and 8 KiB is priced as an eager message
    assert alone.pieces[1].from_bytes == 16384 and alone.held_out_error > 0.2
    told = fit_hockney(points, known_switch=8192)
    assert told.pieces[1].from_bytes == 8192 and "ping-pong switched" in told.note
    assert told.held_out_error < 1e-9 and told.seconds(8192) == pytest.approx(time(8192))
    # a switch outside the gap changes nothing
    assert fit_hockney(points, known_switch=2 ** 20).pieces == alone.pieces
