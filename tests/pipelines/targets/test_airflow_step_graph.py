"""The airflow target builds its DAG from the step graph (no TFX at parse time): the same tasks, order
and dependencies as the TFX pipeline the tasks compile and run (contract test, no Airflow needed).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from taxi_fixtures import REPO, taxi_spec, write_spec

from pipelines.compiler import compile_pipeline
from pipelines.load import load_spec
from pipelines.targets.airflow import step_dependencies
from pipelines.targets.airflow_tasks import ComponentNotInPipeline, run_component

DROP_SHORT_TRIPS = {
    "name": "DropShortTrips",
    "uses": "row_filter",
    "inputs": {"examples": "ExampleGen.examples"},
    "parameters": {"expression": "trip_miles > 1.0"},
    "replaces": "ExampleGen.examples",
}

VARIANTS = {
    "built-in steps": {},
    "materialized transform": {"transform": {"materialize": True}},
    "deploy step": {"deploy": {"enabled": True}},
    "custom step replacing ExampleGen's output": {"steps": [DROP_SHORT_TRIPS]},
}


@pytest.mark.parametrize("sections", VARIANTS.values(), ids=VARIANTS.keys())
def test_step_dependencies_match_the_compiled_tfx_pipeline(sections, taxi_sample_csv, tmp_path):
    resolved = load_spec(write_spec(tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, str(tmp_path), **sections)))

    dependencies = step_dependencies(resolved)
    compiled = compile_pipeline(resolved)

    assert list(dependencies) == [component.id for component in compiled.components]
    assert dependencies == {c.id: {u.id for u in c.upstream_nodes} for c in compiled.components}


def test_transform_waits_for_the_data_gate(taxi_sample_csv, tmp_path):
    resolved = load_spec(write_spec(tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, str(tmp_path))))

    assert "DataGate" in step_dependencies(resolved)["Transform"]


def test_a_task_whose_component_left_the_spec_fails_naming_the_fix(taxi_sample_csv, tmp_path):
    # The DAG was parsed with a custom step that the spec no longer has.
    spec_file = write_spec(tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, str(tmp_path)))

    with pytest.raises(ComponentNotInPipeline) as raised:
        run_component(spec_file, "DropShortTrips", ti=None)

    message = str(raised.value)
    assert message.startswith(f"task `DropShortTrips` has no component in the pipeline compiled from {spec_file}.")
    assert "Expected one of: ExampleGen, StatisticsGen, SchemaGen," in message
    assert message.endswith("Let Airflow re-parse the DAG folder (`airflow dags reserialize`), then trigger a new run.")


def test_step_dependencies_import_no_tensorflow_or_tfx(taxi_sample_csv, tmp_path):
    spec_file = write_spec(tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, str(tmp_path)))
    probe = (
        "import json, sys\n"
        "from pipelines.load import load_spec\n"
        "from pipelines.targets.airflow import step_dependencies\n"
        f"order = list(step_dependencies(load_spec({spec_file!r})))\n"
        "print(json.dumps({'order': order, 'heavy': [m for m in ('tensorflow', 'tfx', 'apache_beam') if m in sys.modules]}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith('"heavy": []}'), done.stdout
    assert '"order": ["ExampleGen", "StatisticsGen"' in done.stdout
