"""The generated Airflow DAG file holds spec values only as Python literals.

Airflow executes every DAG file when it parses its folder, so a spec file name
with `\"\"\"` or a newline in it must not become code. Checked with `ast` on the
text `compile --target airflow` writes (no Airflow needed).
"""

from __future__ import annotations

import ast

import pytest
from taxi_fixtures import taxi_spec, write_spec

from pipelines.load import load_spec
from pipelines.targets.airflow import dag_file_text, write_dag_file

HOSTILE_FOLDERS = [
    'evil"""\nimport os\nos.system("touch pwned")\n"""',
    "evil'''\nraise SystemExit(3)\n'''",
    "line\\\nbreak",
    "unicode-é-\u2028-sep",
]


def _statements(text: str) -> list[ast.stmt]:
    return ast.parse(text).body


@pytest.mark.parametrize("folder", HOSTILE_FOLDERS)
def test_hostile_spec_path_stays_a_string_literal(folder, taxi_sample_csv, tmp_path):
    spec_dir = tmp_path / folder
    spec_dir.mkdir()
    spec_file = write_spec(spec_dir / "spec.yaml", taxi_spec(taxi_sample_csv, str(tmp_path / "run")))
    resolved = load_spec(spec_file)

    text = dag_file_text(resolved)
    body = _statements(text)

    # docstring, import, PIPELINE_NAME, SPEC_FILE, dag: nothing else runs.
    assert [type(node).__name__ for node in body] == ["Expr", "ImportFrom", "Assign", "Assign", "Assign"]
    assert isinstance(body[0].value, ast.Constant) and "SPEC_FILE" in body[0].value.value
    assigned = {node.targets[0].id: node.value for node in body[2:]}
    assert ast.literal_eval(assigned["SPEC_FILE"]) == resolved.spec_file
    assert ast.literal_eval(assigned["PIPELINE_NAME"]) == resolved.name
    call = assigned["dag"]
    assert isinstance(call, ast.Call) and call.func.id == "build_dag" and call.args[0].id == "SPEC_FILE"


def test_dag_file_is_written_under_the_pipeline_name(taxi_sample_csv, tmp_path):
    spec_file = write_spec(tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, str(tmp_path / "run")))
    resolved = load_spec(spec_file)

    (path,) = write_dag_file(resolved, str(tmp_path / "dags"))

    assert path.endswith(f"{resolved.name}_dag.py")
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == dag_file_text(resolved)
