"""`training.warmup_steps` and `decay: cosine`: the rate the optimizer uses at each step."""

from __future__ import annotations

import pytest

from components.trainer.training.learning_rate import WarmupCosine, learning_rate


def test_a_constant_rate_stays_a_number():
    assert learning_rate(0.01, 0, "none", 100) == 0.01


def test_warmup_rises_linearly_then_holds():
    schedule = learning_rate(0.1, 10, "none", 100)
    rates = [float(schedule(step)) for step in (0, 4, 9, 10, 99)]
    assert rates == pytest.approx([0.01, 0.05, 0.1, 0.1, 0.1])


def test_cosine_decays_from_the_peak_to_zero_after_warmup():
    schedule = learning_rate(0.1, 10, "cosine", 110)
    assert float(schedule(10)) == pytest.approx(0.1)
    assert float(schedule(60)) == pytest.approx(0.05, abs=1e-6)
    assert float(schedule(110)) == pytest.approx(0.0, abs=1e-7)
    assert float(schedule(500)) == pytest.approx(0.0, abs=1e-7)
    rates = [float(schedule(step)) for step in range(10, 111, 10)]
    assert rates == sorted(rates, reverse=True)


def test_the_schedule_round_trips_its_config():
    schedule = WarmupCosine(0.2, 5, 50, cosine=True)
    again = WarmupCosine.from_config(schedule.get_config())
    assert [float(again(s)) for s in (0, 20, 49)] == [float(schedule(s)) for s in (0, 20, 49)]
