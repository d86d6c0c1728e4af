"""Spec keys for images and texts: `transform: image|text`, the media models, and the learning-rate schedule."""

from __future__ import annotations

import pytest

from pipelines.load import load_spec
from pipelines.spec import SpecError


@pytest.mark.parametrize(
    "overrides, path, fragments",
    [
        (
            {"features.company": {"transform": "text"}},
            "features.company",
            ["needs `sequence_length`", "Example: `sequence_length: 128`"],
        ),
        (
            {"features.company": {"transform": "text", "sequence_length": 5000}},
            "features.company",
            ["(1 to 4096)", "sequence_length=5000"],
        ),
        (
            {"features.company": {"transform": "image"}},
            "features.company",
            ["needs `image_size: [height, width]`", "image_size=None"],
        ),
        (
            {"features.company": {"transform": "image", "image_size": [4, 32]}},
            "features.company",
            ["from 8 to 4096", "image_size=[4, 32]"],
        ),
        (
            {"features.company": {"transform": "image", "image_size": [32, 32], "channels": 4}},
            "features.company",
            ["`channels` must be 1 (grey) or 3 (RGB)", "channels=4"],
        ),
        (
            {"features.fare": {"transform": "zscore", "image_size": [32, 32]}},
            "features.fare",
            ["`image_size` is for `transform: image`", "Remove `image_size`"],
        ),
        (
            {"features.fare": {"transform": "zscore", "sequence_length": 8}},
            "features.fare",
            ["`sequence_length` is for `transform: text`"],
        ),
        (
            {"features.company": {"transform": "text", "sequence_length": 8, "impute": "mean"}},
            "features.company",
            ["takes no `impute` or `missing_indicator`", "empty sequence"],
        ),
        (
            {"features.company": {"transform": "text", "sequence_length": 8, "tokenizer": "word_piece"}},
            "features.company.tokenizer",
            ["expected one of `words`, `wordpiece`", "word_piece", "Did you mean `wordpiece`"],
        ),
        (
            {"features.company": {"transform": "text", "sequence_length": 8, "tokenizer": "wordpiece", "top_k": 500}},
            "features.company",
            ["learns at most `vocab_size` pieces", "top_k=500", "Use `vocab_size: 500` instead of `top_k`"],
        ),
        (
            {
                "features.company": {
                    "transform": "text",
                    "sequence_length": 8,
                    "tokenizer": "wordpiece",
                    "vocab_size": 5,
                }
            },
            "features.company",
            ["`vocab_size` must be from 10 to 1,000,000", "vocab_size=5", "Example: `vocab_size: 8000`"],
        ),
        (
            {
                "features.company": {
                    "transform": "text",
                    "sequence_length": 8,
                    "tokenizer": "wordpiece",
                    "oov_buckets": 3,
                }
            },
            "features.company",
            ["one `[UNK]` id", "oov_buckets=3", "Remove `oov_buckets`"],
        ),
        (
            {"features.company": {"transform": "text", "sequence_length": 8, "vocab_size": 500}},
            "features.company",
            ["`vocab_size` is for `tokenizer: wordpiece`", "Add `tokenizer: wordpiece`, or use `top_k`"],
        ),
        (
            {"features.fare": {"transform": "zscore", "tokenizer": "wordpiece"}},
            "features.fare",
            ["`tokenizer` is for `transform: text`", "Remove `tokenizer`"],
        ),
        (
            {"model.type": "image_classifier", "model.frozen_layers": -1},
            "model",
            ["`frozen_layers` must be 0 or more, or `all`"],
        ),
        ({"model.dropout": 1.0}, "model", ["`dropout` must be 0 or more and below 1"]),
        ({"model.type": "text_classifier", "model.num_heads": 0}, "model", ["`num_heads` must be at least 1"]),
        ({"training.warmup_steps": -1}, "training", ["`warmup_steps` must be 0 or more"]),
    ],
    ids=[
        "text-no-length",
        "text-too-long",
        "image-no-size",
        "image-too-small",
        "image-four-channels",
        "image-size-on-zscore",
        "length-on-zscore",
        "text-impute",
        "tokenizer-misspelt",
        "wordpiece-top-k",
        "wordpiece-tiny-vocab",
        "wordpiece-oov-buckets",
        "vocab-size-on-words",
        "tokenizer-on-zscore",
        "negative-frozen-layers",
        "dropout-one",
        "no-heads",
        "negative-warmup",
    ],
)
def test_bad_media_settings_name_the_key_and_the_fix(overrides, path, fragments, make_spec):
    with pytest.raises(SpecError) as raised:
        load_spec(str(make_spec(overrides)))
    problems = [p for p in raised.value.problems if p.path == path]
    assert len(problems) == 1, raised.value.problems
    for fragment in fragments:
        assert fragment in problems[0].message


@pytest.mark.parametrize("name", ["backbone", "encoder", "augment", "decay"])
def test_unknown_choices_are_refused(name, make_spec):
    value = ["shear"] if name == "augment" else "VGG16"
    section = "training" if name == "decay" else "model"
    with pytest.raises(SpecError) as raised:
        load_spec(str(make_spec({f"{section}.{name}": value})))
    assert any(name in p.path for p in raised.value.problems), raised.value.problems


def test_valid_media_settings_load(make_spec):
    spec = load_spec(
        str(
            make_spec(
                {
                    "features.company": {"transform": "text", "sequence_length": 16, "top_k": 100},
                    "model": {"type": "text_classifier", "encoder": "bag_of_embeddings", "embedding_dim": 16},
                    "training.warmup_steps": 5,
                    "training.decay": "cosine",
                }
            )
        )
    ).spec
    assert spec.features["company"].sequence_length == 16
    assert spec.model.encoder == "bag_of_embeddings"
    assert (spec.training.warmup_steps, spec.training.decay) == (5, "cosine")


def test_a_wordpiece_text_feature_loads_and_reaches_the_transform_config(make_spec):
    from pipelines.compiler import transform_config

    resolved = load_spec(
        str(
            make_spec(
                {
                    "features.company": {
                        "transform": "text",
                        "sequence_length": 16,
                        "tokenizer": "wordpiece",
                        "vocab_size": 3000,
                    },
                    "model": {"type": "text_classifier"},
                }
            )
        )
    )
    feature = resolved.spec.features["company"]
    assert (feature.tokenizer, feature.vocab_size) == ("wordpiece", 3000)
    config = transform_config(resolved)
    assert config.features["company"]["tokenizer"] == "wordpiece"
    assert config.num_tokens("company", 2891) == 2891  # the learned vocabulary's lines, [PAD] and [UNK] included


def test_xla_with_augmentations_it_cannot_compile_is_refused(make_spec):
    overrides = {
        "features.company": {"transform": "text", "sequence_length": 8},
        "model": {"type": "image_classifier", "augment": ["flip", "zoom"]},
        "training.xla": True,
    }
    with pytest.raises(SpecError) as raised:
        load_spec(str(make_spec(overrides)))
    problems = [p for p in raised.value.problems if p.path == "model.augment"]
    assert len(problems) == 1
    assert "XLA cannot compile the `zoom` augmentation" in problems[0].message
    assert "Remove `zoom`, or set `training.xla: false`" in problems[0].message
