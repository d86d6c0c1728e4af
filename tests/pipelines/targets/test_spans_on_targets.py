"""A `data.path` with `{SPAN}` compiled for the orchestrators: no span is fixed at compile time.

The compiled ExampleGen carries the pattern and no `range_config`, so TFX's driver takes the newest span
when each scheduled run starts. The kubeflow package is read back with kfp-pipeline-spec here and with the
kfp 2 SDK (`.venv-kfp`); the beam target's IR is TFX's own proto. Window and drift between spans that a
target's TFX launcher or compiler cannot resolve are refused by `validate`, naming the key and the fix.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from taxi_fixtures import REPO, taxi_spec, write_spec

from pipelines.load import load_spec
from pipelines.spec import SpecError
from pipelines.targets import compile_target

ROOT = "gs://my-bucket/pipelines/spans"
KFP_PYTHON = os.path.join(os.environ.get("KFP_VENV", os.path.join(REPO, ".venv-kfp")), "bin", "python")
# Run by the kfp 2 SDK: the ExampleGen task's constant parameters, as kfp reads the package.
KFP_READ = (
    "import json, sys\n"
    "from google.protobuf import json_format\n"
    "from kfp import components\n"
    "from kfp.client import client\n"
    "components.load_component_from_file(sys.argv[1])\n"
    "spec = client._extract_pipeline_yaml(sys.argv[1]).pipeline_spec\n"
    "task = json_format.MessageToDict(spec.root.dag.tasks['ExampleGen'])\n"
    "values = {k: list(v['runtimeValue']['constantValue'].values())[0]"
    " for k, v in task['inputs']['parameters'].items()}\n"
    "print(json.dumps({'parameters': values, 'executors': sorted(spec.deployment_spec['executors'])}))\n"
)


def span_spec(folder, taxi_sample_csv: str, root: str, **data) -> str:
    """A taxi spec reading `data/span-{SPAN}/part.csv` under `folder` (spans 1 and 2)."""
    header, *rows = open(taxi_sample_csv, encoding="utf-8").readlines()
    for number in (1, 2):
        (folder / "data" / f"span-{number}").mkdir(parents=True, exist_ok=True)
        (folder / "data" / f"span-{number}" / "part.csv").write_text(header + "".join(rows[number::2]))
    orchestrator = {"target": "kubeflow", "schedule": "0 3 * * *", "image": "registry.example/yaml-tfx:0.1.0"}
    spec = taxi_spec("data/span-{SPAN}/*.csv", root, pipeline={"name": "spans_orchestrated"})
    spec["orchestrator"] = orchestrator
    spec["data"].update(data)
    return write_spec(folder / "spec.yaml", spec)


@pytest.fixture(scope="module")
def kubeflow_package(taxi_sample_csv, tmp_path_factory):
    folder = tmp_path_factory.mktemp("spans_kubeflow")
    spec_file = span_spec(folder, taxi_sample_csv, ROOT)
    compile_target(load_spec(spec_file), "kubeflow", str(folder / "out"))
    return {"folder": folder, "package": str(folder / "out" / "pipeline.yaml")}


def _example_gen_parameters(package: str) -> dict:
    import yaml

    document = next(yaml.safe_load_all(open(package, encoding="utf-8")))
    parameters = document["root"]["dag"]["tasks"]["ExampleGen"]["inputs"]["parameters"]
    return {key: next(iter(value["runtimeValue"]["constantValue"].values())) for key, value in parameters.items()}


def test_the_kubeflow_package_carries_the_span_pattern_and_no_fixed_span(kubeflow_package):
    parameters = _example_gen_parameters(kubeflow_package["package"])
    assert parameters["input_base"] == str(kubeflow_package["folder"] / "data")
    splits = json.loads(parameters["input_config"])["splits"]
    assert splits == [{"name": "single_split", "pattern": "span-{SPAN}/*.csv"}]
    # No range: TFX's driver resolves the newest span when the run starts, not the span of compile time.
    assert "range_config" not in parameters or not json.loads(parameters["range_config"] or "{}")


@pytest.mark.skipif(not os.path.exists(KFP_PYTHON), reason=f"no kfp SDK venv at {KFP_PYTHON}: `make extras`")
def test_the_kfp_sdk_reads_the_pattern_and_the_file_based_driver(kubeflow_package):
    completed = subprocess.run(
        [KFP_PYTHON, "-c", KFP_READ, kubeflow_package["package"]], capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    read = json.loads(completed.stdout.strip().splitlines()[-1])
    assert json.loads(read["parameters"]["input_config"])["splits"][0]["pattern"] == "span-{SPAN}/*.csv"
    assert "range_config" not in read["parameters"]
    # TFX's ExampleGen driver for KFP v2 runs before the executor: it resolves the newest span.
    package_text = open(kubeflow_package["package"], encoding="utf-8").read()
    assert "tfx.orchestration.kubeflow.v2.file_based_example_gen.driver" in package_text
    assert "ExampleGen_executor" in read["executors"]


def test_the_beam_targets_ir_leaves_the_span_to_the_driver(taxi_sample_csv, tmp_path):
    spec_file = span_spec(tmp_path, taxi_sample_csv, str(tmp_path / "run"), window=2)
    (path,) = compile_target(load_spec(spec_file, target="beam"), "beam", str(tmp_path / "out")).files
    ir = json.load(open(path, encoding="utf-8"))
    example_gen = next(n["pipelineNode"] for n in ir["nodes"] if n["pipelineNode"]["nodeInfo"]["id"] == "ExampleGen")
    parameters = example_gen["parameters"]["parameters"]
    assert "span-{SPAN}/*.csv" in parameters["input_config"]["fieldValue"]["stringValue"]
    assert "range_config" not in parameters
    # The window's resolver: Transform reads ExampleGen's Examples of every run, through TFX's rolling range.
    transform = next(n["pipelineNode"] for n in ir["nodes"] if n["pipelineNode"]["nodeInfo"]["id"] == "Transform")
    (graph,) = transform["inputs"]["inputGraphs"].values()
    latest = next(
        node["opNode"] for node in graph["nodes"].values() if node.get("opNode", {}).get("opType") == "tfx.LatestSpan"
    )
    assert latest["kwargs"]["n"]["value"]["fieldValue"]["intValue"] == "2"


@pytest.mark.parametrize(
    ("target", "data", "key", "words"),
    [
        ("kubeflow", {"window": 2}, "data.window", "Expected `window: 1` for `orchestrator.target: kubeflow`"),
        ("airflow", {"window": 3}, "data.window", "Received: window=3. Remove `window`, or run the spec with the beam"),
        (
            "kubeflow",
            {"checks": {"drift": 0.3}},
            "data.checks.drift",
            "Expected no `drift` for `orchestrator.target: kubeflow`. Received: drift=0.3.",
        ),
    ],
)
def test_a_window_or_span_drift_the_target_cannot_resolve_is_refused(
    taxi_sample_csv, tmp_path, target, data, key, words
):
    root = ROOT if target == "kubeflow" else str(tmp_path / "run")
    spec_file = span_spec(tmp_path, taxi_sample_csv, root, **data)
    with pytest.raises(SpecError) as raised:
        load_spec(spec_file, target=target)
    (problem,) = raised.value.problems
    assert problem.path == key and words in str(problem)


def test_the_airflow_and_beam_targets_take_drift_between_spans(taxi_sample_csv, tmp_path):
    spec_file = span_spec(tmp_path, taxi_sample_csv, str(tmp_path / "run"), checks={"drift": 0.3})
    assert load_spec(spec_file, target="airflow").spans[-1].number == 2
    assert load_spec(spec_file, target="beam").spec.data.checks.drift == 0.3
