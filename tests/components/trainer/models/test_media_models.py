"""`image_classifier` and `text_classifier`: they build from the feature table, freeze and augment as declared, learn."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from components.trainer.models.model_builder import build_model, check_head
from components.trainer.models.text_classifier.builder import MaskedMean, TransformerBlock
from components.trainer.run_fn import compile_model
from components.transform.config import TransformConfig


def _image_config(size=(32, 32), channels=3, classes=("a", "b", "c")):
    feature = {"transform": "image", "image_size": list(size), "channels": channels}
    return TransformConfig(
        features={"photo": feature},
        label_name="kind",
        task="classification",
        label_column="kind",
        classes=list(classes),
    )


TEXT_CONFIG = TransformConfig(
    features={"review": {"transform": "text", "sequence_length": 6, "top_k": 20, "oov_buckets": 1}},
    label_name="good",
    task="classification",
    label_column="good",
    classes=["no", "yes"],
)


@pytest.mark.parametrize("backbone", ["MobileNetV2", "EfficientNetB0", "ResNet50"])
def test_each_backbone_builds_over_the_declared_image_size(backbone):
    model = build_model(_image_config(), {"type": "image_classifier", "backbone": backbone, "hidden_units": [8]}, {})
    check_head(model, _image_config())
    assert model.input_shape == {"photo_xf": (None, 32, 32, 3)}
    assert model.output_shape == (None, 3)
    images = np.random.default_rng(0).uniform(0, 255, (2, 32, 32, 3)).astype("float32")
    scores = model.predict({"photo_xf": images}, verbose=0)
    np.testing.assert_allclose(scores.sum(axis=1), [1.0, 1.0], atol=1e-5)


def test_frozen_layers_freeze_the_first_backbone_layers_and_all_freezes_the_backbone():
    config = _image_config()
    some = build_model(config, {"type": "image_classifier", "frozen_layers": 10, "hidden_units": []}, {})
    backbone = next(layer for layer in some.layers if isinstance(layer, tf.keras.Model))
    assert [layer.trainable for layer in backbone.layers[:10]] == [False] * 10
    assert any(layer.trainable for layer in backbone.layers[10:] if layer.weights)
    every = build_model(config, {"type": "image_classifier", "frozen_layers": "all", "hidden_units": []}, {})
    # Only the head's kernel and bias train.
    assert len(every.trainable_weights) == 2


def test_augmentation_changes_images_in_training_only():
    config = _image_config()
    model = build_model(config, {"type": "image_classifier", "augment": ["flip", "contrast"], "hidden_units": []}, {})
    images = {"photo_xf": np.random.default_rng(1).uniform(0, 255, (4, 32, 32, 3)).astype("float32")}
    np.testing.assert_allclose(model(images, training=False), model(images, training=False))
    assert not np.allclose(model(images, training=True), model(images, training=False))
    names = [layer.name for layer in model.layers]
    assert names.index("augment_flip") < names.index("augment_contrast") < names.index("normalise")


def test_a_grey_image_builds_with_one_channel():
    model = build_model(_image_config(channels=1), {"type": "image_classifier", "hidden_units": []}, {})
    assert model.input_shape == {"photo_xf": (None, 32, 32, 1)}


@pytest.mark.parametrize(
    "model, config, message",
    [
        ({"type": "image_classifier"}, _image_config(size=(16, 16)), "at least 32x32 pixels"),
        ({"type": "image_classifier", "weights": "/nonexistent/w.h5"}, _image_config(), "is not a file"),
        ({"type": "dnn"}, _image_config(), "takes table features only"),
        ({"type": "text_classifier"}, _image_config(), "exactly one `transform: text`"),
    ],
    ids=["too_small", "missing_weights", "dnn_over_an_image", "text_model_without_text"],
)
def test_misfit_models_are_refused_naming_the_fix(model, config, message):
    with pytest.raises(ValueError, match=message):
        build_model(config, model, {})


def _texts(n=256, seed=0):
    """Rows of 6 word ids (0 pads); the label is whether word 7 appears."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, 22, size=(n, 6))
    lengths = rng.integers(1, 7, size=n)
    ids[np.arange(6)[None, :] >= lengths[:, None]] = 0
    label = (ids == 7).any(axis=1).astype("float32").reshape(-1, 1)
    return ids, label


@pytest.mark.parametrize("encoder", ["transformer", "bag_of_embeddings"])
def test_text_classifier_learns_which_word_decides(encoder):
    tf.keras.utils.set_random_seed(0)
    model = build_model(
        TEXT_CONFIG, {"type": "text_classifier", "encoder": encoder, "embedding_dim": 16, "hidden_units": [8]}, {}
    )
    assert model.input_shape == {"review_xf": (None, 6)}
    compile_model(model, TEXT_CONFIG, {"learning_rate": 0.01, "steps_per_execution": 8}, ["binary_accuracy"])
    ids, label = _texts()
    history = model.fit({"review_xf": ids}, label, epochs=30, batch_size=32, verbose=0)
    assert history.history["binary_accuracy"][-1] > 0.9


def test_masked_mean_averages_only_the_words():
    sequence = tf.constant([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    mean = MaskedMean()(sequence, mask=tf.constant([[True, True, False]]))
    np.testing.assert_allclose(mean, [[2.0, 3.0]])
    np.testing.assert_allclose(MaskedMean()(sequence, mask=tf.constant([[False, False, False]])), [[0.0, 0.0]])


def test_attention_ignores_what_stands_at_padding_positions():
    tf.keras.utils.set_random_seed(0)
    block = TransformerBlock(width=4, heads=2)
    mask = tf.constant([[True, True, False]])
    words = np.random.default_rng(0).normal(size=(1, 2, 4)).astype("float32")
    first = block(tf.constant(np.concatenate([words, np.zeros((1, 1, 4), "float32")], axis=1)), mask=mask)
    second = block(tf.constant(np.concatenate([words, np.full((1, 1, 4), 50.0, "float32")], axis=1)), mask=mask)
    np.testing.assert_allclose(first[:, :2], second[:, :2], atol=1e-5)
    unmasked = block(
        tf.constant(np.concatenate([words, np.full((1, 1, 4), 50.0, "float32")], axis=1)),
        mask=tf.constant([[True, True, True]]),
    )
    assert not np.allclose(first[:, :2], unmasked[:, :2], atol=1e-3)


def test_a_backbone_from_random_weights_gets_fast_batch_norm_statistics():
    from components.trainer.models.image_classifier.builder import SCRATCH_BN_MOMENTUM

    model = build_model(_image_config(), {"type": "image_classifier", "hidden_units": []}, {})
    backbone = next(layer for layer in model.layers if isinstance(layer, tf.keras.Model))
    momenta = {layer.momentum for layer in backbone.layers if isinstance(layer, tf.keras.layers.BatchNormalization)}
    assert momenta == {SCRATCH_BN_MOMENTUM}


def test_weights_from_a_local_file_are_loaded_and_keep_their_batch_norm(tmp_path):
    tf.keras.utils.set_random_seed(3)
    source = tf.keras.applications.MobileNetV2(include_top=False, weights=None, input_shape=(32, 32, 3), pooling="avg")
    path = str(tmp_path / "mobilenet_v2_no_top.h5")
    source.save_weights(path)
    tf.keras.utils.set_random_seed(4)  # a different random start: only the file can make them equal
    model = build_model(_image_config(), {"type": "image_classifier", "weights": path, "hidden_units": []}, {})
    backbone = next(layer for layer in model.layers if isinstance(layer, tf.keras.Model))
    for loaded, saved in zip(backbone.weights, source.weights):
        np.testing.assert_array_equal(loaded.numpy(), saved.numpy())
    momenta = {layer.momentum for layer in backbone.layers if isinstance(layer, tf.keras.layers.BatchNormalization)}
    assert momenta == {0.999}


@pytest.mark.parametrize("media, model_type", [("image", "image_classifier"), ("text", "text_classifier")])
def test_a_media_model_without_its_one_input_names_the_model_and_what_it_found(media, model_type):
    from components.trainer.models.model_inputs import ModelInput, single_media_input

    table = ModelInput(name="fare_xf", dtype=tf.float32, column="fare")
    with pytest.raises(ValueError, match=rf"`model.type: {model_type}` takes exactly one `transform: {media}` "):
        single_media_input([table], media, model_type)
