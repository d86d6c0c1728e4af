"""The serving outputs of a classification model: class names and scores, as TF Serving's Classify gives them."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from components.trainer.saved_model.class_outputs import classify_outputs, predict_outputs, regression_outputs


def _names(array) -> list:
    return [[c.decode() for c in row] if isinstance(row, np.ndarray) else row.decode() for row in array.numpy()]


def test_a_binary_model_scores_both_classes_and_keeps_probability():
    outputs = predict_outputs(tf.constant([[0.9], [0.2], [0.5]]), ["no", "yes"])

    assert sorted(outputs) == ["classes", "label", "probability", "scores"]
    np.testing.assert_allclose(outputs["scores"].numpy(), [[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]], rtol=1e-6)
    np.testing.assert_allclose(outputs["probability"].numpy(), [0.9, 0.2, 0.5], rtol=1e-6)
    assert _names(outputs["classes"]) == [["no", "yes"]] * 3
    assert _names(outputs["label"]) == ["yes", "no", "no"]  # a tie is not the positive class


def test_a_multi_class_model_names_the_highest_score():
    scores = [[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.2, 0.5, 0.3]]
    outputs = predict_outputs(tf.constant(scores), ["Adelie", "Chinstrap", "Gentoo"])

    assert sorted(outputs) == ["classes", "label", "scores"]
    np.testing.assert_allclose(outputs["scores"].numpy(), scores)
    assert _names(outputs["label"]) == ["Adelie", "Gentoo", "Chinstrap"]
    assert _names(outputs["classes"]) == [["Adelie", "Chinstrap", "Gentoo"]] * 3


@pytest.mark.parametrize(
    "prediction, names, scores",
    [
        ([[0.25]], ["0", "1"], [[0.75, 0.25]]),
        ([[0.1, 0.6, 0.3]], ["3", "1", "2"], [[0.1, 0.6, 0.3]]),
    ],
    ids=["binary", "three_classes"],
)
def test_classify_returns_class_names_and_scores(prediction, names, scores):
    outputs = classify_outputs(tf.constant(prediction), names)

    assert sorted(outputs) == ["classes", "scores"]
    assert _names(outputs["classes"]) == [names]
    np.testing.assert_allclose(outputs["scores"].numpy(), scores, rtol=1e-6)


def test_an_empty_batch_gives_empty_outputs():
    outputs = predict_outputs(tf.zeros([0, 3]), ["a", "b", "c"])

    assert outputs["classes"].shape == (0, 3)
    assert outputs["label"].shape == (0,)


def test_regression_outputs_a_flat_prediction():
    outputs = regression_outputs(tf.constant([[1.5], [2.0]]))

    assert list(outputs) == ["prediction"]
    np.testing.assert_allclose(outputs["prediction"].numpy(), [1.5, 2.0])
