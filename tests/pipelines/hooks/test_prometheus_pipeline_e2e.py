"""One real pipeline run pushing to a real Pushgateway: the hook's and the trainer's groups share the run."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families
from pushgateway_process import groups, running_pushgateway, scrape
from scaffold_fixtures import run_pipelines_cli
from taxi_fixtures import taxi_spec, write_spec

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def pushed(taxi_sample_csv, tmp_path_factory):
    """(groups, /metrics page) of a Pushgateway after one run of the taxi sample with both exporters on."""
    root = tmp_path_factory.mktemp("prometheus_e2e")
    with running_pushgateway() as url:
        spec = taxi_spec(
            taxi_sample_csv, str(root / "run"), hooks=[{"uses": "prometheus", "parameters": {"pushgateway_url": url}}]
        )
        spec["training"].update(train_steps=50, eval_steps=5, batch_size=64, pushgateway_url=url)
        completed = run_pipelines_cli("run", write_spec(root / "spec.yaml", spec))
        assert completed.returncode == 0, completed.stdout + completed.stderr
        return groups(url), scrape(url)


def test_the_hook_and_the_trainer_push_one_group_each_for_the_same_run(pushed):
    found, _ = pushed
    labels = sorted((g["labels"]["job"], g["labels"]["pipeline"], g["labels"].get("run_id")) for g in found)
    assert [job for job, _, _ in labels] == ["trainer", "yaml_tfx"], labels
    (_, pipeline, run_id), (_, pipeline_again, run_id_again) = labels
    assert pipeline == pipeline_again == "chicago_taxi"
    assert run_id and run_id == run_id_again  # the TFX execution's run id is the runner's


def test_the_trainer_counted_every_step_and_example(pushed):
    _, page = pushed
    values = {
        sample.name: sample.value
        for family in text_string_to_metric_families(page)
        for sample in family.samples
        if sample.labels.get("job") == "trainer"
    }
    assert values["trainer_steps_total"] == 50
    assert values["trainer_examples_total"] == 50 * 64
    assert values["trainer_examples_per_second"] > 0
