"""End to end: text and integer class labels, two classes and three, from Transform to the pushed model.

Each module-scoped run trains a real pipeline on a small CSV written here
(classes separable by the numeric column `x`), then the pushed SavedModel is
loaded and its `serving_default` (Predict) and `classification` (Classify)
signatures are asked about rows whose class is known: they answer with class
names and scores. The string multi-class run also deploys (the Deployer
compares served string outputs with the trained model's); the integer one
trains on materialized transformed examples. Two runs read files written
otherwise than with bare commas, as public datasets come: the yes/no run
`x; noise; kind` (`data.delimiter: ";"`, `skip_initial_space: true`), the
integer run a `.tsv` file (tabs, from the name).
"""

from __future__ import annotations

import csv
import os

import numpy as np
import pytest
import yaml

pytestmark = pytest.mark.e2e

# Centre of `x` for each class in index order; rows fall within +-0.3 of it.
CENTRES = (-2.0, 0.0, 2.0)


def _write_csv(
    path, names: list, rows: int = 300, seed: int = 0, delimiter: str = ","
) -> list[tuple[float, float, str]]:
    """Rows (x, noise, class) with `x` near the class's centre, cells between `delimiter`s (`; ` for a space
    after each `;`); returns them."""
    rng = np.random.default_rng(seed)
    data = []
    for i in range(rows):
        index = i % len(names)
        data.append(
            (round(float(CENTRES[index] + rng.uniform(-0.3, 0.3)), 4), round(float(rng.normal()), 4), names[index])
        )
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter=delimiter[0])
        writer.writerow(["x", "noise", "kind"])
        writer.writerows(data)
    if len(delimiter) > 1:  # no cell here needs quoting
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text.replace(delimiter[0], delimiter))
    return data


def _spec(
    root,
    data_path: str,
    name: str,
    label: dict,
    deploy: bool = False,
    materialize: bool = False,
    data: dict | None = None,
) -> dict:
    return {
        "pipeline": {"name": name, "root": str(root / "run")},
        "data": {"path": data_path, "splits": {"train": 3, "eval": 1}, **(data or {})},
        "features": {"x": {"transform": "zscore"}, "noise": {"transform": "zscore"}},
        "label": {"name": "kind_label", "column": "kind", "task": "classification", **label},
        "transform": {"materialize": materialize},
        "model": {"type": "dnn", "hidden_units": [16]},
        "training": {"train_steps": 300, "eval_steps": 5, "batch_size": 32, "learning_rate": 0.05},
        "evaluation": {"metrics": ["example_count"], "thresholds": {"example_count": {"min": 1}}},
        "deploy": {"enabled": deploy, "p99_budget_ms": 5000, "sample_rows": 8},
    }


def _run(
    tmp_path_factory, name: str, names: list, label: dict, file_name: str = "data.csv", delimiter: str = ",", **options
) -> dict:
    """Trains and pushes; `options` go to `_spec` (deploy, materialize)."""
    import pipelines

    root = tmp_path_factory.mktemp(name)
    data = _write_csv(root / file_name, names, delimiter=delimiter)
    declared = {"delimiter": ";", "skip_initial_space": True} if delimiter == "; " else {}  # a tab: the `.tsv` name
    spec_file = root / "spec.yaml"
    spec_file.write_text(
        yaml.safe_dump(_spec(root, str(root / file_name), name, label, data=declared, **options)),
        encoding="utf-8",
    )
    outcome = pipelines.run(pipelines.load(str(spec_file)))
    pushed = outcome.summary.pushed_path
    assert pushed and os.path.isdir(pushed), f"nothing was pushed: {outcome.summary}"
    return {"pushed": pushed, "data": data, "outcome": outcome}


def _example(x: float, noise: float) -> bytes:
    import tensorflow as tf

    feature = {
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[x])),
        "noise": tf.train.Feature(float_list=tf.train.FloatList(value=[noise])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _ask(pushed: str, rows) -> tuple[dict, dict]:
    """(serving_default outputs, classification outputs) as numpy, for `rows` of (x, noise, class)."""
    import tensorflow as tf

    model = tf.saved_model.load(pushed)
    examples = tf.constant([_example(x, noise) for x, noise, _ in rows])
    predict = {k: v.numpy() for k, v in model.signatures["serving_default"](examples=examples).items()}
    classify = {k: v.numpy() for k, v in model.signatures["classification"](inputs=examples).items()}
    return predict, classify


def _decoded(array) -> list:
    return [[c.decode() for c in row] if isinstance(row, np.ndarray) else row.decode() for row in array]


@pytest.fixture(scope="module")
def three_text_classes(tmp_path_factory):
    return _run(tmp_path_factory, "penguins", ["Adelie", "Chinstrap", "Gentoo"], {}, deploy=True)


@pytest.fixture(scope="module")
def yes_no(tmp_path_factory):
    return _run(tmp_path_factory, "answers", ["no", "yes"], {}, delimiter="; ")


@pytest.fixture(scope="module")
def three_integer_classes(tmp_path_factory):
    # The declared order (3, 1, 2) is the class index order; trained on materialized transformed examples.
    return _run(
        tmp_path_factory,
        "cultivars",
        [3, 1, 2],
        {"classes": [3, 1, 2]},
        materialize=True,
        file_name="data.tsv",
        delimiter="\t",
    )


def test_text_classes_are_predicted_by_name_with_scores(three_text_classes):
    rows = three_text_classes["data"][:30]
    predict, classify = _ask(three_text_classes["pushed"], rows)

    assert sorted(predict) == ["classes", "label", "scores"]
    assert predict["scores"].shape == (30, 3)
    np.testing.assert_allclose(predict["scores"].sum(axis=1), 1.0, rtol=1e-5)
    assert _decoded(predict["classes"]) == [["Adelie", "Chinstrap", "Gentoo"]] * 30
    assert _decoded(predict["label"]) == [kind for _, _, kind in rows]
    assert _decoded(classify["classes"]) == [["Adelie", "Chinstrap", "Gentoo"]] * 30
    np.testing.assert_allclose(classify["scores"], predict["scores"], rtol=1e-5)


def test_the_class_list_travels_with_the_pushed_model(three_text_classes):
    with open(os.path.join(three_text_classes["pushed"], "assets", "label_classes"), encoding="utf-8") as handle:
        assert handle.read().split() == ["Adelie", "Chinstrap", "Gentoo"]


def test_text_classes_are_deployed_after_the_served_outputs_match(three_text_classes):
    states = {c.component_id: c.status for c in three_text_classes["outcome"].components}
    assert states.get("Deployer") == "executed", states


def test_a_yes_no_label_scores_yes_as_the_positive_class(yes_no):
    rows = yes_no["data"][:20]
    predict, classify = _ask(yes_no["pushed"], rows)

    assert sorted(predict) == ["classes", "label", "probability", "scores"]
    assert _decoded(predict["classes"]) == [["no", "yes"]] * 20
    np.testing.assert_allclose(predict["probability"], predict["scores"][:, 1], rtol=1e-6)
    expected_yes = np.array([kind == "yes" for _, _, kind in rows])
    assert ((predict["probability"] > 0.5) == expected_yes).all()
    assert _decoded(predict["label"]) == [kind for _, _, kind in rows]
    assert _decoded(classify["classes"]) == [["no", "yes"]] * 20


def test_integer_classes_keep_the_declared_order(three_integer_classes):
    rows = three_integer_classes["data"][:30]
    predict, classify = _ask(three_integer_classes["pushed"], rows)

    assert _decoded(classify["classes"]) == [["3", "1", "2"]] * 30
    assert _decoded(predict["label"]) == [str(kind) for _, _, kind in rows]
    assert predict["scores"].argmax(axis=1).tolist() == [[3, 1, 2].index(kind) for _, _, kind in rows]
