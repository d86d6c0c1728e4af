"""Spec rules for images and text: the column fits the transform, the model gets the feature it needs.

`transform: image` reads encoded image bytes: an image folder's `image`
column, or a bytes feature of TFRecords (a CSV cell cannot hold an image).
`transform: text` reads a text column. A model type that encodes a media
feature (its registry entry's `media`, e.g. `image_classifier`: `image`)
takes exactly one such feature; the table model types take none. Each
type's own rules run in `rule_model_type`.
"""

from __future__ import annotations

from collections.abc import Iterator

from components.trainer.models.registry import MODEL_TYPES, model_type, type_for_media
from pipelines.spec.errors import SpecProblem

__all__ = ["rule_media_transforms", "rule_media_model", "rule_model_type"]

_MEDIA = frozenset(kind.media for kind in MODEL_TYPES.values() if kind.media)
_EXAMPLES = {
    "image": "`image: {transform: image, image_size: [224, 224]}`",
    "text": "`review: {transform: text, sequence_length: 128}`",
}


def _image_problem(profile, name: str) -> str | None:
    if profile.format == "csv":
        return (
            f"transform `image` needs a column of encoded JPEG/PNG bytes, but `{name}` is a column of the CSV file "
            f"{profile.files[0]}: CSV cells hold text, not images. Expected an image folder (`data.path` a folder "
            "with one sub-folder of JPEG/PNG files per class; its images are the `image` column) or TFRecords of "
            "tf.Example with the encoded bytes. Received: a CSV column. Put the images in class folders, or write "
            "TFRecords."
        )
    if profile.format == "image_folder" and name != "image":
        return (
            f"transform `image` needs the encoded images, but `{name}` holds each image's "
            f"{'class name' if name == 'label' else name}. Expected: `image`. Received: `{name}`. Declare "
            "`features: {image: {transform: image, image_size: [224, 224]}}`."
        )
    if name in profile.numeric:
        return (
            f"transform `image` needs a bytes feature of encoded JPEG/PNG images, but `{name}` holds numbers in "
            f"{profile.files[0]}. Expected: bytes. Received: numbers. Choose the feature that holds the images."
        )
    return None


def _text_problem(profile, name: str) -> str | None:
    if profile.format == "image_folder" and name == "image":
        return (
            "transform `text` needs a text column, but `image` holds encoded images. Expected text. Received: "
            "image bytes. Use `transform: image` for it."
        )
    if name in profile.numeric and name not in profile.empty:
        return (
            f"transform `text` needs a text column, but `{name}` holds only numbers in {profile.files[0]}. Expected "
            f"words. Received: numbers. Choose a text column, or use a numeric transform (`zscore`, `bucketize`) "
            f"for `{name}`."
        )
    return None


def rule_media_transforms(ctx) -> Iterator[SpecProblem]:
    """`transform: image` reads encoded image bytes, `transform: text` reads text."""
    profile = ctx.profile
    if profile is None:
        return
    for name, feature in ctx.spec.features.items():
        if name not in profile.columns:
            continue  # rule_data names it
        check = {"image": _image_problem, "text": _text_problem}.get(feature.transform)
        problem = check(profile, name) if check else None
        if problem:
            yield ctx.problem(f"features.{name}.transform", problem)


def rule_media_model(ctx) -> Iterator[SpecProblem]:
    """A type that encodes a media feature takes exactly one of that transform; the table types take none."""
    model = ctx.spec.model
    if model.build_model is not None:
        return
    transform = model_type(model.type).media
    if transform is None:
        media = sorted((name, f.transform) for name, f in ctx.spec.features.items() if f.transform in _MEDIA)
        if media:
            name, kind = media[0]
            yield ctx.problem(
                "model.type",
                f"`model.type: {model.type}` reads table features only. Expected no `transform: image` or `text` "
                f"feature. Received: `{name}` (`transform: {kind}`). Use `model.type: {type_for_media(kind)}`, or "
                f"`model.build_model` for a model of your own.",
            )
        return
    matching = sorted(name for name, f in ctx.spec.features.items() if f.transform == transform)
    if len(matching) == 1:
        return
    received = f"{len(matching)}: {', '.join(f'`{n}`' for n in matching)}" if matching else "none"
    example = _EXAMPLES.get(transform, f"`name: {{transform: {transform}}}`")
    fix = f"Keep one of them (the model reads one {transform} input)." if matching else f"Add one, e.g. {example}."
    yield ctx.problem(
        "model.type",
        f"`model.type: {model.type}` needs exactly one feature with `transform: {transform}`. Expected 1. "
        f"Received {received}. {fix}",
    )


def rule_model_type(ctx) -> Iterator[SpecProblem]:
    """The rules the spec's model type declares (its registry entry's `rules`)."""
    for rule in model_type(ctx.spec.model.type).rules:
        yield from rule(ctx)
