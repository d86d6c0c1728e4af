"""The HTML: every value escaped, each missing section said, charts inline, written atomically."""

from __future__ import annotations

import os
import re

import pytest

from pipelines.report.calibration import CalibrationCurve, expected_calibration_error
from pipelines.report.collect import ReportData, RunFacts
from pipelines.report.dag import layout
from pipelines.report.eval_plots import ResidualBucket
from pipelines.report.evaluation import MetricRow
from pipelines.report.render import _number, render, write_atomically
from pipelines.report.statistics import FeatureStats, SplitStats

HOSTILE = '<script>alert("x")</script>'


def _data(**fields) -> ReportData:
    run = RunFacts("2026-11-24T00:00:00", "succeeded", 12.0, "/logs/run.log", ["A", "B"], {"B": ["A"]})
    return ReportData(
        "taxi", run, layout(run.order, run.upstream, {"A": "executed", "B": "cached"}, {"A": 1.0}), **fields
    )


def _features() -> list[FeatureStats]:
    histogram = [(0.0, 1.0, 3.0), (1.0, 2.0, 1.0)]
    return [
        FeatureStats("fare", True, {s: SplitStats(4, 0.25, 1.0, 0.5, 0.0, 2.0, histogram) for s in ("train", "eval")}),
        FeatureStats(HOSTILE, False, {"train": SplitStats(4, 0.0, unique=2, top_values=[(HOSTILE, 3.0), ("b", 1.0)])}),
    ]


def test_every_value_from_data_or_spec_is_escaped():
    html = render(
        _data(
            features=_features(),
            splits=["train", "eval"],
            anomalies=[f"feature `{HOSTILE}`: unexpected"],
            blessed=False,
            reasons=[HOSTILE],
            metrics=[MetricRow(HOSTILE, 0.5)],
            pushed_path=f"/serving/{HOSTILE}",
            serving_labels={HOSTILE: 3},
            serving_config="/serving/models.config",
        )
    )
    assert "<script" not in html
    assert html.count("&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") >= 7


def test_components_histograms_top_values_and_metrics_are_drawn():
    html = render(
        _data(
            features=_features(),
            splits=["train", "eval"],
            anomalies=[],
            blessed=True,
            reasons=["all thresholds met"],
            metrics=[MetricRow("auc", 0.93456, minimum=0.7, change=0.0123, passed=True)],
            curves={"loss": {"train": [(50, 0.5), (100, 0.4)], "validation": [(100, 0.35)]}},
            training={"examples_per_second": 25716.8, "train_steps": 200},
        )
    )
    assert re.search(r'<g class="node executed" data-component="A" data-status="executed">', html)
    assert 'data-component="B" data-status="cached"' in html
    fare = html[html.index('data-feature="fare"') : html.index('data-kind="categorical"')]
    assert fare.count("<svg") == 1 and "25.0%" in fare
    assert '<table class="top-values" data-split="train">' in html
    row = re.search(r'<tr data-metric="auc">(.*?)</tr>', html, flags=re.S).group(1)
    assert ">0.9346<" in row and ">0.7<" in row and "+0.0123" in row and "passed" in row
    assert '<div class="curve" data-metric="loss">' in html and ">25,717<" in html
    assert 'id="no-anomalies"' in html and "Missing from this report" not in html


def test_each_missing_section_says_why():
    missing = {"statistics": "StatisticsGen did not run", "evaluation": "Evaluator failed: boom"}
    html = render(_data(missing=missing))
    assert "Missing from this report" in html
    for section, note in missing.items():
        assert f'<li data-section="{section}">{section}: {note}</li>' in html
    assert "No statistics: StatisticsGen did not run" in html and "Not evaluated: Evaluator failed: boom" in html
    assert "Pushed: nothing." in html


def test_the_page_refers_to_nothing_outside_itself():
    html = render(_data(features=_features(), splits=["train", "eval"], curves={"loss": {"train": [(1, 1.0)]}}))
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, flags=re.I)
    assert not re.search(r"<script|<link|@import|url\((?!#)|<metadata", html, flags=re.I)


@pytest.mark.parametrize(
    "value, shown",
    [(None, "-"), (0.86619, "0.8662"), (25716.8, "25,717"), (1.703e10, "1.703e+10"), (200, "200"), ("cpu", "cpu")],
)
def test_numbers_are_shown_compactly(value, shown):
    assert _number(value) == shown


def test_writing_replaces_the_file_at_once_and_leaves_no_temporary(tmp_path):
    path = str(tmp_path / "reports" / "run.html")
    write_atomically(path, "first")
    write_atomically(path, "second")
    assert open(path, encoding="utf-8").read() == "second"
    assert os.listdir(tmp_path / "reports") == ["run.html"]
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask


def test_a_multi_class_run_shows_its_confusion_matrix_by_class():
    html = render(
        _data(blessed=True, classes=["Adelie", "Gentoo"], confusion_matrix=[[30, 2], [1, 25]], reasons=["ok"])
    )
    table = re.search(r'<table id="confusion-matrix">(.*?)</table>', html, flags=re.S).group(1)
    rows = [re.findall(r"<t[hd][^>]*>([^<]*)</t[hd]>", row) for row in re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)]
    assert rows == [["", "Adelie", "Gentoo"], ["Adelie", "30", "2"], ["Gentoo", "1", "25"]]


def test_a_numeric_feature_without_values_says_so_instead_of_failing():
    empty = FeatureStats("pickup_census_tract", True, {s: SplitStats(4, 1.0) for s in ("train", "eval")})
    html = render(_data(features=[*_features(), empty], splits=["train", "eval"]))
    feature = html[html.index('data-feature="pickup_census_tract"') :]
    assert "No histogram: no split has a value of this feature" in feature.split("</div>")[0]
    assert html.count('<div class="histogram">') == 1  # `fare` keeps its chart


def test_binary_values_show_their_size_not_a_table_of_placeholders():
    images = FeatureStats(
        "image", False, {s: SplitStats(4, 0.0, unique=4, average_bytes=2560.0) for s in ("train", "eval")}
    )
    html = render(_data(features=[images], splits=["train", "eval"]))
    feature = html[html.index('data-feature="image"') :]
    assert "Binary values (encoded images or other bytes): train 2.5 KiB on average" in feature
    assert "top values" not in feature


def _curve(name: str, positives: int, gap: float, left_out: float = 0.0) -> CalibrationCurve:
    """A one-vs-rest curve of 100 rows: `positives` of the class, scored with a mean gap of `gap` in each bucket."""
    rest = 100 - positives
    buckets = [ResidualBucket(0.0, 0.1, rest, 0.0, gap), ResidualBucket(0.9, 1.0, positives, 1.0, 1.0 - gap)]
    return CalibrationCurve(name, buckets, expected_calibration_error(buckets), left_out)


def test_a_multi_class_label_shows_a_curve_and_ece_per_class_and_the_labels_ece():
    curves = [_curve("Adelie", 50, 0.02), _curve("Chinstrap", 20, 0.1, left_out=4), _curve("Gentoo", 30, 0.05)]
    html = render(_data(blessed=True, reasons=["ok"], classes=["Adelie", "Chinstrap", "Gentoo"], calibration=curves))

    blocks = re.findall(
        r'<div class="calibration" data-class="([^"]*)"><h4>[^<]*<span class="ece">([^<]*)</span>(.*?)</div>',
        html,
        flags=re.S,
    )
    assert [(name, ece) for name, ece, _ in blocks] == [("Adelie", "0.02"), ("Chinstrap", "0.1"), ("Gentoo", "0.05")]
    assert all("<svg" in body for _, _, body in blocks)
    assert [re.findall(r'class="rows">(\d+)<', body) for _, _, body in blocks] == [[], ["4"], []]
    # (50 * 0.02 + 20 * 0.1 + 30 * 0.05) / 100
    assert re.search(r'id="label-ece">[^<]*<strong>([^<]*)</strong>', html).group(1) == "0.045"
    assert "each class against the rest" in html


def test_a_binary_label_has_no_label_ece_and_a_label_of_many_classes_says_why_it_has_no_curves():
    binary = render(_data(blessed=True, reasons=["ok"], classes=["no", "yes"], calibration=[_curve("", 40, 0.1)]))
    many = render(_data(blessed=True, reasons=["ok"], classes=[str(i) for i in range(21)]))
    few = render(_data(blessed=True, reasons=["ok"], classes=["a", "b", "c"]))

    assert 'class="calibration"' in binary and 'id="label-ece"' not in binary
    note = re.search(r'<p id="calibration-note">([^<]*)</p>', many).group(1)
    assert note == (
        "No calibration plots: the label has 21 classes, and the Evaluator draws one per class for labels of at most 20."
    )
    assert 'id="calibration' not in few
