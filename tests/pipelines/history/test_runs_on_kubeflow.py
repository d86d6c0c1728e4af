"""`runs SPEC --metadata HOST:PORT`: the runs Kubeflow Pipelines ran, read from the cluster's ML Metadata.

No cluster here: `kfp_metadata.MetadataService` serves ML Metadata's own gRPC service from a real store, and
the runs in it are recorded from the spec's compiled Kubeflow package the way KFP's v2 launcher records them
(task names, schema titles, TFX's runtime-artifact metadata as doubles, a cache hit as CACHED). The CLI
reads it through ml_metadata's gRPC client, in a fresh process, as a user would after a port-forward.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml
from kfp_metadata import MetadataService, record_kfp_run, sqlite_store
from ports import free_port
from scaffold_fixtures import run_pipelines_cli
from taxi_fixtures import taxi_spec, write_spec

from pipelines.load import load_spec
from pipelines.targets import compile_target

PIPELINE = "spans-on-kubeflow"  # `spans_on_kubeflow` as the kubeflow target names it


def cli(*args: str) -> subprocess.CompletedProcess:
    return run_pipelines_cli("runs", *args, timeout=300)


def _spec(folder, taxi_sample_csv: str, name: str) -> str:
    header, *rows = open(taxi_sample_csv, encoding="utf-8").readlines()
    (folder / "data" / "span-1").mkdir(parents=True, exist_ok=True)
    (folder / "data" / "span-1" / "part.csv").write_text(header + "".join(rows))
    spec = taxi_spec("data/span-{SPAN}/*.csv", "gs://bucket/pipelines", pipeline={"name": name})
    spec["orchestrator"] = {"target": "kubeflow", "schedule": "0 3 * * *", "image": "registry.example/yaml-tfx:0.1"}
    return write_spec(folder / f"{name}.yaml", spec)


def _tfx_outputs(folder, span: int, blessed: bool, version: str | None) -> dict:
    """The TFX artifacts a run's ExampleGen, Evaluator and Pusher wrote (what TFX's entrypoint hands KFP)."""
    from tfx.types import standard_artifacts

    examples = standard_artifacts.Examples()
    examples.uri, examples.span, examples.split_names = f"gs://bucket/examples/{span}", span, '["train", "eval"]'
    blessing = standard_artifacts.ModelBlessing()
    blessing.uri = str(folder / f"blessing-{span}-{blessed}")
    os.makedirs(blessing.uri, exist_ok=True)
    with open(os.path.join(blessing.uri, "verdict.json"), "w", encoding="utf-8") as handle:
        json.dump({"metrics": {"binary_accuracy": round(0.8 + span / 100, 2)}, "gated": ["binary_accuracy"]}, handle)
    blessing.set_int_custom_property("blessed", int(blessed))
    pushed = standard_artifacts.PushedModel()
    pushed.uri = f"gs://bucket/pushed/{span}"
    pushed.set_int_custom_property("pushed", int(version is not None))
    if version:
        pushed.set_string_custom_property("pushed_version", version)
        pushed.set_string_custom_property("pushed_destination", f"gs://bucket/serving/{version}")
    return {"ExampleGen.examples": examples, "Evaluator.blessing": blessing, "Pusher.pushed_model": pushed}


@pytest.fixture(scope="module")
def cluster(taxi_sample_csv, tmp_path_factory):
    folder = tmp_path_factory.mktemp("kfp_cluster")
    spec_file = _spec(folder, taxi_sample_csv, "spans_on_kubeflow")
    compile_target(load_spec(spec_file), "kubeflow", str(folder / "out"))
    package = next(yaml.safe_load_all(open(folder / "out" / "pipeline.yaml", encoding="utf-8")))
    assert package["pipelineInfo"]["name"] == PIPELINE
    path = str(folder / "cluster.sqlite")
    with MetadataService(path) as service:
        store = sqlite_store(path)
        ids = ["c3a1f0e2-run-of-span-1", "0b7d9e41-run-of-span-2", "a9e8d7c6-no-new-span"]  # not in time order
        first = record_kfp_run(store, package, ids[0], _tfx_outputs(folder, 1, True, "1795940001"))
        second = record_kfp_run(store, package, ids[1], _tfx_outputs(folder, 2, True, "1795940002"))
        # the next scheduled run finds no new span: KFP's cache hit on ExampleGen, a model that is not better
        outputs = _tfx_outputs(folder, 2, False, None)
        del outputs["ExampleGen.examples"]
        record_kfp_run(store, package, ids[2], outputs, cached={"ExampleGen": second["ExampleGen"]})
        other = dict(package, pipelineInfo={"name": "another-pipeline"})
        record_kfp_run(store, other, "ffff0000-another-pipeline", _tfx_outputs(folder, 9, True, "1795949999"))
        assert first["ExampleGen"]["examples"].custom_properties["span"].double_value == 1.0  # KFP's number
        yield {"spec": spec_file, "address": f"127.0.0.1:{service.port}", "ids": ids, "service": service}


def test_the_runs_are_the_pipelines_kubeflow_runs_newest_first_with_spans_blessing_and_push(cluster):
    completed = cli(cluster["spec"], "--metadata", cluster["address"], "--json")
    assert completed.returncode == 0, completed.stderr
    runs = json.loads(completed.stdout)
    assert [run["run_id"] for run in runs] == cluster["ids"][::-1]  # another-pipeline's run is not listed
    assert [(run["ingested_spans"], run["trained_spans"]) for run in runs] == [([2], [2]), ([2], [2]), ([1], [1])]
    assert [run["summary"].get("blessed") for run in runs] == [False, True, True]
    assert [run["pushed_version"] for run in runs] == [None, "1795940002", "1795940001"]
    assert runs[1]["summary"]["metrics"] == {"binary_accuracy": 0.82}  # verdict.json beside the blessing
    assert {run["pipeline"] for run in runs} == {PIPELINE}
    first = {c["component_id"]: c["status"] for c in runs[0]["components"]}
    assert first["ExampleGen"] == "cached" and first["Trainer"] == "executed" and "" not in first
    assert "GetChildrenContextsByContext" in cluster["service"].servicer.calls  # narrowed to the pipeline


def test_the_table_and_one_run_in_detail_show_the_spans(cluster):
    table = cli(cluster["spec"], "--metadata", cluster["address"])
    assert table.returncode == 0, table.stderr
    header, *rows = table.stdout.splitlines()
    assert header.split()[:5] == ["RUN", "TOOK", "STATUS", "INGESTED", "TRAINED"]
    assert rows[0].startswith(cluster["ids"][2]) and "no" in rows[0].split() and rows[2].split()[3] == "1"
    show = cli(cluster["spec"], "--metadata", cluster["address"], "show", "-2")
    assert show.returncode == 0, show.stderr
    assert f"Run {cluster['ids'][1]} of {PIPELINE}: succeeded" in show.stdout
    assert "Spans: ingested 2; trained on 2" in show.stdout and "Blessed: yes" in show.stdout
    assert "Pushed: version 1795940002 at gs://bucket/serving/1795940002" in show.stdout
    assert f"not recorded in the cluster's ML Metadata ({cluster['address']})" in show.stdout
    assert "binary_accuracy" in show.stdout.split("Pushed:")[0]  # the blessed models' metrics across spans


def test_diff_of_two_kubeflow_runs_names_what_changed(cluster):
    diff = cli(cluster["spec"], "--metadata", cluster["address"], "diff", "-2", "-1")
    assert diff.returncode == 0, diff.stderr
    assert "Blessed: yes -> no" in diff.stdout and "Pushed version: 1795940002 -> -" in diff.stdout


def test_a_pipeline_the_cluster_never_ran_is_named_with_those_it_did(cluster, taxi_sample_csv, tmp_path):
    spec = _spec(tmp_path, taxi_sample_csv, "never_submitted")
    completed = cli(spec, "--metadata", cluster["address"])
    assert completed.returncode == 2
    assert "holds no runs of pipeline 'never-submitted'" in completed.stderr
    assert "Received pipelines: another-pipeline, spans-on-kubeflow" in completed.stderr
    assert "Traceback" not in completed.stderr


@pytest.mark.parametrize(
    "address, expected",
    [
        ("localhost", "expected HOST:PORT of the cluster's ML Metadata gRPC service"),
        ("127.0.0.1:99999", "expected HOST:PORT"),
        (None, "did not answer"),  # a free port: nothing listens
    ],
)
def test_an_address_that_is_not_a_metadata_service_is_one_line(cluster, address, expected):
    completed = cli(cluster["spec"], "--metadata", address or f"127.0.0.1:{free_port()}")
    assert completed.returncode == 2 and expected in completed.stderr, completed.stderr
    assert "Traceback" not in completed.stderr and "kubectl port-forward" in completed.stderr
