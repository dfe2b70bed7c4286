"""Kernel effects across hosts: hybrid without a model replayed on one host with the effects of the other's pools, its own and both, never of the IVP replayed.

A second host's ground truth cannot be measured on this one machine: host B is the fixture's rows
with times changed as other hardware would change them (tests/host_support.py).
"""

from __future__ import annotations

import math

import pytest

from hybridtune.learn import kernel_effects
from hybridtune.strategies import effects_transfer, in_parallel
from hybridtune.strategies.host_transfer import Host
from host_support import other_hardware

pytestmark = pytest.mark.slow


def test_each_direction_replays_every_pool_with_three_sources_of_effects(fixture_rows, monkeypatch):
    fitted_on = []
    real = kernel_effects.fitted_effects

    def recording(frames, *args, **kwargs):
        fitted_on.append({frame["ivp"].iloc[0] for frame in frames})
        return real(frames, *args, **kwargs)

    monkeypatch.setattr(kernel_effects, "fitted_effects", recording)
    # the directions in this process, where the recording sees them (forked, they run apart)
    monkeypatch.setattr(in_parallel, "cores", lambda: 1)
    a = Host("Host A", fixture_rows)
    b = Host("Host B", other_hardware(fixture_rows))
    forth, back = effects_transfer.effects_transfer(a, b, None, None, seeds=1, stop=0.1)
    assert (forth["from"], forth["to"], back["from"], back["to"]) == (
        "Host A", "Host B", "Host B", "Host A")
    ivps = set(fixture_rows.measured["ivp"])
    # per direction and IVP three fits (transferred, own, both), none of them on that IVP
    assert len(fitted_on) == 2 * 3 * len(ivps)
    for position, seen in enumerate(fitted_on):
        left_out = sorted(ivps)[(position // 3) % len(ivps)]
        assert left_out not in seen and seen == ivps - {left_out}
    for direction in (forth, back):
        for name in ("transferred", "own", "both"):
            entry = direction[name]
            assert entry["replays"] == 8 and 1 <= entry["measured_mean"] <= 32
            assert 0 <= entry["loss_pct_mean"] <= entry["loss_pct_p90"] or entry["loss_pct_p90"] == 0
        assert math.isclose(direction["ratio_to_own"],
                            direction["transferred"]["measured_mean"] / direction["own"]["measured_mean"])


def test_the_same_pools_on_both_hosts_transfer_as_their_own(fixture_rows):
    forth, _ = effects_transfer.effects_transfer(Host("A", fixture_rows), Host("B", fixture_rows),
                                                 None, None, seeds=1, stop=0.1)
    assert forth["transferred"] == forth["own"] and forth["ratio_to_own"] == 1.0


def test_the_directions_forked_apart_give_what_they_give_in_one_process(fixture_rows, monkeypatch):
    a, b = Host("Host A", fixture_rows), Host("Host B", other_hardware(fixture_rows))
    monkeypatch.setattr(in_parallel, "cores", lambda: 2)
    forked = effects_transfer.effects_transfer(a, b, None, None, seeds=1, stop=0.1)
    monkeypatch.setattr(in_parallel, "cores", lambda: 1)
    assert effects_transfer.effects_transfer(a, b, None, None, seeds=1, stop=0.1) == forked


def test_a_share_of_the_own_error_reaches_every_prior_replayed(fixture_rows, monkeypatch):
    from hybridtune.strategies import replay
    owns = []
    real = replay.hybrid_prior

    def recording(pools, fitted, *args, effects=None, **kwargs):
        owns.append(effects.own)
        return real(pools, fitted, *args, effects=effects, **kwargs)

    monkeypatch.setattr(replay, "hybrid_prior", recording)
    monkeypatch.setattr(in_parallel, "cores", lambda: 1)
    host = Host("A", fixture_rows)
    effects_transfer.effects_transfer(host, host, None, None, seeds=1, stop=0.1)
    whole = list(owns)
    owns.clear()
    effects_transfer.effects_transfer(host, host, None, None, seeds=1, stop=0.1, own_share=0.5)
    assert len(owns) == len(whole) > 0
    assert owns == pytest.approx([0.5 * own for own in whole])
