"""Evaluator executor: an EvalConfig fitted to the label's classes, and a verdict that always has a reason.

Before TFMA runs, it builds the EvalConfig from the spec's `EvaluationRequest`
(an executor flag) and the label's classes, read from the candidate model's
`label_classes` asset: binary models are scored on `probability`, multi-class
ones on `scores` with per-class and aggregated metrics. A spec without
thresholds gets the trivial baseline (`trivial_baseline.py`) as its threshold.
TFMA runs with `extractors.custom_extractors` (batches trimmed before the
per-example split) unless the exec properties name other extractors. After
TFMA, a gated metric that is NaN or inf voids the blessing, as does a NaN
score on any eval row (`_nan_scores`), and `verdict.json` records the verdict with its reasons.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Callable
from typing import Any

from absl import logging
from tfx import types
from tfx.components.evaluator import constants
from tfx.components.evaluator import executor as tfx_evaluator_executor
from tfx.types import artifact_utils, standard_component_specs

from components.evaluator import (
    confidence,
    extractors,
    fairness,
    fast_metrics,
    report_plots,
    slice_results,
    slicing,
    trivial_baseline,
    user_model,
)
from components.evaluator.eval_config import EvaluationRequest, build_eval_config, num_classes_of
from components.evaluator.sample import sample_eval_split
from components.evaluator.verdict import candidate_metrics, explain, write_verdict
from serving.custom_ops import register_ops_for_saved_model

__all__ = ["Executor", "gated_metric_names", "SHORT_ARRAY_ITEMS"]

_CUSTOM_EXTRACTORS = "custom_extractors"  # TFX's name of the exec property (udf_utils.try_get_fn)
# Arrays longer than this print as their first and last items while the Evaluator runs.
SHORT_ARRAY_ITEMS = 8


def gated_metric_names(eval_config) -> frozenset[str]:
    """Names of the metrics that carry a threshold in `eval_config`."""
    names = set()
    for spec in eval_config.metrics_specs:
        for metric in spec.metrics:
            if (metric.HasField("threshold") or metric.per_slice_thresholds) and metric.config:
                names.add(json.loads(metric.config).get("name", metric.class_name))
    return frozenset(names)


def _register_model_ops(input_dict: dict[str, list[types.Artifact]]) -> None:
    """Imports tensorflow_text before TFMA loads a model whose graph uses its ops (`tokenizer: wordpiece`)."""

    for key in (standard_component_specs.MODEL_KEY, standard_component_specs.BASELINE_MODEL_KEY):
        for artifact in input_dict.get(key) or []:
            register_ops_for_saved_model(trivial_baseline.serving_model_dir(artifact.uri))


class Executor(tfx_evaluator_executor.Executor):
    """TFX's Evaluator with the EvalConfig built at run time (see the module docstring)."""

    def Do(
        self,
        input_dict: dict[str, list[types.Artifact]],
        output_dict: dict[str, list[types.Artifact]],
        exec_properties: dict[str, Any],
    ) -> None:
        with _short_array_text():
            self._evaluate(input_dict, output_dict, exec_properties)

    def _evaluate(
        self,
        input_dict: dict[str, list[types.Artifact]],
        output_dict: dict[str, list[types.Artifact]],
        exec_properties: dict[str, Any],
    ) -> None:
        import tensorflow_model_analysis as tfma
        from google.protobuf import json_format

        _register_model_ops(input_dict)
        request = EvaluationRequest.from_flags(self._extra_flags)
        if request is None:
            super().Do(input_dict, output_dict, exec_properties)
            return
        model_uri = artifact_utils.get_single_uri(input_dict[standard_component_specs.MODEL_KEY])
        classes = trivial_baseline.read_label_classes(model_uri) or request.classes
        baseline = None
        input_dict, sampled = self._with_eval_sample(input_dict, request)
        examples = input_dict[standard_component_specs.EXAMPLES_KEY]
        labels = functools.cache(  # read at most once: by the baseline and by a regression's report plot
            lambda: trivial_baseline.read_eval_labels(
                model_uri, artifact_utils.get_split_uri(examples, "eval"), request.label_key
            )
        )
        if not request.thresholds:
            baseline = trivial_baseline.choose_baseline(request, classes, labels)
            logging.info("No thresholds declared: the candidate must beat %s", baseline)
        eval_config = build_eval_config(request, classes, baseline)
        if request.user_model:
            user_model.fit_user_model_spec(eval_config, trivial_baseline.serving_model_dir(model_uri))
        if request.fairness:
            fairness.add_fairness(eval_config, request.fairness)
        if request.confidence:
            confidence.enable(eval_config)
        plan, names_by_spec = _add_slices(eval_config, request, artifact_utils.get_split_uri(examples, "eval"))
        _add_report_plots(eval_config, request, classes, labels)
        fast_metrics.use_fast_metrics(eval_config)
        properties = dict(exec_properties)
        properties[standard_component_specs.EVAL_CONFIG_KEY] = json_format.MessageToJson(eval_config)
        # TFX's hook: TFMA's extractors, each batch cut to what the metrics read before the per-example split.
        if not properties.get(_CUSTOM_EXTRACTORS):
            properties[_CUSTOM_EXTRACTORS] = extractors.FUNCTION_PATH
        super().Do(input_dict, output_dict, properties)

        evaluation_uri = artifact_utils.get_single_uri(output_dict[standard_component_specs.EVALUATION_KEY])
        blessing = artifact_utils.get_single_instance(output_dict[standard_component_specs.BLESSING_KEY])
        try:
            validation = tfma.load_validation_result(evaluation_uri)
        except (OSError, IndexError):
            validation = None
        metrics, gated = candidate_metrics(evaluation_uri), gated_metric_names(eval_config)
        blessed, reasons = explain(validation, metrics, baseline, gated)
        # The whole eval split's metrics and the gated names: what `runs show` and the report chart across spans.
        details = {
            "classes": list(classes) if classes else None,
            "metrics": metrics,
            "gated": sorted(gated) or ([baseline.metric] if baseline is not None else []),
        }
        blessed, reasons = _nan_scores(evaluation_uri, (blessed, reasons))
        if request.confidence:
            blessed, reasons = _confidence(evaluation_uri, request, eval_config, details, (blessed, reasons))
        if not blessed:
            _mark_not_blessed(blessing)
        if sampled is not None:
            details.update(sample_rows=sampled.rows, eval_rows=sampled.total)
        if plan is not None:
            details["slices"] = slice_results.slice_table(evaluation_uri, plan, request.thresholds)
            if request.confidence:
                failures = _slice_confidence(evaluation_uri, request, details["slices"])
                if failures:
                    blessed, reasons = False, [r for r in reasons if r != "all thresholds met"] + failures
                    _mark_not_blessed(blessing)
            details["slice_gates"] = {
                name: bool(gate.get("higher_is_better", True)) for name, gate in request.thresholds.items()
            }
            # ML Metadata keeps the per-slice values with the blessing.
            blessing.set_string_custom_property("slice_metrics", json.dumps(details["slices"]))
            if request.fairness:
                details["fairness"] = fairness.fairness_gaps(details["slices"], names_by_spec, request.fairness)
                breaches = fairness.gap_reasons(details["fairness"])
                if breaches:
                    blessed, reasons = False, [r for r in reasons if r != "all thresholds met"] + breaches
                    _mark_not_blessed(blessing)
        write_verdict(blessing.uri, blessed, reasons, details)
        logging.info("Verdict: %s (%s)", "BLESSED" if blessed else "NOT BLESSED", "; ".join(reasons))

    def _with_eval_sample(self, input_dict: dict, request: EvaluationRequest):
        """`input_dict` with the eval split replaced by its sample when the spec asks for one (`sample.py`)."""
        if not request.sample_rows:
            return input_dict, None
        examples = artifact_utils.get_single_instance(input_dict[standard_component_specs.EXAMPLES_KEY])
        sampled = sample_eval_split(examples, request.sample_rows, os.path.join(self._get_tmp_dir(), "eval_sample"))
        if sampled is None:
            logging.info(
                "The eval split holds at most %d rows (evaluation.sample_rows): all are scored.", request.sample_rows
            )
            return input_dict, None
        logging.info(
            "Scoring a sample of %d of the %d eval rows (evaluation.sample_rows).", sampled.rows, sampled.total
        )
        return {**input_dict, standard_component_specs.EXAMPLES_KEY: [sampled.examples]}, sampled


def _add_slices(eval_config, request: EvaluationRequest, split_uri: str):
    """Adds `evaluation.slices` to `eval_config` (`slicing.py`).

    Returns:
      The eval split's `SlicePlan` (None without slices) and the slice names of each slice spec.
    """
    if not request.slices:
        return None, {}
    columns = list(dict.fromkeys(column for spec in request.slices for column in spec))
    plan, per_spec = slicing.make_plan(request.slices, slicing.read_columns(split_uri, columns), request.slice_buckets)
    slicing.add_slicing(eval_config, request.slices, plan, per_spec, request.thresholds)
    logging.info("Slices: %d, buckets %s", len(plan.counts), plan.buckets)
    names = {spec: [slicing.slice_name(spec, row) for row in counter] for spec, counter in per_spec.items()}
    return plan, names


@contextlib.contextmanager
def _short_array_text():
    """Within the block NumPy prints at most a few items of an array, as it does past 1,000 items.

    TFMA calls the model's serving signature with each batch of serialized
    examples as a positional argument. TensorFlow first tries the structured
    signature, which takes keywords only, and fails with a TypeError whose
    message holds the whole batch as text; the flat signature then runs it.
    Printing up to 1,000 serialized examples per batch costs the Evaluator
    time on every batch; the message is thrown away either way.
    """
    import numpy as np

    with np.printoptions(threshold=SHORT_ARRAY_ITEMS, edgeitems=2):
        yield


def _add_report_plots(eval_config, request: EvaluationRequest, classes, labels: Callable[[], Any]) -> None:
    """Appends the run report's ungated plots (`report_plots.py`); a regression reads the labels' range first.

    The plots are for people only: a problem reading the labels skips them (logged) and fails nothing.
    """
    span = None
    if request.task == "regression":
        try:
            span = report_plots.label_range(labels())
        except Exception as error:  # noqa: BLE001 - the report's plot must not fail the evaluation
            logging.warning("No calibration plot for the report: could not read the eval labels (%s)", error)
    num_classes = num_classes_of(request, classes)
    if request.task == "classification" and num_classes > report_plots.MAX_CALIBRATION_CLASSES:
        logging.info(
            "No calibration plots for the report: the label has %d classes (at most %d get one each)",
            num_classes,
            report_plots.MAX_CALIBRATION_CLASSES,
        )
    spec = report_plots.report_metrics_spec(request.task, num_classes, span)
    if spec is not None:
        eval_config.metrics_specs.append(spec)


def _confidence(evaluation_uri: str, request: EvaluationRequest, eval_config, details: dict, verdict):
    """The verdict with the value thresholds checked against the interval's bound; the intervals go in `details`."""
    blessed, reasons = verdict
    bounded = confidence.intervals(evaluation_uri, request.confidence)
    gated = gated_metric_names(eval_config)
    details["confidence"] = {
        "level": request.confidence,
        "intervals": bounded,
        "gated": sorted(name for name in bounded if name in gated),
    }
    failures = confidence.bound_failures(bounded, request.thresholds, request.confidence)
    if not failures:
        return blessed, reasons
    return False, [r for r in reasons if r != "all thresholds met"] + failures


def _slice_confidence(evaluation_uri: str, request: EvaluationRequest, rows: list[dict]) -> list[str]:
    """Adds each slice's intervals to its row (`intervals`); returns a reason per gated slice whose bound fails."""
    by_slice = confidence.slice_intervals(evaluation_uri, request.confidence)
    failures = []
    for row in rows:
        row["intervals"] = {n: b for n, b in by_slice.get(row["slice"], {}).items() if n in row["metrics"]}
        gated = {n: b for n, b in row["intervals"].items() if n.partition("@")[0] in row["gated"]}
        failures += confidence.bound_failures(gated, request.thresholds, request.confidence, where=row["slice"])
    return failures


def _nan_scores(evaluation_uri: str, verdict):
    """The verdict, NOT BLESSED when the model scored any eval row NaN (counted by the report's calibration plot).

    A NaN score counts as wrong or below every threshold in TFMA's metrics, so
    they can pass while the model fails on real rows; only some metrics (a loss)
    come out NaN themselves.
    """
    blessed, reasons = verdict
    nan_rows, rows = report_plots.nan_score_rows(evaluation_uri)
    if not nan_rows:
        return blessed, reasons
    logging.warning("The model's scores are NaN on %d of %d eval rows", nan_rows, rows)
    reason = (
        f"the model's scores are NaN on {nan_rows} of {rows} eval rows: a blessed model must score every row. "
        "Expected finite scores. Fix or drop the NaN cells the model reads (or retrain if its loss was NaN) and rerun"
    )
    return False, [r for r in reasons if r != "all thresholds met"] + [reason]


def _mark_not_blessed(blessing: types.Artifact) -> None:
    """Overrides a blessing TFMA gave (a NaN metric passes every threshold)."""
    blessed_file = os.path.join(blessing.uri, constants.BLESSED_FILE_NAME)
    if os.path.exists(blessed_file):
        os.remove(blessed_file)
    with open(os.path.join(blessing.uri, constants.NOT_BLESSED_FILE_NAME), "w", encoding="utf-8"):
        pass
    blessing.set_int_custom_property(constants.ARTIFACT_PROPERTY_BLESSED_KEY, constants.NOT_BLESSED_VALUE)
