"""`label.classes` and `label.positive_class` in the spec, and the classes the compiler finds in the data."""

from __future__ import annotations

import pytest

from components.transform.label_classes import LabelClassError, order_classes
from pipelines.compiler import transform_config
from pipelines.load import load_spec
from pipelines.spec import SpecError

SPECIES = ["Adelie", "Gentoo", "Chinstrap"]


def _rows(kinds: list[str], count: int = 30) -> list[list[str]]:
    return [[f"{5 + i * 0.75:.2f}", "1.0", f"{0.5 + i * 0.3:.1f}", kinds[i % len(kinds)]] for i in range(count)]


@pytest.fixture
def species_spec(write_csv, make_spec):
    """A spec whose label column `company` holds `kinds`; `label` settings are merged in."""

    def make(kinds: list[str], **label):
        write_csv("taxi.csv", rows=_rows(kinds))
        settings = {"name": "kind", "column": "company", "task": "classification", **label}
        features = {"fare": {"transform": "zscore"}, "trip_miles": {"transform": "zscore"}}
        return make_spec(
            {
                "features": features,
                "model": {"type": "dnn"},
                "label": settings,
                "evaluation": {"metrics": ["example_count"]},
            }
        )

    return make


@pytest.mark.parametrize(
    "kinds, label, classes",
    [
        (SPECIES, {}, ["Adelie", "Chinstrap", "Gentoo"]),
        (SPECIES, {"classes": ["Gentoo", "Adelie", "Chinstrap"]}, ["Gentoo", "Adelie", "Chinstrap"]),
        (["yes", "no"], {}, ["no", "yes"]),
        (["Yes", "No"], {}, ["No", "Yes"]),
        (["true", "false"], {}, ["false", "true"]),
        (["spam", "ham"], {}, ["ham", "spam"]),
        (["spam", "ham"], {"positive_class": "ham"}, ["spam", "ham"]),
        (["3", "1", "2", "10"], {}, ["1", "2", "3", "10"]),
        (["1.0", "0.0"], {}, ["0", "1"]),
        (["2", "1"], {"classes": [2, 1]}, ["2", "1"]),
        (["b", "a"], {"classes": ["a", "b"], "positive_class": "a"}, ["b", "a"]),
    ],
    ids=[
        "text_sorted",
        "declared_order",
        "yes_positive",
        "Yes_positive",
        "true_positive",
        "second_sorted_positive",
        "declared_positive",
        "integers_numeric_order",
        "integral_floats_as_digits",
        "declared_integers",
        "declared_list_and_positive",
    ],
)
def test_the_compiler_orders_the_classes_found_or_declared(species_spec, tmp_path, kinds, label, classes):
    config = transform_config(load_spec(str(species_spec(kinds, **label)), cwd=str(tmp_path)))

    assert config.classes == classes
    assert config.positive_class == (classes[1] if len(classes) == 2 else None)


def test_an_expression_label_has_the_classes_0_and_1(make_spec, tmp_path):
    config = transform_config(load_spec(str(make_spec()), cwd=str(tmp_path)))

    assert config.classes == ["0", "1"]
    assert config.positive_class == "1"


def test_a_regression_label_has_no_classes(make_spec, tmp_path):
    overrides = {"label": {"name": "t", "column": "tips", "task": "regression"}, "evaluation": {"metrics": []}}
    config = transform_config(load_spec(str(make_spec(overrides)), cwd=str(tmp_path)))

    assert config.classes is None
    assert config.num_classes == 0


@pytest.mark.parametrize(
    "kinds, label, path, message",
    [
        (
            SPECIES,
            {"classes": ["Adelie", "Gentoo"]},
            "label.classes",
            "the label column holds 'Chinstrap', not in `label.classes` ['Adelie', 'Gentoo']. Expected only declared "
            "classes. Add them to `label.classes`, or remove those rows from the data.",
        ),
        (SPECIES, {"positive_class": "Adelie"}, "label.positive_class", "`label.positive_class` is for two classes."),
        (["yes", "no"], {"positive_class": "maybe"}, "label.positive_class", "`label.positive_class` 'maybe' is not"),
        (["1.5", "2"], {}, "label.column", "class `1.5` has a fractional part."),
    ],
    ids=["undeclared_class_in_data", "positive_of_three", "unknown_positive", "fractional"],
)
def test_classes_that_cannot_work_are_spec_problems_from_the_compiler(
    species_spec, tmp_path, kinds, label, path, message
):
    spec_file = species_spec(kinds, **label)
    resolved = load_spec(str(spec_file), cwd=str(tmp_path))

    with pytest.raises(SpecError) as caught:
        transform_config(resolved)

    (problem,) = caught.value.problems
    assert (problem.path, problem.file) == (path, str(spec_file))
    assert message in problem.message


@pytest.mark.parametrize(
    "label, message",
    [
        ({"classes": ["a", "a", "b"]}, "`label.classes` repeats 'a'. Expected each class once."),
        ({"classes": ["a"]}, "`label.classes` has 1 class(es)"),
        ({"classes": ["yes", False]}, "expected a string or a whole number. Received: `false`"),
        ({"classes": ["a", "b", "c"], "positive_class": "b"}, "`label.positive_class` is for two classes."),
        ({"classes": ["a", "b"], "positive_class": "c"}, "`label.positive_class` 'c' is not a class."),
        ({"task": "regression", "classes": ["a", "b"]}, "`classes` and `positive_class` are for classification."),
        (
            {"column": None, "expression": "fare > 1", "positive_class": 1},
            "an `expression` label has the classes 0 and 1",
        ),
    ],
    ids=["repeat", "one", "booleans", "positive_of_three", "unknown_positive", "regression", "expression"],
)
def test_bad_declared_classes_are_spec_errors_on_the_label(species_spec, spec_problems, label, message):
    problems = spec_problems(species_spec(SPECIES, **label))

    assert any(message in problem.message and problem.path.startswith("label") for problem in problems), problems


def test_order_classes_without_data_defaults_to_0_and_1():
    assert order_classes() == ["0", "1"]


def test_order_classes_refuses_a_single_class_found():
    with pytest.raises(
        LabelClassError, match=r"the label column has 1 class\(es\) \('Adelie'\). Expected at least two"
    ):
        order_classes(["Adelie"])


def test_classes_are_found_in_tfrecord_data_too(tmp_path, make_spec):
    import tensorflow as tf

    def example(fare: float, kind) -> bytes:
        value = (
            tf.train.Feature(bytes_list=tf.train.BytesList(value=[kind.encode()]))
            if isinstance(kind, str)
            else tf.train.Feature(int64_list=tf.train.Int64List(value=[kind]))
        )
        features = {"fare": tf.train.Feature(float_list=tf.train.FloatList(value=[fare])), "kind": value}
        return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()

    for name, kinds, classes in [("text", ["b", "c", "a"], ["a", "b", "c"]), ("ints", [2, 10, 1], ["1", "2", "10"])]:
        with tf.io.TFRecordWriter(str(tmp_path / f"{name}.tfrecord")) as writer:
            for i in range(12):
                writer.write(example(float(i), kinds[i % 3]))
        spec_file = make_spec(
            {
                "data": {"path": f"{name}.tfrecord", "format": "tfrecord"},
                "features": {"fare": {"transform": "zscore"}},
                "model": {"type": "dnn"},
                "label": {"name": "k", "column": "kind"},
                "evaluation": {"metrics": ["example_count"]},
            },
            file_name=f"{name}.yaml",
        )

        assert transform_config(load_spec(str(spec_file), cwd=str(tmp_path))).classes == classes
