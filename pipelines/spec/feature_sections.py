"""The `features:`, `label:` and `transform:` sections: what the model reads and how it is transformed."""

import dataclasses
from typing import Literal, Optional, Union

from components.trainer.models.image_classifier import BACKBONE_NAMES
from components.transform.label_classes import order_classes

__all__ = [
    "TRANSFORMS",
    "CATEGORICAL_TRANSFORMS",
    "NUMERIC_TRANSFORMS",
    "MEDIA_TRANSFORMS",
    "BACKBONES",
    "FeatureSpec",
    "LabelSpec",
    "TransformSpec",
]

Transform = Literal[
    "zscore", "minmax", "log", "identity", "vocabulary", "bucketize", "hash", "categorical", "image", "text"
]
TRANSFORMS: tuple[str, ...] = Transform.__args__  # type: ignore[attr-defined]
# Transforms whose output is an integer id (wide part of wide-and-deep models).
CATEGORICAL_TRANSFORMS = frozenset({"vocabulary", "bucketize", "hash", "categorical"})
# Transforms that read the column as a number.
NUMERIC_TRANSFORMS = frozenset({"zscore", "minmax", "log", "identity", "bucketize", "categorical"})
# Transforms of encoded images (bytes) and free text: several values per row.
MEDIA_TRANSFORMS = frozenset({"image", "text"})
BACKBONES: tuple[str, ...] = BACKBONE_NAMES


@dataclasses.dataclass(frozen=True)
class FeatureSpec:
    """One input column and its preprocessing.

    Transforms: `zscore`, `minmax`, `log` (log1p, then z-score), `identity`
    (numeric as is), `vocabulary` (`top_k`, `oov_buckets`), `bucketize`
    (`buckets` quantiles), `hash` (`hash_buckets`), `categorical` (integer ids
    below `num_buckets`), `image` (encoded JPEG/PNG bytes decoded and resized
    to `image_size: [height, width]` with `channels` colour channels (default
    3; 1 for grey), values
    0-255; the model normalises them as its backbone expects), `text`
    (lower-cased, split into words on whitespace and punctuation, a vocabulary
    of the `top_k` most frequent words (default 20000) plus `oov_buckets`,
    ids padded with 0 or cut to `sequence_length` words; `tokenizer: wordpiece`
    splits the words further into subword pieces of a WordPiece vocabulary of
    at most `vocab_size` pieces (default 8000) learned from the train split:
    0 pads, one `[UNK]` id for words with unseen characters, no `top_k` or
    `oov_buckets`; see `components.transform.wordpiece`). Any header text is a valid column name (spaces,
    dots, unicode): tensor names are derived from it (see
    `components.common.names`), and JSON clients send the original name.

    Missing cells (see `DataSpec.na_values`): `impute` says what replaces them
    before the transform: `fill` (the `fill` value), `mean` or `median` (of the
    train split, computed by Transform), `none` (0 or the empty string, as a
    value of its own). Default: `fill` when `fill` is set, else `mean` for
    numeric transforms and `none` for text. `missing_indicator: true` adds a
    0/1 model input `<name>_missing_xf` that says the cell was missing.
    """

    transform: Transform = "identity"
    fill: Optional[float | str] = None
    impute: Optional[Literal["mean", "median", "fill", "none"]] = None
    missing_indicator: bool = False
    top_k: Optional[int] = None
    oov_buckets: int = 1
    buckets: Optional[int] = None
    hash_buckets: Optional[int] = None
    num_buckets: Optional[int] = None
    image_size: Optional[list[int]] = None
    channels: Optional[int] = None
    sequence_length: Optional[int] = None
    tokenizer: Optional[Literal["words", "wordpiece"]] = None  # None: `words`
    vocab_size: Optional[int] = None

    def __post_init__(self):
        self._check_media()
        self._check_tokenizer()
        needs = {"bucketize": "buckets", "hash": "hash_buckets", "categorical": "num_buckets"}
        option = needs.get(self.transform)
        if option and getattr(self, option) is None:
            raise ValueError(f"transform `{self.transform}` needs `{option}`. Add `{option}: <a whole number>`.")
        for name in ("top_k", "buckets", "hash_buckets", "num_buckets"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"`{name}` must be at least 1. Received: {name}={value}.")
        if self.oov_buckets < 0:
            raise ValueError(f"`oov_buckets` must be 0 or more. Received: oov_buckets={self.oov_buckets}.")
        if self.impute == "fill" and self.fill is None:
            raise ValueError("`impute: fill` needs `fill`. Add `fill: <value>`, or use `impute: mean`.")
        if self.impute in ("mean", "median") and self.transform not in NUMERIC_TRANSFORMS:
            raise ValueError(
                f"`impute: {self.impute}` needs a numeric transform ({', '.join(sorted(NUMERIC_TRANSFORMS))}). "
                f"Received: transform={self.transform}. Use `impute: fill` with `fill: <value>`."
            )

    @property
    def categorical(self) -> bool:
        return self.transform in CATEGORICAL_TRANSFORMS

    def _check_tokenizer(self) -> None:
        if self.transform != "text":
            for name in ("tokenizer", "vocab_size"):
                if getattr(self, name) is not None:
                    raise ValueError(
                        f"`{name}` is for `transform: text`. Received: transform={self.transform}. Remove `{name}`."
                    )
            return
        if self.tokenizer != "wordpiece":
            if self.vocab_size is not None:
                raise ValueError(
                    "`vocab_size` is for `tokenizer: wordpiece`. Received: tokenizer=words, "
                    f"vocab_size={self.vocab_size}. Add `tokenizer: wordpiece`, or use `top_k` for the words vocabulary."
                )
            return
        if self.vocab_size is not None and not 10 <= self.vocab_size <= 1_000_000:
            raise ValueError(
                f"`vocab_size` must be from 10 to 1,000,000 pieces (`[PAD]` and `[UNK]` included). Received: "
                f"vocab_size={self.vocab_size}. Example: `vocab_size: 8000`."
            )
        if self.top_k is not None:
            raise ValueError(
                "`top_k` sizes the words vocabulary; `tokenizer: wordpiece` learns at most `vocab_size` pieces. "
                f"Received: top_k={self.top_k}. Use `vocab_size: {self.top_k}` instead of `top_k`."
            )
        if self.oov_buckets != 1:
            raise ValueError(
                "`oov_buckets` is for `tokenizer: words`: WordPiece gives a word with unseen characters one `[UNK]` "
                f"id. Received: oov_buckets={self.oov_buckets}. Remove `oov_buckets`."
            )

    def _check_media(self) -> None:
        if self.transform == "image":
            size = self.image_size
            if size is None or len(size) != 2 or not all(isinstance(v, int) and 8 <= v <= 4096 for v in size):
                raise ValueError(
                    f"transform `image` needs `image_size: [height, width]`, two whole numbers from 8 to 4096. "
                    f"Received: image_size={None if size is None else list(size)}. Example: `image_size: [224, 224]`."
                )
            if self.channels not in (None, 1, 3):
                raise ValueError(
                    f"`channels` must be 1 (grey) or 3 (RGB). Received: channels={self.channels}. Example: `channels: 3`."
                )
        elif self.image_size is not None:
            raise ValueError(
                f"`image_size` is for `transform: image`. Received: transform={self.transform}. Remove `image_size`."
            )
        if self.transform == "text":
            if self.sequence_length is None or not 1 <= self.sequence_length <= 4096:
                raise ValueError(
                    f"transform `text` needs `sequence_length`, the words kept per row (1 to 4096). Received: "
                    f"sequence_length={self.sequence_length}. Example: `sequence_length: 128`."
                )
        elif self.sequence_length is not None:
            raise ValueError(
                f"`sequence_length` is for `transform: text`. Received: transform={self.transform}. "
                "Remove `sequence_length`."
            )
        if self.transform in MEDIA_TRANSFORMS and (self.impute not in (None, "none") or self.missing_indicator):
            raise ValueError(
                f"transform `{self.transform}` takes no `impute` or `missing_indicator`: a missing "
                f"{'image is an all-zero image' if self.transform == 'image' else 'text is an empty sequence'}. "
                "Remove them."
            )


@dataclasses.dataclass(frozen=True)
class LabelSpec:
    """The training target: a `column` as is, or an `expression` over columns.

    An expression uses column names, numbers, `+ - * /`, comparisons and
    `and`/`or`/`not`, for example `tips > 0.2 * fare`; a comparison gives 1/0.
    Rows where a column in it is missing get label 0. Quoted text can be
    compared with a column: `species == 'Adelie'`.

    Classification labels may be text or integers, two classes or more.
    `classes` declares them in order, as they appear in the data (default: the
    classes found in the data, sorted); `positive_class` names a binary
    label's positive class (default: the declared list's second entry, else
    `1`/`true`/`yes` when present, else the second class in sorted order).
    A label cell that holds no declared class stops Transform with an error
    naming the values: a label is never guessed.

    `missing` says what a row whose `column` cell is missing (empty, or a
    `data.na_values` text) does: `error` (default) stops `validate` naming
    the rows; `drop` leaves those rows out of training and evaluation (a
    `DropMissingLabels` step after ExampleGen; ExampleGen's examples keep
    them), and `validate`, the run summary and the report say how many. It
    is for `column` labels: an expression gives a row with a missing cell the
    label 0.
    """

    name: str
    column: Optional[str] = None
    expression: Optional[str] = None
    task: Literal["classification", "regression"] = "classification"
    classes: Optional[list[Union[str, int]]] = None
    positive_class: Optional[Union[str, int]] = None
    missing: Literal["error", "drop"] = "error"

    def __post_init__(self):
        if (self.column is None) == (self.expression is None):
            raise ValueError("give exactly one of `column` or `expression`.")
        if self.expression is not None and self.missing != "error":
            raise ValueError(
                "`missing` is for a `column` label: an `expression` gives a row with a missing cell the label 0. "
                f"Received: missing={self.missing}, expression={self.expression!r}. Remove `missing`."
            )
        if self.task == "regression" and (self.classes is not None or self.positive_class is not None):
            raise ValueError(
                "`classes` and `positive_class` are for classification. Expected them only with "
                "`task: classification`. Received: `task: regression`. Remove them, or set `task: classification`."
            )
        if self.expression is not None and (self.classes is not None or self.positive_class is not None):
            raise ValueError(
                "an `expression` label has the classes 0 and 1 (1 where it holds, the positive class). Expected "
                "no `classes` or `positive_class` with `expression`. Remove them, or negate the expression."
            )
        if None in (self.classes or ()):
            return  # an entry of the wrong type is reported on its own line
        if self.classes is not None or self.positive_class is not None:
            declared = None if self.classes is None else list(self.classes)
            order_classes(declared=declared, positive_class=self.positive_class if declared else None)


@dataclasses.dataclass(frozen=True)
class TransformSpec:
    """tf.Transform settings.

    `materialize: true` writes transformed examples and trains on them;
    `false` applies the transform graph on the fly inside the Trainer's
    tf.data pipeline. `module: pkg.mod:fn` is a user preprocessing_fn
    `fn(inputs, outputs, custom_config) -> dict` called after the declared
    features are transformed, to add or replace outputs.

    `module_file: path.py` is a TFX module file used unchanged: its
    `preprocessing_fn(inputs)` (and optional `stats_options_updater_fn`) is the
    whole transform, as TFX's Transform runs it; the path is relative to the
    spec file. It needs `training.module_file` (the built-in models read the
    declared features' outputs), and Transform then writes transformed examples.

    `tf_compat_v1` builds the transform graph in TF1 graph mode, which tf.Transform
    analyses, and the Trainer and Evaluator load, faster than a TF2 graph.
    Unset: on for the generated preprocessing_fn, off when `module` is set (a
    user function may use TF2-only code such as Keras layers or `tf.function`).
    TF1 graph mode cannot read a column whose name ends in `/` or `>`: with such
    a column in the data, unset means off (`pipelines.spec.transform_rules`).
    """

    materialize: bool = False
    module: Optional[str] = None
    tf_compat_v1: Optional[bool] = None
    module_file: Optional[str] = None

    def graph_mode_v1(self) -> bool:
        """Whether Transform runs with `force_tf_compat_v1`: by default only for the generated preprocessing_fn."""
        generated = self.module is None and self.module_file is None
        return generated if self.tf_compat_v1 is None else self.tf_compat_v1
