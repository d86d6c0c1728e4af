"""The run hook and `write_report`: a failed run gets its report, and no report problem fails a run."""

from __future__ import annotations

import io
import os

import pytest
from taxi_fixtures import taxi_spec, write_spec

from pipelines.outcome.summary import RunSummary, format_summary
from pipelines.report import RunReporter, report_path, write_report
from pipelines.report.collect import RunFacts


@pytest.fixture(scope="module")
def compiled(taxi_sample_csv, tmp_path_factory):
    import pipelines

    folder = tmp_path_factory.mktemp("reporter")
    spec_file = write_spec(folder / "spec.yaml", taxi_spec(taxi_sample_csv, str(folder / "root")))
    resolved = pipelines.load(spec_file)
    return resolved, pipelines.compile(resolved)


def test_a_failed_run_gets_a_report_from_the_hook(compiled):
    resolved, tfx_pipeline = compiled
    stream = io.StringIO()
    reporter = RunReporter(resolved, tfx_pipeline, "/logs/run.log", stream)
    reporter.before_run(pipeline_name=resolved.name, run_id="2026-11-24T00:00:01.5")
    reporter.after_component(
        component_id="ExampleGen", index=1, total=10, status="executed", seconds=1.0, execution_id=None
    )
    reporter.on_failure(component_id="StatisticsGen", index=2, total=10, seconds=0.5, error=ValueError("bad <stats>"))
    reporter.after_run(pipeline_name=resolved.name, run_id="2026-11-24T00:00:01.5", status="failed", seconds=1.5)
    path = report_path(resolved.root, "2026-11-24T00:00:01.5")
    assert stream.getvalue() == f"Report: {path}\n"
    html = open(path, encoding="utf-8").read()
    assert 'data-component="StatisticsGen" data-status="failed"' in html
    assert 'data-component="Trainer" data-status="not run"' in html
    assert "StatisticsGen failed: bad &lt;stats&gt;" in html
    assert '<li data-section="training">training: Trainer did not run (an earlier component failed)</li>' in html


def test_a_run_that_succeeds_gets_its_report_only_from_write(compiled, tmp_path):
    resolved, tfx_pipeline = compiled
    stream = io.StringIO()
    reporter = RunReporter(resolved, tfx_pipeline, "/logs/run.log", stream)
    reporter.before_run(pipeline_name=resolved.name, run_id="2026-11-24T00:00:02")
    reporter.after_run(pipeline_name=resolved.name, run_id="2026-11-24T00:00:02", status="succeeded", seconds=1.0)
    assert stream.getvalue() == "" and not os.path.exists(report_path(resolved.root, "2026-11-24T00:00:02"))
    path = reporter.write(RunSummary(blessed=False, reasons=["auc = 0.4000 is below the minimum 0.5000"]))
    assert path == report_path(resolved.root, "2026-11-24T00:00:02")
    assert "NOT BLESSED" in open(path, encoding="utf-8").read()


def test_a_report_that_cannot_be_written_is_a_warning_not_an_error(compiled, tmp_path, capsys):
    resolved, tfx_pipeline = compiled
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the reports folder would go", encoding="utf-8")
    import dataclasses

    elsewhere = dataclasses.replace(resolved, root=str(blocked))
    facts = RunFacts("run-1", "succeeded", 1.0, "/logs/run.log", ["A"], {})
    assert write_report(elsewhere, tfx_pipeline.metadata_connection_config, facts) is None
    assert "warning: could not write the run report" in capsys.readouterr().err


@pytest.mark.parametrize(
    "report, expected", [("/root/reports/run.html", "Report: /root/reports/run.html"), (None, None)]
)
def test_the_summary_names_the_report_before_the_time_taken(report, expected):
    lines = format_summary(RunSummary(), 3.0, "/logs/run.log", report).splitlines()
    assert lines[-1].startswith("Took 3.0s")
    assert (lines[-2] if expected else None) == expected
    assert sum(line.startswith("Report:") for line in lines) == (1 if expected else 0)
