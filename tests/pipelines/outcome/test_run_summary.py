"""The run summary's lines: training detail, input-wait advice, serving."""

from __future__ import annotations

from pipelines.outcome.summary import RunSummary, format_summary, worst_slice_lines

TRAINING = {
    "train_steps": 1000,
    "seconds": 18.46,
    "examples_per_second": 11135.2,
    "input_wait_fraction": 0.29,
    "replicas": 2,
    "strategy": "mirrored",
    "precision_policy": "mixed_bfloat16",
    "accelerator_hours": 0.0102,
}


def _lines(summary: RunSummary) -> list[str]:
    return format_summary(summary, 12.5, "/logs/run.log").splitlines()


def test_training_line_reports_speed_wait_replicas_precision_and_accelerator_hours():
    summary = RunSummary(training=dict(TRAINING))

    assert (
        "Training: 1000 steps in 18.46s; 11,135 examples/s steady state; input wait 29% of step time; "
        "2 replica(s) (mirrored, mixed_bfloat16); 0.0102 accelerator-hours"
    ) in _lines(summary)
    assert not any(line.startswith("Warning:") for line in _lines(summary))


def test_input_advice_is_printed_under_the_training_line():
    summary = RunSummary(training=dict(TRAINING, input_advice="the training step waited for input 29% of the time"))

    lines = _lines(summary)
    at = next(i for i, line in enumerate(lines) if line.startswith("Training: "))
    assert lines[at + 1] == "Warning: the training step waited for input 29% of the time"


def test_serving_line_only_when_a_version_was_deployed():
    assert not any(line.startswith("Serving:") for line in _lines(RunSummary(deployed={"version": "-1"})))
    deployed = RunSummary(deployed={"version": "1795338268", "p99_ms": "4.2"})
    assert "Serving: version 1795338268 is `stable` (verified; p99 4.2 ms)" in _lines(deployed)


def test_metrics_line_says_when_they_come_from_an_eval_sample():
    whole = RunSummary(metrics={"accuracy": 0.91})
    assert "Metrics: accuracy=0.91" in _lines(whole)
    sampled = RunSummary(metrics={"accuracy": 0.91}, eval_sample=[20000, 375012])
    assert "Metrics (on 20,000 of 375,012 eval rows): accuracy=0.91" in _lines(sampled)


def test_training_line_says_where_a_warm_start_started_or_why_it_was_cold():
    base = "2 replica(s) (mirrored, mixed_bfloat16); 0.0102 accelerator-hours"
    warm = RunSummary(training=dict(TRAINING, warm_started_from="/root/Trainer/model/7/Format-Serving"))
    assert any(
        line.endswith(f"{base}; warm-started from /root/Trainer/model/7/Format-Serving") for line in _lines(warm)
    )
    cold = RunSummary(training=dict(TRAINING, warm_started_from=None, cold_start="no blessed model yet (a first run)"))
    assert any(line.endswith(f"{base}; cold start (no blessed model yet (a first run))") for line in _lines(cold))
    # Without `training.warm_start`, neither.
    assert any(line.endswith(base) for line in _lines(RunSummary(training=dict(TRAINING))))


def test_worst_slice_line_per_gated_metric_with_its_interval_when_there_is_one():
    slices = [
        {"slice": "region=A", "metrics": {"binary_accuracy": 0.91}, "example_count": 120, "gated": ["binary_accuracy"]},
        {
            "slice": "region=C",
            "metrics": {"binary_accuracy": 0.551, "loss": 0.9},
            "example_count": 1058,
            "gated": ["binary_accuracy"],
            "intervals": {"binary_accuracy": [0.551, 0.421, 0.681]},
        },
    ]

    assert worst_slice_lines(slices, {"binary_accuracy": True, "loss": False}) == [
        "Worst slice: binary_accuracy on region=C = 0.5510 [0.4210, 0.6810] (1,058 rows)",
        "Worst slice: loss on region=C = 0.9000 (1,058 rows, not gated)",
    ]
