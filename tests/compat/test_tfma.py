"""compat.tfma: the pinned TFMA has what each entry reads; where it differs, the entry falls back."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import tensorflow_model_analysis as tfma
from tensorflow_model_analysis.metrics import calibration_plot, confusion_matrix_metrics, metric_types

import compat
from compat import tfma as compat_tfma
from compat.tfma import fast_combiners

CONFIG = tfma.EvalConfig(model_specs=[tfma.ModelSpec(label_key="label", prediction_key="probability")])


class _FastAUC(fast_combiners.FastCombiners, confusion_matrix_metrics.AUC):
    pass


class _FastCalibrationPlot(fast_combiners.FastCombiners, calibration_plot.CalibrationPlot):
    pass


@pytest.fixture
def fresh_warnings(monkeypatch, caplog):
    """Each fallback's line is logged once per process: start from none logged, and capture them."""
    monkeypatch.setattr(compat, "_warned", set())
    caplog.set_level(logging.WARNING, logger="compat")
    return caplog


def _combiners(metric) -> list:
    computations = metric.computations(eval_config=CONFIG, model_names=[""], output_names=[""], sub_keys=[None])
    return [c.combiner for c in computations if isinstance(c, metric_types.MetricComputation)]


def _examples() -> list:
    return [
        metric_types.StandardMetricInputs(
            labels=np.array([label]), predictions={"probability": np.array([score])}, example_weights=None
        )
        for label, score in [(0, 0.1), (1, 0.8), (1, 0.4), (0, 0.7), (1, 0.95)]
    ]


def _result(metric) -> str:
    results = {}
    for combiner in _combiners(metric):
        accumulator = combiner.create_accumulator()
        for example in _examples():
            accumulator = combiner.add_input(accumulator, example)
        results.update(combiner.extract_output(accumulator))
    return str(sorted((str(key), str(value)) for key, value in results.items()))


def test_tfma_is_the_pinned_version():
    installed = compat.installed_version(compat_tfma.DISTRIBUTION)
    assert installed == compat_tfma.PINNED, (
        f"re-check every entry of compat/tfma against {compat_tfma.DISTRIBUTION} {installed}, then update PINNED"
    )


@pytest.mark.parametrize("metric_class", [_FastAUC, _FastCalibrationPlot])
def test_fast_combiners_shape_holds_on_the_pinned_tfma(metric_class):
    assert fast_combiners.shape_problem() is None
    assert fast_combiners.available()
    combiners = _combiners(metric_class())
    assert combiners and all(fast_combiners.shape_problem(c) is None for c in combiners)
    assert all(c._plain == ("", "probability") for c in combiners)  # the fast path reads these examples


def test_a_combiner_of_another_shape_adds_through_tfmas_own_path_with_one_log_line(fresh_warnings, monkeypatch):
    fast = _result(_FastAUC())
    monkeypatch.setattr(fast_combiners, "shape_problem", lambda combiner=None: "no `_thresholds`")
    combiners = _combiners(_FastAUC())
    assert combiners and all(c._plain is None for c in combiners)
    assert _result(_FastAUC()) == fast == _result(confusion_matrix_metrics.AUC())
    assert [r.getMessage() for r in fresh_warnings.records] == [
        "compat: compat.tfma.fast_combiners falls back to the library's own behaviour: no `_thresholds`"
    ]


def test_a_nan_score_goes_below_every_bucket_where_tfmas_histogram_fails(monkeypatch, caplog):
    nan = metric_types.StandardMetricInputs(
        labels=np.array([1]), predictions={"probability": np.array([np.nan])}, example_weights=None
    )
    monkeypatch.setattr(fast_combiners, "_nan_logged", False)
    caplog.set_level(logging.WARNING, logger=fast_combiners.__name__)
    (plain,) = _combiners(calibration_plot.CalibrationPlot())
    with pytest.raises(ValueError, match="NaN"):
        plain.add_input(plain.create_accumulator(), nan)

    (combiner,) = _combiners(_FastCalibrationPlot())
    accumulator = combiner.create_accumulator()
    for example in _examples() + [nan, nan]:
        accumulator = combiner.add_input(accumulator, example)

    below = accumulator[0]
    assert (below.weighted_examples, below.weighted_labels) == (2.0, 2.0)
    assert np.isnan(below.weighted_predictions)
    assert sum(b.weighted_examples for b in accumulator.values()) == len(_examples()) + 2
    assert [r.getMessage().split(":")[0] for r in caplog.records] == ["NaN scores"]


def test_jackknife_seed_finds_what_it_replaces():
    from compat.tfma import jackknife_seed

    assert jackknife_seed.shape_problem() is None


def test_jackknife_seed_passes_its_seed_unless_the_caller_gives_one(monkeypatch):
    from tensorflow_model_analysis.evaluators import jackknife

    from compat.tfma import jackknife_seed

    seen = []

    def recording(*args, random_seed_for_testing=None, **kwargs):
        seen.append(random_seed_for_testing)

    monkeypatch.setattr(jackknife, "ComputeWithConfidenceIntervals", recording)
    monkeypatch.setattr(jackknife_seed, "shape_problem", lambda: None)  # the recording stand-in has no signature
    assert jackknife_seed.seed_jackknife()
    jackknife.ComputeWithConfidenceIntervals(num_jackknife_samples=20)
    jackknife.ComputeWithConfidenceIntervals(num_jackknife_samples=20, random_seed_for_testing=7)
    assert jackknife_seed.seed_jackknife()  # already seeded: not wrapped twice
    jackknife.ComputeWithConfidenceIntervals(num_jackknife_samples=20)
    assert seen == [jackknife_seed.JACKKNIFE_SEED, 7, jackknife_seed.JACKKNIFE_SEED]
