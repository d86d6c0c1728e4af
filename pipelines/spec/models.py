"""The pipeline spec as typed, frozen dataclasses: the YAML file's schema.

A spec file has one top-level section per dataclass below; `PipelineSpec`
lists them. Paths in a spec are relative to the spec file's folder;
`package://pkg/sub/path` names a file inside an installed Python package.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, Optional, Union

from pipelines.spec.limits import check_finite, check_upper_bounds
from pipelines.spec.orchestrator import OrchestratorSpec

__all__ = [
    "PipelineSection",
    "DataSpec",
    "DataChecksSpec",
    "DEFAULT_NA_VALUES",
    "FeatureSpec",
    "LabelSpec",
    "TransformSpec",
    "ModelSpec",
    "TrainingSpec",
    "ThresholdSpec",
    "EvaluationSpec",
    "PushSpec",
    "DeploySpec",
    "StepSpec",
    "HookSpec",
    "OrchestratorSpec",
    "PipelineSpec",
    "TRANSFORMS",
    "CATEGORICAL_TRANSFORMS",
    "NUMERIC_TRANSFORMS",
    "MEDIA_TRANSFORMS",
    "BACKBONES",
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
BACKBONES: tuple[str, ...] = ("ResNet50", "EfficientNetB0", "MobileNetV2")


@dataclasses.dataclass(frozen=True)
class PipelineSection:
    """Name and storage of the pipeline.

    `root` holds artifacts, ML Metadata (`metadata.sqlite`) and logs; it
    defaults to `runs/<name>` under the current directory.
    """

    name: str
    root: Optional[str] = None
    caching: bool = True


DEFAULT_NA_VALUES: tuple[str, ...] = ("", "NA", "N/A", "NaN", "nan", "null")


@dataclasses.dataclass(frozen=True)
class DataChecksSpec:
    """Limits on data defects, checked before training.

    `non_finite`: what an `inf`/`-inf` cell (or `NaN`, when `na_values` does not
    list it) in a numeric column does: `error` stops `validate` naming the file,
    column and row; `impute` treats it as a missing cell. `skew` and `drift`
    are TFDV comparator thresholds between the eval and train statistics
    (L-infinity distance for categorical features, Jensen-Shannon divergence
    for numeric ones, each in [0, 1]); null: not checked. Both compare eval
    with train: `skew` reports it as training/serving skew, `drift` as drift.

    The schema is inferred from the train split only, so a category that only
    eval has is an anomaly; `unseen_categories` is the largest fraction of a
    split's values of one categorical feature that may be such categories
    (default 0.05: rare values go to the vocabulary's OOV bucket, and on small
    data a handful of rows is already 1%; 0: none).

    `sample_rate` (null: every row) has StatisticsGen compute the statistics,
    and so the schema and the checks above, on that fraction of each split's
    rows (TFDV's `StatsOptions.sample_rate`): on millions of rows 0.1 keeps
    the distributions and cuts the time, but a defect in a handful of rows
    (an unseen category, one non-finite cell) may not be sampled.
    """

    non_finite: Literal["error", "impute"] = "error"
    skew: Optional[float] = None
    drift: Optional[float] = None
    unseen_categories: float = 0.05
    sample_rate: Optional[float] = None

    def __post_init__(self):
        if self.sample_rate is not None and not 0.0 < self.sample_rate <= 1.0:
            raise ValueError(
                f"`sample_rate` must be a fraction above 0 and at most 1. Received: sample_rate={self.sample_rate}. "
                "Example: `sample_rate: 0.1` (statistics on 10% of the rows), or null for every row."
            )
        if not 0.0 <= self.unseen_categories < 1.0:
            raise ValueError(
                f"`unseen_categories` must be a fraction, 0 or more and below 1. Received: "
                f"unseen_categories={self.unseen_categories}. Example: `unseen_categories: 0.01` (1%)."
            )
        for name in ("skew", "drift"):
            value = getattr(self, name)
            if value is not None and not 0.0 < value <= 1.0:
                raise ValueError(
                    f"`{name}` must be a threshold above 0 and at most 1. Received: {name}={value}. "
                    f"Example: `{name}: 0.1`, or null to skip the check."
                )


@dataclasses.dataclass(frozen=True)
class DataSpec:
    """Where the examples come from and how they are split.

    `path` is a CSV or TFRecord (tf.Example, optionally GZIP) file, or a folder
    of them, or (`format: image_folder`) a folder with one sub-folder per class
    holding JPEG/PNG files: ExampleGen writes one tf.Example per image with
    `image` (the encoded bytes), `label` (the sub-folder's name), `height` and
    `width`. `splits` maps split names to hash-bucket weights; it must have
    `train` and `eval`. `na_values` lists the CSV cell texts that mean
    "missing" (default: empty, `NA`, `N/A`, `NaN`, `nan`, `null`); a numeric
    column with such cells stays numeric and its gaps are imputed (see
    `FeatureSpec.impute`). A UTF-8 byte-order mark before the header is
    ignored. `delimiter` is the one character between a CSV file's cells
    (default: a tab for `.tsv` files, else `,`), e.g. `";"` for the
    semicolon-separated files of locales with decimal commas, or `"\t"`.
    `skip_initial_space: true` drops the spaces at the start of every cell,
    header names included, for files written `39, State-gov, 13` (UCI's adult
    census data; pandas' `skipinitialspace`). `checks` sets limits on data
    defects (`DataChecksSpec`).
    """

    path: str
    format: Optional[Literal["csv", "tfrecord", "image_folder"]] = None
    splits: dict[str, int] = dataclasses.field(default_factory=lambda: {"train": 2, "eval": 1})
    na_values: list[str] = dataclasses.field(default_factory=lambda: list(DEFAULT_NA_VALUES))
    delimiter: Optional[str] = None
    skip_initial_space: bool = False
    checks: DataChecksSpec = dataclasses.field(default_factory=DataChecksSpec)

    def __post_init__(self):
        if self.delimiter is not None and (len(self.delimiter) != 1 or self.delimiter in '"\r\n'):
            raise ValueError(
                "`delimiter` must be one character other than a quote or a line break. "
                f'Received: delimiter={self.delimiter!r}. Example: `delimiter: ";"`, or `delimiter: "\\t"` for tabs.'
            )
        for name in ("delimiter", "skip_initial_space"):
            if getattr(self, name) not in (None, False) and self.format not in (None, "csv"):
                raise ValueError(
                    f"`{name}` is for CSV files. Received: format={self.format}, {name}={getattr(self, name)!r}. "
                    f"Remove `{name}`."
                )


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
            from components.transform.label_classes import order_classes

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

    `tf_compat_v1` builds the transform graph in TF1 graph mode, which tf.Transform
    analyses and later loads faster (taxi: Transform 7.1 s -> 4.2 s, and the
    Trainer and Evaluator load it faster too). Unset: on for the generated
    preprocessing_fn, off when `module` is set (a user function may use TF2-only
    code such as Keras layers or `tf.function`). TF1 graph mode cannot read a
    column whose name ends in `/` or `>`: with such a column in the data,
    unset means off (`pipelines.spec.transform_rules`).
    """

    materialize: bool = False
    module: Optional[str] = None
    tf_compat_v1: Optional[bool] = None

    def graph_mode_v1(self) -> bool:
        """Whether Transform runs with `force_tf_compat_v1`."""
        return self.module is None if self.tf_compat_v1 is None else self.tf_compat_v1


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """The model: a built-in type, or a user `build_model`.

    Types: `dnn` and `wide_and_deep` over table features; `image_classifier`,
    a Keras Applications `backbone` (ResNet50, EfficientNetB0, MobileNetV2)
    over one `image` feature with a dense head (`hidden_units`, `dropout`):
    `weights` is a local weights file (`.h5`) for the backbone, or null for
    random initialisation; `frozen_layers` freezes the backbone's first that
    many layers (`all`: the whole backbone, only the head trains); `augment`
    lists training-only augmentations (`flip`, `rotate`, `zoom`, `contrast`).
    `text_classifier`, over one `text` feature: `encoder: transformer` (a small
    Transformer encoder of `num_layers` blocks with `num_heads` attention heads
    and `embedding_dim` wide tokens) or `bag_of_embeddings` (mean of the word
    embeddings), then the dense head.

    `build_model: pkg.mod:fn` is called as `fn(feature_specs, label, config)`
    and returns a compiled-or-not Keras model taking the transformed features.
    """

    type: Literal["dnn", "wide_and_deep", "image_classifier", "text_classifier"] = "wide_and_deep"
    hidden_units: list[int] = dataclasses.field(default_factory=lambda: [64, 32])
    embedding_dim: int = 8
    build_model: Optional[str] = None
    backbone: Literal["ResNet50", "EfficientNetB0", "MobileNetV2"] = "MobileNetV2"
    weights: Optional[str] = None
    frozen_layers: Union[int, Literal["all"]] = 0
    augment: list[Literal["flip", "rotate", "zoom", "contrast"]] = dataclasses.field(default_factory=list)
    dropout: float = 0.0
    encoder: Literal["transformer", "bag_of_embeddings"] = "transformer"
    num_layers: int = 2
    num_heads: int = 2

    def __post_init__(self):
        if isinstance(self.frozen_layers, int) and self.frozen_layers < 0:
            raise ValueError(
                f"`frozen_layers` must be 0 or more, or `all`. Received: frozen_layers={self.frozen_layers}."
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"`dropout` must be 0 or more and below 1. Received: dropout={self.dropout}.")
        for name in ("num_layers", "num_heads"):  # embedding_dim: `pipelines/spec/rules.py`
            if getattr(self, name) < 1:
                raise ValueError(f"`{name}` must be at least 1. Received: {name}={getattr(self, name)}.")


@dataclasses.dataclass(frozen=True)
class TrainingSpec:
    """Training settings: steps, batch size, optimiser, and how training is distributed.

    `batch_size` is per replica (one GPU, or the CPU): one optimizer step uses
    `batch_size x replicas x gradient_accumulation_steps` examples, and
    `scale_learning_rate: true` multiplies `learning_rate` by
    `replicas x gradient_accumulation_steps` (the linear scaling rule).
    `strategy`: `auto` (multi_worker when TF_CONFIG names several tasks,
    mirrored with several GPUs, else one_device), `one_device`, `mirrored`,
    `multi_worker`. `gpus`: GPU indices to use (null: all visible).
    `mixed_precision`: `auto` (float16 on GPUs of compute capability 7.0+,
    else float32), `off`, `float16`, `bfloat16`. `xla` compiles the train step.
    `checkpoint_every_steps` (null: off) lets a killed run resume;
    `profile_steps: [first, last]` writes a profiler trace to TensorBoard;
    `metrics_port` serves Prometheus metrics on 127.0.0.1 (null: off) and
    `pushgateway_url` pushes them.
    `warmup_steps` raises the learning rate linearly from 0 over the first
    that many optimizer steps; `decay: cosine` then lowers it to 0 by the last
    step (fine-tuning a pretrained backbone usually wants both).
    `epochs` (null: off) trains on the whole train split that many times
    instead of `train_steps`: steps per epoch = train examples / global batch,
    rounded up (the examples are counted when training starts).
    """

    train_steps: int = 1000
    epochs: Optional[int] = None
    eval_steps: int = 100
    batch_size: int = 64
    learning_rate: float = 0.001
    optimizer: Literal["adam", "sgd", "rmsprop", "adagrad"] = "adam"
    steps_per_execution: int = 50
    seed: int = 0
    strategy: Literal["auto", "one_device", "mirrored", "multi_worker"] = "auto"
    gpus: Optional[list[int]] = None
    gpu_memory_growth: bool = True
    scale_learning_rate: bool = False
    # YAML reads a bare `off` as false: both mean float32.
    mixed_precision: Literal["auto", "off", "float16", "bfloat16", False] = "auto"
    xla: bool = False
    gradient_accumulation_steps: int = 1
    cache_budget_mb: int = 1024
    warmup_steps: int = 0
    decay: Literal["none", "cosine"] = "none"
    checkpoint_every_steps: Optional[int] = 500
    profile_steps: Optional[list[int]] = None
    metrics_port: Optional[int] = None
    pushgateway_url: Optional[str] = None

    def __post_init__(self):
        for name in ("train_steps", "eval_steps", "batch_size", "steps_per_execution", "gradient_accumulation_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"`{name}` must be at least 1. Received: {name}={getattr(self, name)}.")
        if self.warmup_steps < 0:
            raise ValueError(f"`warmup_steps` must be 0 or more. Received: warmup_steps={self.warmup_steps}.")
        if self.epochs is not None and self.epochs < 1:
            raise ValueError(
                f"`epochs` must be at least 1. Received: epochs={self.epochs}. Write `epochs: null` to train "
                "for `train_steps` steps instead."
            )
        check_upper_bounds(self, "training")
        check_finite({"learning_rate": self.learning_rate})
        if self.learning_rate <= 0:
            raise ValueError(f"`learning_rate` must be above 0. Received: learning_rate={self.learning_rate}.")
        if self.learning_rate > 10:
            raise ValueError(
                f"`learning_rate` must be at most 10. Received: learning_rate={self.learning_rate}. "
                "Typical values are 0.0001 to 0.1."
            )
        if not isinstance(self.mixed_precision, str):
            object.__setattr__(self, "mixed_precision", "off")
        if self.gpus is not None and (any(i < 0 for i in self.gpus) or len(set(self.gpus)) != len(self.gpus)):
            raise ValueError(
                f"`gpus` must list distinct GPU indices, 0 or more. Received: gpus={list(self.gpus)}. "
                "Fix the list, or write `gpus: null` for every visible GPU."
            )
        if self.cache_budget_mb < 0:
            raise ValueError(
                f"`cache_budget_mb` must be 0 (never cache) or more. Received: cache_budget_mb={self.cache_budget_mb}."
            )
        if self.checkpoint_every_steps is not None and self.checkpoint_every_steps < 1:
            raise ValueError(
                f"`checkpoint_every_steps` must be at least 1. Received: checkpoint_every_steps="
                f"{self.checkpoint_every_steps}. Write `checkpoint_every_steps: null` to turn checkpoints off."
            )
        if self.profile_steps is not None and (
            len(self.profile_steps) != 2 or not 1 <= self.profile_steps[0] <= self.profile_steps[1]
        ):
            raise ValueError(
                f"`profile_steps` must be [first, last] with 1 <= first <= last. Received: profile_steps="
                f"{list(self.profile_steps)}. Example: `profile_steps: [100, 110]`."
            )
        if self.metrics_port is not None and not 1 <= self.metrics_port <= 65535:
            raise ValueError(
                f"`metrics_port` must be a TCP port, 1 to 65535. Received: metrics_port={self.metrics_port}. "
                "Example: `metrics_port: 9464`, or null for no metrics server."
            )
        if self.pushgateway_url is not None and not self.pushgateway_url.startswith(("http://", "https://")):
            raise ValueError(
                f"`pushgateway_url` must be an http(s) URL. Received: pushgateway_url={self.pushgateway_url!r}. "
                "Example: `pushgateway_url: http://pushgateway:9091`."
            )


@dataclasses.dataclass(frozen=True)
class ThresholdSpec:
    """A gate on one metric: absolute bounds and/or the allowed regression
    against the last blessed model (`max_regression`, in the metric's units).
    `higher_is_better` defaults from the metric (losses and errors: false).
    `classes` (per-class `precision`/`recall` of a multi-class label): the
    classes the gate applies to, each scored as `precision@<class>`; default:
    every class."""

    min: Optional[float] = None
    max: Optional[float] = None
    max_regression: Optional[float] = None
    higher_is_better: Optional[bool] = None
    classes: Optional[list[str | int]] = None

    def __post_init__(self):
        if self.min is None and self.max is None and self.max_regression is None:
            raise ValueError("a threshold needs at least one of `min`, `max` or `max_regression`.")
        check_finite({"min": self.min, "max": self.max, "max_regression": self.max_regression})
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(
                f"`min` is above `max`: no value can pass. Expected min <= max. Received: min={self.min}, "
                f"max={self.max}. Swap them or fix the one that is wrong."
            )
        if self.max_regression is not None and self.max_regression < 0:
            raise ValueError(f"`max_regression` must be 0 or more. Received: max_regression={self.max_regression}.")


@dataclasses.dataclass(frozen=True)
class EvaluationSpec:
    """Metrics computed on the eval split, and the blessing gate over them.

    With no `thresholds`, the model must beat a trivial baseline on the eval
    split: the majority class's share as `accuracy` (binary with `auc`: AUC
    above 0.5), or for regression the mean squared error of predicting the
    mean. `top_k` is the k of `top_k_accuracy`.

    Without `metrics` (or with `metrics: null`) the metrics fit the label: a
    binary label gets `binary_accuracy` and `auc`, a label of 3 or more classes
    `accuracy`, a regression label `mean_squared_error` and
    `mean_absolute_error` (`pipelines.spec.metrics.default_metrics`). The
    checked spec holds that list.

    `sample_rows` (null: every eval row) scores a deterministic sample of that
    many eval rows, spread evenly over the split: on large data the Evaluator
    is the slowest component, and its time grows with the rows it scores. A
    metric on a sample carries sampling error (accuracy near 0.9 on 10,000
    rows: one standard error 0.003), so gates with `max_regression` want a
    sample large enough for the difference they allow.
    """

    metrics: Optional[list[str]] = None  # None: the metrics that fit the label (see above)
    thresholds: dict[str, ThresholdSpec] = dataclasses.field(default_factory=dict)
    top_k: int = 3
    sample_rows: Optional[int] = None

    def __post_init__(self):
        if self.top_k < 1:
            raise ValueError(f"`top_k` must be at least 1. Received: top_k={self.top_k}. Example: `top_k: 3`.")
        if self.sample_rows is not None and self.sample_rows < 100:
            raise ValueError(
                f"`sample_rows` must be at least 100 (fewer rows measure too little). Received: sample_rows="
                f"{self.sample_rows}. Example: `sample_rows: 20000`, or null to score every eval row."
            )


@dataclasses.dataclass(frozen=True)
class PushSpec:
    """Where blessed models go, in TF Serving layout `<serving_dir>/<model_name>/<version>/`.

    `serving_dir` defaults to `<pipeline root>/serving`; `model_name` to the pipeline name.
    """

    serving_dir: Optional[str] = None
    model_name: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class DeploySpec:
    """Deployment to TensorFlow Serving after the Pusher, verified, with rollback.

    `url` is the REST address of a running server (`python -m serving up`) and
    `config` the model config file it was started with; without `url`, an
    embedded server is started for the checks. `p99_budget_ms` bounds the
    single-row latency; `sample_rows` eval rows are compared with the trained
    model's predictions. `max_request_mb` declares the largest request clients
    send, in MiB of raw input: rows per request x the largest encoded image (or
    text), e.g. 32 images of at most 0.5 MiB: 16. The embedded server started
    for the checks, and `python -m serving up` on the model's config folder,
    then admit it (request memory budget and body/message size, see
    `serving.request_limits`); null keeps the server's defaults (16 MiB body,
    256 MiB budget).
    """

    enabled: bool = False
    url: Optional[str] = None
    config: Optional[str] = None
    p99_budget_ms: float = 100.0
    sample_rows: int = 20
    max_request_mb: Optional[float] = None

    def __post_init__(self):
        if self.url and not self.config:
            raise ValueError("`url` needs `config`: the model config file that server was started with.")
        check_finite({"p99_budget_ms": self.p99_budget_ms})
        if self.p99_budget_ms <= 0:
            raise ValueError(f"`p99_budget_ms` must be above 0. Received: p99_budget_ms={self.p99_budget_ms}.")
        if self.sample_rows < 1:
            raise ValueError(f"`sample_rows` must be at least 1. Received: sample_rows={self.sample_rows}.")
        if self.max_request_mb is not None:
            check_finite({"max_request_mb": self.max_request_mb})
            if self.max_request_mb <= 0:
                raise ValueError(
                    f"`max_request_mb` must be above 0 (rows per request x the largest encoded input, in MiB). "
                    f"Received: max_request_mb={self.max_request_mb}. Example: `max_request_mb: 16`."
                )


@dataclasses.dataclass(frozen=True)
class StepSpec:
    """A custom step: a TFX component added to the pipeline (see docs/adding_a_component.md).

    `uses` is a short name from the component registry (`python -m pipelines
    components`) or `package.module:Name`, a `@component` function or a
    `BaseComponent` subclass. `inputs` maps each of its inputs to another
    step's output, `Step.output` (built-in steps included, e.g.
    `ExampleGen.examples`). `parameters` are checked against the component's
    signature. `replaces: Step.output` makes the built-in steps that read that
    output read this step's output of the same type instead: that is how a
    step goes between two built-in ones.
    """

    name: str
    uses: str
    inputs: dict[str, str] = dataclasses.field(default_factory=dict)
    parameters: dict[str, Any] = dataclasses.field(default_factory=dict)
    replaces: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class HookSpec:
    """A lifecycle hook: `uses` names a factory (`package.module:Name`, or a
    registered short name such as `prometheus`), called with `parameters` as
    keyword arguments; the object it returns gets the run's events."""

    uses: str
    parameters: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class PipelineSpec:
    """A whole pipeline, as one YAML file declares it."""

    pipeline: PipelineSection
    data: DataSpec
    features: dict[str, FeatureSpec]
    label: LabelSpec
    schema: Optional[str] = None
    transform: TransformSpec = dataclasses.field(default_factory=TransformSpec)
    model: ModelSpec = dataclasses.field(default_factory=ModelSpec)
    training: TrainingSpec = dataclasses.field(default_factory=TrainingSpec)
    evaluation: EvaluationSpec = dataclasses.field(default_factory=EvaluationSpec)
    push: PushSpec = dataclasses.field(default_factory=PushSpec)
    deploy: DeploySpec = dataclasses.field(default_factory=DeploySpec)
    steps: list[StepSpec] = dataclasses.field(default_factory=list)
    # A bare string is shorthand for `{uses: <string>}`.
    hooks: list[str | HookSpec] = dataclasses.field(default_factory=list)
    orchestrator: OrchestratorSpec = dataclasses.field(default_factory=OrchestratorSpec)
