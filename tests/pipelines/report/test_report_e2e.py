"""End to end: a real taxi run writes its HTML report, named in the summary, and a browser reads it offline.

One run that succeeds (deployed, so serving labels exist) and one that stops at DataGate; the report
of each is checked as text and in headless Chromium (screenshots under test-artifacts/).
"""

from __future__ import annotations

import json
import os
import re

import pytest
from browser import headless_chromium, save_screenshot
from taxi_fixtures import run_cli, taxi_spec, write_spec

from pipelines.report.paths import report_path

pytestmark = pytest.mark.e2e

COMPONENTS = [
    "ExampleGen",
    "StatisticsGen",
    "SchemaGen",
    "ExampleValidator",
    "DataGate",
    "Transform",
    "Trainer",
    "BaselineResolver",
    "Evaluator",
    "Pusher",
    "Deployer",
]
NUMERIC = ["trip_miles", "fare", "trip_seconds", "pickup_latitude", "tips"]


def _report_line(stdout: str) -> str:
    found = re.findall(r"^Report: (.+)$", stdout, flags=re.M)
    assert len(found) == 1, stdout
    return found[0]


def _eval_rows(html: str) -> int:
    """The eval split's row count, as the report's statistics section says it."""
    found = re.search(r"\beval: (\d+) rows", html)
    assert found, "no eval row count in the statistics section"
    return int(found.group(1))


@pytest.fixture(scope="module")
def blessed_run(taxi_sample_csv, tmp_path_factory):
    root = tmp_path_factory.mktemp("report_root")
    spec = taxi_spec(
        taxi_sample_csv,
        str(root / "run"),
        pipeline={"name": "taxi_report"},
        deploy={"enabled": True, "p99_budget_ms": 2000, "sample_rows": 4},
    )
    spec_file = write_spec(root / "spec.yaml", spec)
    completed = run_cli(spec_file)
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    with open(root / "run" / "last_run.json", encoding="utf-8") as handle:
        record = json.load(handle)
    path = _report_line(completed.stdout)
    with open(path, encoding="utf-8") as handle:
        html = handle.read()
    return {
        "root": str(root / "run"),
        "spec": spec_file,
        "record": record,
        "path": path,
        "html": html,
        "stdout": completed.stdout,
    }


@pytest.fixture(scope="module")
def failed_run(taxi_sample_csv, tmp_path_factory):
    """A run DataGate stops: the schema allows only `Cash` as payment type."""
    from google.protobuf import text_format
    from tensorflow_metadata.proto.v0 import schema_pb2

    folder = tmp_path_factory.mktemp("report_failed")
    header = open(taxi_sample_csv, encoding="utf-8").readline().strip().split(",")
    schema = schema_pb2.Schema()
    for column in header:
        feature = schema.feature.add(name=column)
        feature.type = schema_pb2.BYTES if column in ("payment_type", "company") else schema_pb2.FLOAT
    payment = next(f for f in schema.feature if f.name == "payment_type")
    payment.string_domain.name = "payment_type"
    payment.string_domain.value.append("Cash")
    schema_file = folder / "schema.pbtxt"
    schema_file.write_text(text_format.MessageToString(schema), encoding="utf-8")
    spec = taxi_spec(taxi_sample_csv, str(folder / "run"), pipeline={"name": "taxi_failed"}, schema=str(schema_file))
    completed = run_cli(write_spec(folder / "spec.yaml", spec))
    assert completed.returncode == 1, completed.stdout + completed.stderr[-3000:]
    path = _report_line(completed.stdout)
    with open(path, encoding="utf-8") as handle:
        html = handle.read()
    return {"root": str(folder / "run"), "path": path, "html": html}


def test_the_summary_names_the_report_written_under_the_root(blessed_run):
    assert blessed_run["path"] == report_path(blessed_run["root"], blessed_run["record"]["run_id"])
    lines = blessed_run["stdout"].splitlines()
    assert lines.index(f"Report: {blessed_run['path']}") == len(lines) - 2  # just before "Took ..."
    assert not [name for name in os.listdir(os.path.dirname(blessed_run["path"])) if name.endswith(".tmp")]


def test_an_up_to_date_rerun_names_the_last_runs_report(blessed_run):
    completed = run_cli(blessed_run["spec"])  # nothing changed: no pipeline run, only the fingerprint check
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    assert completed.stdout.startswith("Up to date"), completed.stdout
    assert _report_line(completed.stdout) == blessed_run["path"]


def test_the_report_loads_no_resource_from_anywhere(blessed_run):
    html = blessed_run["html"]
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, flags=re.I), "external resource"
    assert not re.search(r"<script|<link|@import|url\((?!#)", html, flags=re.I)


def test_the_report_shows_what_the_summary_says(blessed_run):
    summary = blessed_run["record"]["summary"]
    html = blessed_run["html"]
    assert "BLESSED" in html and "NOT BLESSED" not in html
    for name, value in summary["metrics"].items():
        row = re.search(rf'<tr data-metric="{re.escape(name)}">(.*?)</tr>', html, flags=re.S)
        assert row, name
        assert f">{value:.4g}<" in row.group(1), (name, value, row.group(1))
    version = os.path.basename(summary["pushed_path"])
    assert f'<strong id="pushed-version">{version}</strong>' in html
    assert "Missing from this report" not in html, re.findall(r'<li data-section="[^"]+">[^<]*', html)


def test_a_browser_finds_components_histograms_metrics_and_the_served_version(blessed_run):
    from selenium.webdriver.common.by import By

    summary = blessed_run["record"]["summary"]
    driver = headless_chromium(1400, 1000)
    try:
        driver.get("file://" + blessed_run["path"])
        nodes = {
            node.get_attribute("data-component"): node.get_attribute("data-status")
            for node in driver.find_elements(By.CSS_SELECTOR, "svg.dag g[data-component]")
        }
        assert nodes == dict.fromkeys(COMPONENTS, "executed")
        assert driver.find_element(By.CSS_SELECTOR, 'g[data-component="Trainer"]').text.startswith("Trainer")

        numeric = driver.find_elements(By.CSS_SELECTOR, '.feature[data-kind="numeric"]')
        names = {feature.get_attribute("data-feature") for feature in numeric}
        assert set(NUMERIC) <= names, names
        for feature in numeric:
            charts = feature.find_elements(By.CSS_SELECTOR, ".histogram svg")
            assert len(charts) == 1 and charts[0].size["height"] > 50, feature.get_attribute("data-feature")
            assert feature.find_elements(By.CSS_SELECTOR, "svg path"), feature.get_attribute("data-feature")
        splits = driver.find_elements(By.CSS_SELECTOR, '.feature[data-feature="company"] table.top-values')
        assert [table.get_attribute("data-split") for table in splits] == ["train", "eval"]

        row = driver.find_element(By.CSS_SELECTOR, 'tr[data-metric="binary_accuracy"]')
        cells = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        assert cells[:3] == ["binary_accuracy", f"{summary['metrics']['binary_accuracy']:.4g}", "0.5"], cells
        assert cells[-1] == "passed"
        assert driver.find_element(By.ID, "pushed-version").text == os.path.basename(summary["pushed_path"])
        labels = driver.find_elements(By.CSS_SELECTOR, "#serving-labels tr td")
        assert [cell.text for cell in labels] == ["stable", str(summary["deployed"]["version"])]
        assert driver.find_elements(By.CSS_SELECTOR, '.curve[data-metric="loss"] svg')
        cells = {
            cell.get_attribute("data-cell"): cell
            for cell in driver.find_elements(By.CSS_SELECTOR, "#binary-confusion-matrix td[data-cell]")
        }
        assert sorted(cells) == ["FN", "FP", "TN", "TP"] and all(cell.is_displayed() for cell in cells.values())
        counts = {name: int(cell.find_element(By.CLASS_NAME, "count").text) for name, cell in cells.items()}
        assert sum(counts.values()) == _eval_rows(blessed_run["html"]), counts  # the Evaluator scores every eval row
        accuracy = (counts["TP"] + counts["TN"]) / sum(counts.values())
        assert accuracy == pytest.approx(summary["metrics"]["binary_accuracy"], abs=1e-3), counts
        assert cells["TP"].find_element(By.CLASS_NAME, "share").text.endswith("%")

        resources = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        assert [name for name in resources if not name.startswith(("file:", "data:"))] == []
        driver.set_window_size(1400, min(driver.execute_script("return document.body.scrollHeight") + 120, 8000))
        assert os.path.getsize(save_screenshot(driver, "report_blessed_run")) > 10_000
    finally:
        driver.quit()


def test_a_failed_run_still_gets_a_report_saying_what_stopped_it(failed_run):
    from selenium.webdriver.common.by import By

    html = failed_run["html"]
    assert "feature `payment_type`" in html
    assert failed_run["path"].startswith(os.path.join(failed_run["root"], "reports"))
    driver = headless_chromium(1400, 1000)
    try:
        driver.get("file://" + failed_run["path"])
        assert driver.find_element(By.CSS_SELECTOR, "#run-status strong").text == "failed"
        status = {
            node.get_attribute("data-component"): node.get_attribute("data-status")
            for node in driver.find_elements(By.CSS_SELECTOR, "svg.dag g[data-component]")
        }
        assert status["ExampleValidator"] == "executed" and status["DataGate"] == "failed"
        assert status["Transform"] == status["Trainer"] == status["Pusher"] == "not run"
        missing = {
            item.get_attribute("data-section"): item.text
            for item in driver.find_elements(By.CSS_SELECTOR, "#missing li")
        }
        assert "Trainer did not run" in missing["training"] and "Evaluator did not run" in missing["evaluation"]
        assert driver.find_elements(By.CSS_SELECTOR, '.feature[data-kind="numeric"] .histogram svg')
        assert any("payment_type" in li.text for li in driver.find_elements(By.CSS_SELECTOR, ".anomaly-list li"))
        assert driver.find_element(By.ID, "gate-failed").is_displayed()
        assert "the data does not match the schema" in driver.find_element(By.ID, "failure").text
        driver.set_window_size(1400, min(driver.execute_script("return document.body.scrollHeight") + 120, 8000))
        save_screenshot(driver, "report_failed_run")
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def regression_run(tmp_path_factory):
    """The diabetes example (a regression label, a user transform), with fewer steps."""
    from example_runs import example_spec, run_example

    folder = tmp_path_factory.mktemp("report_regression")
    spec = example_spec("diabetes", str(folder / "run"), training={"train_steps": 200, "steps_per_execution": 50})
    summary, stdout = run_example(folder, spec)
    path = _report_line(stdout)
    with open(path, encoding="utf-8") as handle:
        return {"summary": summary, "html": handle.read(), "path": path}


def test_a_regression_report_shows_its_error_metrics_against_their_bounds(regression_run):
    html = regression_run["html"]
    summary = regression_run["summary"]
    row = re.search(r'<tr data-metric="root_mean_squared_error">(.*?)</tr>', html, flags=re.S)
    assert row and f">{summary['metrics']['root_mean_squared_error']:.4g}<" in row.group(1)
    assert '<td class="num">70</td>' in row.group(1)  # the spec's max
    assert ("passed" if summary["blessed"] else "FAILED") in row.group(1)
    for feature in ("age", "bmi", "bp", "progression"):
        block = re.search(rf'data-feature="{feature}" data-kind="numeric">(.*?)</div>\s*</div>', html, flags=re.S)
        assert block and "<svg" in block.group(1), feature
    assert 'id="confusion-matrix"' not in html


def test_a_browser_finds_the_regression_residuals(regression_run):
    from selenium.webdriver.common.by import By

    driver = headless_chromium(1400, 1000)
    try:
        driver.get("file://" + regression_run["path"])
        chart = driver.find_element(By.CSS_SELECTOR, "#evaluation ~ .residuals svg")
        assert chart.is_displayed() and chart.size["height"] > 100
        assert len(chart.find_elements(By.CSS_SELECTOR, "path")) >= 2  # the diagonal and the markers
        rows = driver.find_elements(By.CSS_SELECTOR, "#residual-buckets tr")[1:]
        counts = [int(row.find_elements(By.TAG_NAME, "td")[2].text) for row in rows]
        assert rows and sum(counts) == _eval_rows(regression_run["html"]), counts
        residuals = [float(row.find_element(By.CLASS_NAME, "residual").text) for row in rows]
        mean = float(driver.find_element(By.CSS_SELECTOR, "#mean-residual strong").text)
        assert mean == pytest.approx(sum(c * r for c, r in zip(counts, residuals)) / sum(counts), rel=1e-2, abs=1e-2)
        assert not driver.find_elements(By.ID, "binary-confusion-matrix")
        driver.set_window_size(1400, min(driver.execute_script("return document.body.scrollHeight") + 120, 8000))
        save_screenshot(driver, "report_regression_run")
    finally:
        driver.quit()
