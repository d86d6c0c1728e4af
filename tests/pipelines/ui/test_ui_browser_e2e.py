"""`python -m pipelines ui` in a real headless Chromium, on the ML Metadata of two real runs.

The server runs as a user starts it (a subprocess, on 127.0.0.1); the browser opens the runs table, clicks into a
run, its lineage, the report and the compare page, checks what a person looks for there, that nothing was fetched
from anywhere but 127.0.0.1, and saves a screenshot of each page (test-artifacts/ui-*.png).
"""

from __future__ import annotations

import os
import re

import pytest
from browser import headless_chromium, save_screenshot
from history_runs import STEPS, two_runs
from ui_process import running_ui

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def runs(taxi_sample_csv, tmp_path_factory):
    return two_runs(taxi_sample_csv, tmp_path_factory)


@pytest.fixture(scope="module")
def ui_url(runs):
    """`python -m pipelines ui SPEC --port 0` as a subprocess; yields the URL it prints, then stops it."""
    with running_ui(runs["spec_file"]) as ui:
        yield ui.url


@pytest.fixture(scope="module")
def driver():
    chromium = headless_chromium()
    yield chromium
    chromium.quit()


def wait_for(driver, element_id: str):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, 120).until(expected_conditions.presence_of_element_located((By.ID, element_id)))


def assert_only_local(driver, base: str, check_source: bool = True) -> None:
    """Every resource the page loaded came from the ui; with `check_source`, the page names no other URL either."""
    loaded = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert all(url.startswith(base) for url in [driver.current_url, *loaded]), loaded
    if check_source:
        assert re.findall(r"https?://[^\s\"'<]+", driver.page_source) == [], "the page names a URL"


def cells(driver, selector: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [element.text for element in driver.find_elements(By.CSS_SELECTOR, selector)]


def pushed_versions(runs) -> list[str]:
    return sorted(os.listdir(os.path.join(runs["root"], "serving", runs["model_name"])))


def test_runs_table_lists_both_runs_with_status_metrics_and_versions(driver, ui_url, runs):
    from selenium.webdriver.common.by import By

    driver.get(ui_url)
    wait_for(driver, "runs")
    assert cells(driver, "tr.run td.run-id") == list(reversed(runs["run_ids"]))
    assert cells(driver, "tr.run td.status") == ["succeeded", "succeeded"]
    assert cells(driver, "tr.run td.pushed") == list(reversed(pushed_versions(runs)))
    assert cells(driver, "tr.run td.blessed") == ["yes", "yes"]
    newest = driver.find_elements(By.CSS_SELECTOR, "tr.run")[0].find_elements(By.CSS_SELECTOR, "span.metric")
    assert [e.text for e in newest] == [f"{k}={v}" for k, v in sorted(runs["summaries"][1]["metrics"].items())]
    assert_only_local(driver, ui_url)
    save_screenshot(driver, "ui-runs")


def test_run_page_shows_components_metrics_and_the_model_version(driver, ui_url, runs):
    from selenium.webdriver.common.by import By

    driver.get(ui_url)
    wait_for(driver, "runs")
    driver.find_element(By.CSS_SELECTOR, f"tr.run[data-run='{runs['run_ids'][1]}'] a.run-link").click()
    assert wait_for(driver, "run-id").text == runs["run_ids"][1]
    assert driver.find_element(By.ID, "run-status").text == "succeeded"
    assert driver.find_element(By.ID, "model-version").text == pushed_versions(runs)[-1]
    for name, value in runs["summaries"][1]["metrics"].items():
        assert cells(driver, f"td.metric-value[data-metric='{name}']") == [str(value)]
    assert cells(driver, "tr.component[data-component='Transform'] td.status") == ["cached"]
    assert cells(driver, "tr.component[data-component='Trainer'] td.status") == ["executed"]
    assert f"train_steps: {STEPS[1]}" in driver.find_element(By.ID, "spec-text").get_attribute("textContent")
    assert_only_local(driver, ui_url)
    save_screenshot(driver, "ui-run")


def test_lineage_goes_from_the_data_to_the_pushed_version(driver, ui_url, runs):
    from selenium.webdriver.common.by import By

    driver.get(f"{ui_url}runs/latest")
    wait_for(driver, "lineage-link").click()
    assert wait_for(driver, "lineage-steps")
    assert driver.find_element(By.ID, "model-version").text == pushed_versions(runs)[-1]
    steps = [e.get_attribute("data-component") for e in driver.find_elements(By.CSS_SELECTOR, "tr.lineage-step")]
    assert steps[0] == "ExampleGen" and steps[-1] == "Pusher" and "Trainer" in steps
    assert runs["data_path"] in driver.find_element(By.ID, "lineage-data-files").text
    assert_only_local(driver, ui_url)
    save_screenshot(driver, "ui-lineage")


def test_compare_page_shows_the_spec_change_metric_deltas_and_what_re_ran(driver, ui_url, runs):
    from selenium.webdriver.common.by import By

    driver.get(ui_url)
    wait_for(driver, "compare-button").click()
    diff = wait_for(driver, "spec-diff").text
    assert f"-  train_steps: {STEPS[0]}" in diff and f"+  train_steps: {STEPS[1]}" in diff
    assert cells(driver, "#run-a") == [runs["run_ids"][0]] and cells(driver, "#run-b") == [runs["run_ids"][1]]
    before, after = (s["metrics"] for s in runs["summaries"])
    for name in after:
        assert cells(driver, f"tr[data-metric='{name}'] td.delta") == [f"{after[name] - before[name]:+.4f}"]
    reran = driver.find_element(By.ID, "reran").text
    assert "Trainer" in reran and "Transform" not in reran
    assert_only_local(driver, ui_url)
    save_screenshot(driver, "ui-compare")


def test_run_page_links_the_html_report_when_there_is_one(driver, ui_url, runs):
    from selenium.webdriver.common.by import By

    from pipelines.report.paths import report_path

    driver.get(f"{ui_url}runs/-1")
    wait_for(driver, "run-id")
    if not os.path.isfile(report_path(runs["root"], runs["run_ids"][1])):
        assert "none written for this run" in driver.find_element(By.ID, "run-summary").text
        return
    driver.find_element(By.ID, "report-link").click()
    assert driver.current_url.startswith(f"{ui_url}files/reports/") and driver.current_url.endswith(".html")
    assert runs["run_ids"][1] in driver.page_source
    assert_only_local(driver, ui_url, check_source=False)  # a report may name SVG's namespace URL; it loads nothing
    save_screenshot(driver, "ui-report")


def test_unknown_run_is_a_404_page_with_the_nearest_ids(driver, ui_url, runs):
    driver.get(f"{ui_url}runs/1999-01-01")
    assert wait_for(driver, "error-title").text == "Run not found"
    assert runs["run_ids"][1] in driver.find_element("id", "error-message").text
    assert_only_local(driver, ui_url)
