"""Prometheus metrics: served on 127.0.0.1 while training, and pushed to a real Pushgateway on 127.0.0.1."""

from __future__ import annotations

import re
import urllib.request

import pytest
from ports import free_port
from prometheus_client.parser import text_string_to_metric_families
from pushgateway_process import groups, running_pushgateway, scrape
from tfx.dsl.components.base.base_executor import BaseExecutor
from tfx.proto.orchestration import pipeline_pb2

from components.trainer.monitoring.pipeline_run import pipeline_run_labels
from components.trainer.monitoring.prometheus import MetricsExporter


def _gauge(body: str, name: str) -> float:
    match = re.search(rf"^{name} (\S+)$", body, re.MULTILINE)
    assert match, f"{name} missing from:\n{body}"
    return float(match.group(1))


def test_training_serves_its_metrics_over_http_while_it_runs(observed_run):
    trained = [body for body in observed_run.scrapes if _gauge(body, "trainer_steps_total") > 0]
    assert trained, f"{len(observed_run.scrapes)} scrapes, none after a training step"
    last = trained[-1]
    assert 0 < _gauge(last, "trainer_steps_total") <= 30
    assert _gauge(last, "trainer_examples_total") == _gauge(last, "trainer_steps_total") * 32  # the global batch (CPU)
    assert "# TYPE trainer_steps_total counter" in last and "# TYPE trainer_examples_total counter" in last
    assert _gauge(last, "trainer_examples_per_second") > 0
    assert 0 < _gauge(last, "trainer_loss") < 2


def test_the_metrics_server_stops_with_training(observed_run):
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{observed_run.port}/metrics", timeout=1)


def test_a_taken_port_is_reported_with_the_fix():
    port = free_port()
    first = MetricsExporter(port=port)
    try:
        with pytest.raises(OSError, match=r"could not listen on 127\.0\.0\.1:\d+.*Fix `training.metrics_port`"):
            MetricsExporter(port=port)
    finally:
        first.close()


def _pushed(page: str, name: str) -> dict[str, float]:
    """{run_id: value} of the samples called `name` that the trainer pushed for pipeline `taxi`."""
    return {
        sample.labels["run_id"]: sample.value
        for family in text_string_to_metric_families(page)
        for sample in family.samples
        if sample.name == name and sample.labels.get("job") == "trainer" and sample.labels.get("pipeline") == "taxi"
    }


def test_each_run_pushes_its_own_group_and_counters_only_increase():
    with running_pushgateway() as url:
        pages = []
        for run_id, steps in (("r1", (7, 8)), ("r2", (5, 20, 20, 19))):
            exporter = MetricsExporter(
                pushgateway_url=url,
                grouping={"pipeline": "taxi", "run_id": run_id},
                push_interval_seconds=0,  # push on every update
                examples_per_step=32,
            )
            for step in steps:
                exporter.update(step=step, loss=0.5, examples_per_second=1000.0 + step)
                pages.append(scrape(url))
            exporter.close()
        found = sorted((g["labels"]["job"], g["labels"]["pipeline"], g["labels"]["run_id"]) for g in groups(url))
    assert found == [("trainer", "taxi", "r1"), ("trainer", "taxi", "r2")]
    assert _pushed(pages[-1], "trainer_steps_total") == {"r1": 8.0, "r2": 20.0}  # a lower step is not counted
    assert _pushed(pages[-1], "trainer_examples_total") == {"r1": 8.0 * 32, "r2": 20.0 * 32}
    assert _pushed(pages[-1], "trainer_examples_per_second") == {"r1": 1008.0, "r2": 1019.0}
    for name in ("trainer_steps_total", "trainer_examples_total"):
        seen = [_pushed(page, name).get("r2") for page in pages[2:]]
        assert seen == sorted(seen), f"{name} went down: {seen}"


class _RunFnCaller(BaseExecutor):
    """A TFX executor whose `Do` calls what `GenericExecutor.Do` would call: here, the label lookup."""

    def Do(self, input_dict, output_dict, exec_properties):  # noqa: N802 - TFX's name
        return pipeline_run_labels()


def test_the_pipeline_and_run_come_from_the_calling_tfx_executor():
    context = BaseExecutor.Context(
        pipeline_info=pipeline_pb2.PipelineInfo(id="taxi"), pipeline_run_id="2026-11-23T10:00:00.000001"
    )
    assert _RunFnCaller(context).Do({}, {}, {}) == {"pipeline": "taxi", "run_id": "2026-11-23T10:00:00.000001"}
    assert _RunFnCaller(BaseExecutor.Context(pipeline_info=pipeline_pb2.PipelineInfo(id="taxi"))).Do({}, {}, {}) == {
        "pipeline": "taxi"
    }
    assert _RunFnCaller().Do({}, {}, {}) == {}  # no context: nothing to group by
    assert pipeline_run_labels() == {}  # outside an executor
