"""Safe YAML reading with a line for every value, and duplicate keys as errors."""

from __future__ import annotations

import textwrap

import pytest
import yaml

from pipelines.spec import SpecError
from pipelines.spec.yaml_source import join_path, read_yaml

NESTED = textwrap.dedent(
    """\
    # a comment on line 1
    pipeline:
      name: taxi
    training:
      batch_size: 8
      seed: 3
    evaluation:
      metrics:
        - binary_accuracy
        - auc
      thresholds:
        auc: {min: 0.5}
    """
)


def _only_problem(text: str):
    with pytest.raises(SpecError) as caught:
        read_yaml(text, "spec.yaml")
    assert len(caught.value.problems) == 1
    return caught.value.problems[0]


def test_read_yaml_returns_plain_data():
    source = read_yaml(NESTED, "spec.yaml")

    assert source.file == "spec.yaml"
    assert source.data == {
        "pipeline": {"name": "taxi"},
        "training": {"batch_size": 8, "seed": 3},
        "evaluation": {"metrics": ["binary_accuracy", "auc"], "thresholds": {"auc": {"min": 0.5}}},
    }


@pytest.mark.parametrize(
    "path, line",
    [
        ("pipeline.name", 3),
        ("training.batch_size", 5),
        ("training.seed", 6),
        ("evaluation.metrics[0]", 9),
        ("evaluation.metrics[1]", 10),
        ("evaluation.thresholds.auc", 12),
        ("evaluation.thresholds.auc.min", 12),
    ],
)
def test_line_is_recorded_for_nested_keys_and_list_items(path, line):
    source = read_yaml(NESTED, "spec.yaml")

    assert source.lines[path] == line
    assert source.line_of(path) == line


def test_line_of_an_absent_path_falls_back_to_its_nearest_parent():
    source = read_yaml(NESTED, "spec.yaml")

    assert source.line_of("training.bach_size") == source.lines["training"]
    assert source.line_of("evaluation.metrics[7]") == source.lines["evaluation.metrics"]
    assert source.line_of("evaluation.thresholds.auc.max") == 12


def test_problem_carries_file_path_and_line():
    problem = read_yaml(NESTED, "spec.yaml").problem("training.seed", "too random.")

    assert (problem.path, problem.line, problem.file) == ("training.seed", 6, "spec.yaml")
    assert str(problem) == "spec.yaml:6: training.seed: too random."


def test_empty_document_reads_as_none():
    source = read_yaml("# only a comment\n", "spec.yaml")

    assert source.data is None
    assert source.line_of("pipeline") is None


def test_join_path_builds_yaml_paths():
    assert join_path("", "training") == "training"
    assert join_path("training", "batch_size") == "training.batch_size"
    assert join_path("evaluation.metrics", 2) == "evaluation.metrics[2]"


def test_duplicate_key_is_an_error_on_the_second_line():
    problem = _only_problem("training:\n  batch_size: 8\n  seed: 1\n  batch_size: 16\n")

    assert problem.path == "training.batch_size"
    assert problem.line == 4
    assert problem.file == "spec.yaml"
    assert "duplicate key `batch_size` (first given on line 2)" in problem.message
    assert "Keep only one of them" in problem.message


def test_duplicate_top_level_key_is_an_error():
    problem = _only_problem("pipeline: {name: a}\ndata: {path: x.csv}\npipeline: {name: b}\n")

    assert (problem.path, problem.line) == ("pipeline", 3)
    assert "duplicate key `pipeline` (first given on line 1)" in problem.message


def test_duplicate_section_names_the_line_of_the_first_key():
    problem = _only_problem("training:\n  batch_size: 8\ntraining:\n  seed: 2\n")

    assert problem.line == 3
    assert "first given on line 1" in problem.message


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("pipeline:\n  name: a\n  root: [unclosed\n", 4, "expected ',' or ']'"),
        ("pipeline:\n  name: a\n    root: b\n", 3, "mapping values are not allowed here"),
        ("pipeline:\n  name: 'open\n", 3, "found unexpected end of stream"),
        ("pipeline:\n\tname: a\n", 2, "found character '\\t' that cannot start any token"),
    ],
    ids=["unclosed-list", "bad-indent", "unclosed-quote", "tab"],
)
def test_invalid_yaml_names_the_line(text, line, fragment):
    problem = _only_problem(text)

    assert problem.line == line
    assert problem.path == ""
    assert problem.message.startswith("this is not valid YAML: ")
    assert fragment in problem.message
    assert problem.message.endswith("Fix the syntax at this line.")
    assert str(problem).startswith(f"spec.yaml:{line}: <root>: this is not valid YAML")


def test_python_tags_never_construct_objects(tmp_path):
    marker = tmp_path / "created-by-yaml"
    text = f"data: !!python/object/apply:builtins.open [{str(marker)!r}, 'w']\n"

    try:
        read_yaml(text, "spec.yaml")
    except Exception:  # noqa: BLE001 - rejecting the tag is fine; running it is not
        pass

    assert not marker.exists()


def test_python_tag_on_a_scalar_is_rejected():
    with pytest.raises((SpecError, yaml.YAMLError), match="python/object"):
        read_yaml("data: !!python/object:os.system echo\n", "spec.yaml")


@pytest.mark.parametrize(
    "text",
    [
        "pipeline: {name: a}\ndata: !!python/object:os.system echo\n",
        "pipeline: {name: a}\ndata: !!python/object/apply:os.system [echo]\n",
        "pipeline: {name: a}\ndata: !!python/object:collections.OrderedDict {path: x}\n",
    ],
    ids=["scalar", "sequence", "mapping"],
)
def test_python_tag_is_a_spec_error_naming_the_line(text):
    problem = _only_problem(text)

    assert (problem.path, problem.line) == ("data", 2)
    assert "python/object" in problem.message


def test_non_scalar_key_is_a_spec_error():
    problem = _only_problem("pipeline:\n  ? [a, b]\n  : 1\n")

    assert problem.line == 2
    assert "a mapping key must be a plain word" in problem.message
