"""End to end: a `{SPAN}` spec on the beam target (TFX's BeamDagRunner), run as a schedule runs it.

One module fixture, three CLI runs on one root with `data.window: 2` and `data.checks.drift`: span 1 alone;
span 2 arrives (the run ingests span 2 only, trains on spans 1 and 2, DataGate compares span 2 with span 1);
nothing new (ExampleGen's driver takes span 2 again, every component comes from cache). Then `runs`,
`runs show` and the report of the second run, in the real browser, show the spans and the charts across them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from browser import headless_chromium, save_screenshot
from mlmd_queries import executions_after, max_execution_id, store_for
from taxi_fixtures import REPO, taxi_spec, write_spec

pytestmark = pytest.mark.e2e

ENV = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pipelines", *args], cwd=REPO, env=ENV, capture_output=True, text=True, timeout=900
    )


def examples_spans(metadata: str, node: str, after_id: int, until_id: int, outputs: bool) -> list[int]:
    """The `span` of the Examples `node`'s executions in (after_id, until_id] wrote (or read), sorted."""
    store = store_for(metadata)
    context = store.get_context_by_type_and_name("node", f"spans_beam.{node}")
    ids = [e.id for e in store.get_executions_by_context(context.id) if after_id < e.id <= until_id]
    wanted = event_types(outputs)
    events = [e for e in store.get_events_by_execution_ids(ids) if e.type in wanted]
    artifacts = store.get_artifacts_by_id([e.artifact_id for e in events])
    return sorted(a.properties["span"].int_value for a in artifacts if a.type in ("Examples", "ExampleStatistics"))


def event_types(outputs: bool) -> tuple[int, ...]:
    from ml_metadata.proto import metadata_store_pb2

    event = metadata_store_pb2.Event
    return (event.OUTPUT, event.DECLARED_OUTPUT) if outputs else (event.INPUT, event.DECLARED_INPUT)


@pytest.fixture(scope="module")
def runs(taxi_sample_csv, tmp_path_factory):
    folder = tmp_path_factory.mktemp("beam_spans")
    header, *rows = open(taxi_sample_csv, encoding="utf-8").readlines()
    (folder / "data" / "span-1").mkdir(parents=True)
    (folder / "data" / "span-1" / "part.csv").write_text(header + "".join(rows[0::2]), encoding="utf-8")
    spec = taxi_spec("data/span-{SPAN}/*.csv", str(folder / "run"), pipeline={"name": "spans_beam"})
    spec["orchestrator"] = {"target": "beam"}
    spec["data"].update(window=2, checks={"drift": 0.3})
    spec["training"].update(train_steps=50, eval_steps=5)
    spec_file = write_spec(folder / "spec.yaml", spec)
    metadata = str(folder / "run" / "metadata.sqlite")
    run = [sys.executable, os.path.join(REPO, "pipelines", "run_local.py"), spec_file, "--target", "beam"]
    result = {"spec_file": spec_file, "metadata": metadata, "root": str(folder / "run"), "marks": [0]}
    for step in ("first", "second", "nothing_new"):
        if step == "second":
            (folder / "data" / "span-2").mkdir()
            (folder / "data" / "span-2" / "part.csv").write_text(header + "".join(rows[1::2]), encoding="utf-8")
        completed = subprocess.run(run, env=ENV, capture_output=True, text=True, timeout=900)
        assert completed.returncode == 0, (completed.stdout + completed.stderr)[-4000:]
        result[step] = completed
        result["marks"].append(max_execution_id(metadata))
    result["runs"] = cli("runs", spec_file)
    result["show"] = cli("runs", spec_file, "show", "-2")
    result["show_json"] = cli("runs", spec_file, "show", "-2", "--json")
    return result


def test_each_scheduled_run_ingests_the_newest_span_and_trains_on_the_window(runs):
    metadata, marks = runs["metadata"], runs["marks"]
    assert examples_spans(metadata, "ExampleGen", marks[0], marks[1], outputs=True) == [1]
    assert examples_spans(metadata, "ExampleGen", marks[1], marks[2], outputs=True) == [2]  # span 1 not read again
    assert examples_spans(metadata, "Transform", marks[1], marks[2], outputs=False) == [1, 2]
    assert examples_spans(metadata, "Trainer", marks[1], marks[2], outputs=False) == [1, 2]
    # DataGate read this span's statistics and, resolved for the drift check, the previous span's.
    assert examples_spans(metadata, "DataGate", marks[1], marks[2], outputs=False) == [1, 2]
    assert "Pushed: " in runs["second"].stdout


def test_a_run_with_no_new_span_reads_nothing_again(runs):
    metadata, marks = runs["metadata"], runs["marks"]
    states = executions_after(metadata, marks[2])
    assert states["ExampleGen"] == "CACHED" and states["Trainer"] == "CACHED", states
    assert set(states.values()) <= {"CACHED", "COMPLETE"}
    assert "COMPLETE" not in {states[n] for n in ("ExampleGen", "StatisticsGen", "Transform", "Trainer", "Evaluator")}


def test_runs_lists_the_spans_each_run_ingested_and_trained_on(runs):
    listed = runs["runs"]
    assert listed.returncode == 0, listed.stderr
    header, *lines = listed.stdout.strip().splitlines()
    assert header.split()[:6] == ["RUN", "TOOK", "STATUS", "INGESTED", "TRAINED", "ON"]
    cells = [line.split()[2:5] for line in lines]  # newest first: status, ingested, trained on
    assert cells == [["succeeded", "2", "1-2"], ["succeeded", "2", "1-2"], ["succeeded", "1", "1"]]


def test_runs_show_tables_the_blessed_metrics_by_span_and_the_drift(runs):
    shown = runs["show"]
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert "Spans: ingested 2; trained on 1-2" in text
    table = text[text.index("Blessed models by span:") :].splitlines()
    assert table[1].split() == ["SPAN", "TRAINED", "ON", "RUN", "BINARY_ACCURACY"]
    assert [row.split()[:2] for row in table[2:4]] == [["1", "1"], ["2", "1-2"]]
    drift = text[text.index("Drift between spans:") :].splitlines()
    pair, feature, distance, verdict, limit = drift[2].replace("1 -> 2", "1->2").split()
    assert pair == "1->2" and verdict == "within" and limit == "0.3"
    assert 0 < float(distance) <= 0.3, drift
    data = json.loads(runs["show_json"].stdout)
    assert data["ingested_spans"] == [2] and data["trained_spans"] == [1, 2]
    across = data["across_spans"]
    assert [point["span"] for point in across["metrics"]] == [1, 2] and across["limit"] == 0.3
    assert across["drift"][0]["feature"] == feature and across["drift"][0]["previous"] == 1


def test_the_report_draws_the_metrics_across_spans_and_the_drift_in_the_browser(runs):
    from selenium.webdriver.common.by import By

    run_id = json.loads(runs["show_json"].stdout)["run_id"]
    path = os.path.join(runs["root"], "reports", f"{run_id}.html")
    driver = headless_chromium(1400, 1000)
    try:
        driver.get("file://" + path)
        section = driver.find_element(By.ID, "spans")
        assert section.text == "Across spans"
        for chart in ("span-metrics-chart", "span-drift-chart"):
            svg = driver.find_element(By.CSS_SELECTOR, f"#{chart} svg")
            assert svg.size["width"] > 200 and svg.size["height"] > 100, chart
        rows = driver.find_elements(By.CSS_SELECTOR, "#span-metrics tr[data-span]")
        assert [row.get_attribute("data-span") for row in rows] == ["1", "2"]
        drift = driver.find_element(By.CSS_SELECTOR, '#span-drift tr[data-span="2"]').text
        assert drift.startswith("1 → 2") and "0.3" in drift
        driver.execute_script("document.getElementById('spans').scrollIntoView()")
        assert os.path.getsize(save_screenshot(driver, "report_across_spans")) > 10_000
    finally:
        driver.quit()
