"""The Prometheus hook against a real Pushgateway on 127.0.0.1 (one group per run), and its own /metrics."""

from __future__ import annotations

import socket
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families
from pushgateway_process import groups, running_pushgateway, scrape

from components.trainer.monitoring.prometheus import MetricsExporter
from pipelines.hooks.phases import HookList
from pipelines.hooks.prometheus_hook import PrometheusHook

RUN_1 = "2026-11-23T10:00:00.000001"  # the local runner's run ids: datetime.isoformat()
RUN_2 = "2026-11-23T11:00:00.000002"
RUN_3 = "2026-11-23T12:00:00.000003"


@pytest.fixture
def gateway():
    with running_pushgateway() as url:
        yield url


def _run_events(hooks: HookList, run_id: str, fail: bool = False, pipeline: str = "taxi") -> None:
    hooks.call("before_run", pipeline_name=pipeline, run_id=run_id)
    hooks.call("before_component", component_id="ExampleGen", index=1, total=2)
    hooks.call(
        "after_component", component_id="ExampleGen", index=1, total=2, status="executed", seconds=1.5, execution_id=1
    )
    if fail:
        hooks.call("on_failure", component_id="Trainer", index=2, total=2, seconds=0.25, error=RuntimeError("x"))
    status = "failed" if fail else "succeeded"
    hooks.call("after_run", pipeline_name=pipeline, run_id=run_id, status=status, seconds=2.0)


def _samples(page: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """{sorted labels: value} of every sample called `name` on a Prometheus text page."""
    return {
        tuple(sorted(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(page)
        for sample in family.samples
        if sample.name == name
    }


def _labels(job: str, run_id: str, **extra: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted({"instance": "", "job": job, "pipeline": "taxi", "run_id": run_id, **extra}.items()))


def test_each_run_is_pushed_to_its_own_group(gateway):
    hook = PrometheusHook(pushgateway_url=gateway, job="ci")
    _run_events(HookList([hook]), RUN_1)
    _run_events(HookList([hook]), RUN_2, fail=True)  # the same hook object, reused for a second run
    found = sorted((g["labels"]["job"], g["labels"]["pipeline"], g["labels"]["run_id"]) for g in groups(gateway))
    assert found == [("ci", "taxi", RUN_1), ("ci", "taxi", RUN_2)]
    page = scrape(gateway)
    assert _samples(page, "pipeline_run_success") == {_labels("ci", RUN_1): 1.0, _labels("ci", RUN_2): 0.0}
    executed = {"component": "ExampleGen", "status": "executed"}
    assert _samples(page, "pipeline_component_seconds") == {
        _labels("ci", RUN_1, **executed): 1.5,
        _labels("ci", RUN_2, **executed): 1.5,
        _labels("ci", RUN_2, component="Trainer", status="failed"): 0.25,
    }
    runs = _samples(page, "pipeline_component_runs_total")
    assert runs[_labels("ci", RUN_2, component="Trainer", status="failed")] == 1.0
    assert _labels("ci", RUN_1, component="Trainer", status="failed") not in runs  # run 1 did not fail
    started, finished = (_samples(page, f"pipeline_run_{e}_timestamp_seconds") for e in ("started", "finished"))
    assert started[_labels("ci", RUN_1)] <= finished[_labels("ci", RUN_1)] <= started[_labels("ci", RUN_2)]


def test_runs_beyond_keep_runs_are_deleted_with_their_trainer_groups(gateway):
    for run_id in (RUN_1, RUN_2, RUN_3):  # the trainer pushes its group during each run
        MetricsExporter(pushgateway_url=gateway, grouping={"pipeline": "taxi", "run_id": run_id}).close()
    other = PrometheusHook(pushgateway_url=gateway, keep_runs=1)
    _run_events(HookList([other]), RUN_1, pipeline="penguins")  # another pipeline's run stays
    for run_id in (RUN_1, RUN_2, RUN_3):
        _run_events(HookList([PrometheusHook(pushgateway_url=gateway, keep_runs=2)]), run_id)
    found = sorted((g["labels"]["job"], g["labels"]["pipeline"], g["labels"]["run_id"]) for g in groups(gateway))
    assert found == [
        ("trainer", "taxi", RUN_2),
        ("trainer", "taxi", RUN_3),
        ("yaml_tfx", "penguins", RUN_1),
        ("yaml_tfx", "taxi", RUN_2),
        ("yaml_tfx", "taxi", RUN_3),
    ]


def test_keep_runs_none_keeps_every_run(gateway):
    for run_id in (RUN_1, RUN_2, RUN_3):
        _run_events(HookList([PrometheusHook(pushgateway_url=gateway, keep_runs=None)]), run_id)
    assert sorted(g["labels"]["run_id"] for g in groups(gateway)) == [RUN_1, RUN_2, RUN_3]


def test_a_pushgateway_that_is_down_is_reported_once_and_the_run_goes_on(capsys):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    _run_events(HookList([PrometheusHook(pushgateway_url=closed)]), RUN_1, fail=True)
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, warnings
    assert f"the Pushgateway at {closed} did not take the run metrics" in warnings[0]
    assert "Check that it runs and that `pushgateway_url` names it." in warnings[0]


def test_serves_metrics_on_a_local_port():
    hook = PrometheusHook(port=0)
    try:
        _run_events(HookList([hook]), RUN_1)
        with urllib.request.urlopen(f"http://127.0.0.1:{hook.port}/metrics", timeout=5) as response:
            text = response.read().decode()
    finally:
        hook.close()
    assert 'pipeline_run_success{pipeline="taxi"} 1.0' in text
    assert 'pipeline_component_runs_total{component="ExampleGen",pipeline="taxi",status="executed"} 1.0' in text


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "PrometheusHook has nowhere to publish. Expected `pushgateway_url` or `port`. Received neither."),
        ({"port": 0, "keep_runs": 0}, "`keep_runs` must be at least 1. Received: keep_runs=0. Write `keep_runs: null`"),
    ],
)
def test_bad_arguments_are_reported_with_the_fix(arguments, message):
    with pytest.raises(ValueError) as raised:
        PrometheusHook(**arguments)
    assert message in str(raised.value)
