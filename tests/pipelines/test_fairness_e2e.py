"""End to end: `evaluation.fairness` gates on the gaps between slices, and `evaluation.confidence`'s bounds.

The label is `x > 0` except in region `C`, where it is a coin toss. The model
(which does not see the region) predicts `x > 0` everywhere, so in region C
about half of the negatives are scored positive: its false positive rate is
far above regions A and B (near 0). Its positive rate is about 0.5 in every
region. One pipeline run gates both: the false positive rate's gap breaches
its `max_gap` (NOT BLESSED naming both slices), the positive rate's gap holds.
The passing case of the false positive rate gate is checked on the same run's
per-slice metrics with a wider `max_gap`.

The run also asks for 95% confidence intervals: `binary_accuracy`'s lower
bound clears its `min: 0.6`. A second run (only the Evaluator re-runs) sets
the minimum between the lower bound and the point estimate: the point
estimate clears it, the bound does not, and the model is NOT BLESSED saying so.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest
import yaml

pytestmark = pytest.mark.e2e

ROWS = 900
CUTS = [0.3, 0.5, 0.7]
FPR_GAP = 0.1
POSITIVE_RATE_GAP = 0.25


def _write(path) -> None:
    rng = np.random.default_rng(11)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["x", "region", "target"])
        for i in range(ROWS):
            x = float(rng.uniform(-3, 3))
            region = "C" if i % 3 == 0 else "A" if i % 2 else "B"
            label = int(rng.integers(0, 2)) if region == "C" else int(x > 0)
            writer.writerow([round(x, 4), region, label])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    import pipelines

    root = tmp_path_factory.mktemp("fairness")
    _write(root / "data.csv")
    spec = {
        "pipeline": {"name": "fairness_e2e", "root": str(root / "run")},
        "data": {"path": str(root / "data.csv")},
        "features": {"x": {"transform": "zscore"}},
        "label": {"name": "y", "column": "target"},
        "model": {"type": "dnn", "hidden_units": [8]},
        "training": {"train_steps": 150, "eval_steps": 5, "batch_size": 32, "learning_rate": 0.05},
        "evaluation": {
            "metrics": ["binary_accuracy"],
            "thresholds": {"binary_accuracy": {"min": 0.6}},
            "slices": [["region"]],
            "fairness": {
                "thresholds": CUTS,
                "max_gap": {"false_positive_rate": FPR_GAP, "positive_rate": POSITIVE_RATE_GAP},
                "min_examples": 30,
            },
            "confidence": 0.95,
        },
    }
    (root / "spec.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    resolved = pipelines.load(str(root / "spec.yaml"))
    return resolved, pipelines.run(resolved), spec, root


@pytest.fixture(scope="module")
def fair_run(runs):
    resolved, outcome, _, _ = runs
    return resolved, outcome


@pytest.fixture(scope="module")
def bound_run(runs):
    """The same pipeline, its minimum between the lower bound and the point estimate (the Evaluator re-runs)."""
    import pipelines

    resolved, outcome, spec, root = runs
    value, low, _ = outcome.summary.confidence["intervals"]["binary_accuracy"]
    spec["evaluation"]["thresholds"]["binary_accuracy"]["min"] = round((value + low) / 2, 4)
    del spec["evaluation"]["fairness"]
    (root / "spec.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    return spec["evaluation"]["thresholds"]["binary_accuracy"]["min"], pipelines.run(
        pipelines.load(str(root / "spec.yaml"))
    )


def _verdict(resolved) -> dict:
    from mlmd_queries import store_for

    from components.evaluator.verdict import read_verdict

    store = store_for(resolved.metadata_path)
    blessings = [a for a in store.get_artifacts() if "/Evaluator/blessing/" in a.uri]
    return read_verdict(min(blessings, key=lambda a: a.id).uri)  # the first run's


def test_a_false_positive_rate_gap_over_max_gap_is_not_blessed_naming_the_slices(fair_run):
    _, outcome = fair_run
    summary = outcome.summary

    assert summary.metrics["binary_accuracy"] >= 0.6  # the plain threshold passes
    assert not summary.blessed
    breaches = [r for r in summary.reasons if r.startswith("fairness: ")]
    assert breaches and all(r.startswith("fairness: false_positive_rate@") for r in breaches), summary.reasons
    assert "false_positive_rate@0.5 differs by " in " ".join(breaches)
    assert all(" between region=C (" in r and f"allowed at most {FPR_GAP:.4f} (max_gap)" in r for r in breaches)


def test_every_slice_has_the_rates_at_every_cut_and_the_gaps_match_them(fair_run):
    resolved, _ = fair_run
    verdict = _verdict(resolved)
    rows = {row["slice"]: row for row in verdict["slices"]}

    assert set(rows) == {"region=A", "region=B", "region=C"}
    for row in rows.values():
        for rate in ("false_positive_rate", "false_negative_rate", "positive_rate"):
            for cut in CUTS:
                assert 0.0 <= row["metrics"][f"{rate}@{cut:g}"] <= 1.0
    fpr = {name: row["metrics"]["false_positive_rate@0.5"] for name, row in rows.items()}
    assert fpr["region=C"] > 0.3 > max(fpr["region=A"], fpr["region=B"])
    # A lower cut scores more rows positive, in every region.
    assert all(row["metrics"]["positive_rate@0.3"] >= row["metrics"]["positive_rate@0.7"] for row in rows.values())
    (gap,) = [g for g in verdict["fairness"] if g["metric"] == "false_positive_rate@0.5"]
    assert gap["high"] == "region=C" and gap["breach"] and gap["slices"] == ["region"]
    assert gap["gap"] == pytest.approx(fpr["region=C"] - min(fpr.values()), abs=1e-4)
    positive = [g for g in verdict["fairness"] if g["rate"] == "positive_rate"]
    assert len(positive) == len(CUTS) and not any(g["breach"] for g in positive)
    assert all(g["gap"] <= POSITIVE_RATE_GAP for g in positive)


def test_a_wider_max_gap_passes_on_the_same_metrics(fair_run):
    from components.evaluator.fairness import fairness_gaps, gap_reasons

    resolved, _ = fair_run
    rows = _verdict(resolved)["slices"]
    names = {("region",): ["region=A", "region=B", "region=C"]}
    widest = max(
        g["gap"] for g in fairness_gaps(rows, names, {"thresholds": CUTS}) if g["rate"] == "false_positive_rate"
    )

    passing = {"thresholds": CUTS, "max_gap": {"false_positive_rate": widest + 0.01}, "min_examples": 30}
    failing = {**passing, "max_gap": {"false_positive_rate": widest - 0.01}}

    assert gap_reasons(fairness_gaps(rows, names, passing)) == []
    assert len(gap_reasons(fairness_gaps(rows, names, failing))) == 1
    # Slices under min_examples are not compared: with every slice too small there is no gap to gate.
    assert fairness_gaps(rows, names, {**failing, "min_examples": 10**6}) == []


def test_the_summary_and_runs_show_print_each_rates_widest_gap(fair_run):
    from pipelines.history import list_runs
    from pipelines.history.format import format_run
    from pipelines.outcome.summary import format_summary

    resolved, outcome = fair_run
    text = format_summary(outcome.summary, outcome.seconds, outcome.log_file or "")

    lines = [line for line in text.splitlines() if line.startswith("Fairness: ")]
    assert [line.split()[1].split("@")[0] for line in lines] == [
        "false_positive_rate",
        "false_negative_rate",
        "positive_rate",
    ]
    assert lines[0].endswith(f"max_gap {FPR_GAP:.4f}: BREACHED") and "region=C" in lines[0]
    assert lines[1].endswith("not gated") and lines[2].endswith(f"max_gap {POSITIVE_RATE_GAP:.4f}: ok")
    oldest = list_runs(resolved.root)[-1]
    assert lines[0] in format_run(oldest, None).splitlines()


def test_the_report_slices_page_lists_the_gaps_with_the_breach_marked(fair_run):
    import glob
    import os

    resolved, _ = fair_run
    report = sorted(glob.glob(os.path.join(resolved.root, "reports", "*.html")))[0]
    html = open(report, encoding="utf-8").read()

    assert '<h3 id="fairness">Fairness gaps</h3>' in html
    assert '<tr data-metric="false_positive_rate@0.5" data-breach="true">' in html
    assert '<tr data-metric="positive_rate@0.5" data-breach="false">' in html
    assert html.index('data-breach="true"') < html.index('data-breach="false"')  # breaches first


def test_with_confidence_the_gated_metric_has_an_interval_its_bound_clears(fair_run):
    from pipelines.outcome.summary import format_summary

    resolved, outcome = fair_run
    confidence = outcome.summary.confidence

    value, low, high = confidence["intervals"]["binary_accuracy"]
    assert confidence["level"] == 0.95 and confidence["gated"] == ["binary_accuracy"]
    assert 0.6 < low < value < high and value == pytest.approx(outcome.summary.metrics["binary_accuracy"], abs=1e-4)
    assert not any("confidence" in r for r in outcome.summary.reasons)  # the bound clears min 0.6
    text = format_summary(outcome.summary, outcome.seconds, "")
    assert f"Confidence (95%): binary_accuracy {value:.4f} [{low:.4f}, {high:.4f}]" in text.splitlines()


def test_a_minimum_the_point_estimate_clears_but_the_bound_does_not_is_not_blessed(bound_run):
    import glob
    import os

    minimum, outcome = bound_run
    summary = outcome.summary
    value, low, high = summary.confidence["intervals"]["binary_accuracy"]

    assert low < minimum <= value
    assert not summary.blessed
    (reason,) = summary.reasons
    assert reason.startswith(f"binary_accuracy = {value:.4f} clears the minimum {minimum:.4f}, but its lower 95% ")
    assert f"interval [{low:.4f}, {high:.4f}]" in reason
    report = sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(outcome.log_file)), "reports", "*.html")))
    html = open(report[-1], encoding="utf-8").read()
    assert "<th>95% interval</th>" in html and f"[{low:.4g}, {high:.4g}]" in html


def test_the_report_shows_the_calibration_plot_and_its_expected_calibration_error(fair_run):
    import glob
    import os

    from mlmd_queries import store_for

    from pipelines.report.calibration import calibration_curves

    resolved, _ = fair_run
    store = store_for(resolved.metadata_path)
    evaluation = min((a for a in store.get_artifacts() if "/Evaluator/evaluation/" in a.uri), key=lambda a: a.id)
    (curve,) = calibration_curves(evaluation.uri)
    report = sorted(glob.glob(os.path.join(resolved.root, "reports", "*.html")))[0]
    html = open(report, encoding="utf-8").read()

    assert sum(b.count for b in curve.buckets) == sum(row["example_count"] for row in _verdict(resolved)["slices"])
    assert 0.0 <= curve.ece < 0.5
    assert '<h3 id="calibration">Calibration</h3>' in html
    assert f'expected calibration error <span class="ece">{curve.ece:.4g}</span>' in html
    section = html[html.index('<div class="calibration"') :]
    assert section.index("<svg") < section.index("</div>")
