"""The `predict` verb: score a data file with the pipeline's newest blessed model.

    python -m pipelines predict SPEC DATA --output scores.parquet --keep trip_id --batch-size 1024

One row out per row in, in order: the `--keep` columns as the file holds
them (with its types), then the model's outputs (`pipelines.scoring.model`). Progress goes to
the console (tqdm, on a terminal); the last line says how many rows were
scored by which model. TensorFlow's warnings that it renamed the model's
inputs (`Malic Acid_values` -> `Malic_Acid_values`, for columns named with
spaces) are left out of the console: loading a model does that every time.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time

import pyarrow as pa

from pipelines.scoring.blessed_model import NoBlessedModel, newest_blessed_model, trained_schema_path
from pipelines.scoring.inputs import (
    ScoringInput,
    ScoringInputError,
    column_names,
    existing_file,
    input_format,
    scoring_batches,
)
from pipelines.scoring.outputs import ScoredFile

__all__ = ["SCORABLE_FORMATS", "add_predict_command", "predict"]

SCORABLE_FORMATS = ("csv", "parquet", "avro", "jsonl", "tfrecord")


def add_predict_command(commands, load_spec) -> None:
    """Registers `predict` on the CLI's subcommands.

    Args:
        commands: the `add_subparsers()` object of `python -m pipelines`.
        load_spec: the CLI's spec loader (path -> ResolvedSpec; reports spec errors the CLI's way).
    """
    parser = commands.add_parser("predict", help="score a data file with the newest blessed model")
    parser.add_argument("spec", help="the pipeline YAML file (its root holds the model)")
    parser.add_argument("data", help="the file to score: CSV, Parquet, Avro, JSON Lines or TFRecord of tf.Examples")
    parser.add_argument("--output", required=True, help="the scores: .csv or .parquet (written when complete)")
    parser.add_argument("--keep", action="append", default=[], metavar="COL", help="copy this input column (repeat)")
    parser.add_argument("--batch-size", type=int, default=1024, metavar="N", help="rows per model call (1024)")
    parser.set_defaults(
        handler=lambda args: predict(load_spec(args.spec), args.data, args.output, args.keep, args.batch_size)
    )


def predict(resolved, data: str, output: str, keep: list[str], batch_size: int = 1024, stream=None) -> int:
    """Scores `data` into `output`; returns the exit code (0, or 1 with one `error:` line on stderr)."""
    stream = stream or sys.stdout
    if batch_size < 1:
        print(f"error: --batch-size must be at least 1. Received: {batch_size}.", file=sys.stderr)
        return 1
    try:
        with _without_renamed_input_warnings():
            return _predict(resolved, data, output, list(dict.fromkeys(keep)), batch_size, stream)
    except (NoBlessedModel, ScoringInputError, FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


class _RenamedInputWarnings(logging.Filter):
    """Drops absl's `... is not a valid tf.function parameter name. Sanitizing to ...` records.

    TensorFlow logs one (up to five a process) for each input of a loaded signature whose name is not a Python
    identifier (`function_type.sanitize_arg_name`): a column named `Malic Acid` gives `Malic Acid_values`. The
    model is called by its signatures' own names, so there is nothing for the user to do.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return "is not a valid tf.function parameter name" not in str(record.msg)


@contextlib.contextmanager
def _without_renamed_input_warnings():
    """The `absl` logger (TensorFlow's) without `_RenamedInputWarnings` while the block runs; others pass."""
    logger, quiet = logging.getLogger("absl"), _RenamedInputWarnings()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


def _predict(resolved, data: str, output: str, keep: list[str], batch_size: int, stream) -> int:
    from tqdm import tqdm

    from pipelines.scoring.model import ScoringModel

    started = time.perf_counter()
    model_ref = newest_blessed_model(resolved.metadata_path, resolved.name)
    data_check = resolved.spec.data
    source = ScoringInput(
        existing_file(data),
        input_format(data, resolved.data_format),
        resolved.csv_dialect,
        tuple(data_check.na_values),
        data_check.checks.non_finite == "impute",
        data_check.flatten,
    )
    if source.fmt not in SCORABLE_FORMATS:
        raise ScoringInputError(
            f"{data}: cannot score `{source.fmt}` data. Expected one of {list(SCORABLE_FORMATS)} (by the file's "
            "ending, else `data.format`). Write the rows as TFRecords of tf.Examples (`.tfrecord.gz`)."
        )
    model = ScoringModel(model_ref.path)
    kinds = {} if source.fmt == "tfrecord" else model.feature_kinds
    if kinds is None:  # a `training.module_file` model: its raw inputs typed by the schema it was trained with
        kinds = _schema_kinds(resolved, model_ref, source)
    with ScoredFile(output) as scored, tqdm(unit=" rows", disable=None, file=sys.stderr) as progress:
        for kept, examples in scoring_batches(source, kinds, keep, batch_size):
            outputs = _scored(model, examples, kinds, data)
            clash = sorted(set(kept.schema.names) & set(outputs.schema.names))
            if clash:
                raise ScoringInputError(
                    f"--keep {clash}: the model's outputs have the same name. Expected input columns other than "
                    f"{outputs.schema.names}. Leave them out of --keep, or rename them in the file."
                )
            scored.write(_joined(kept, outputs))
            progress.update(len(examples))
        if scored.rows == 0:
            raise ScoringInputError(f"{data} has no rows. Expected at least one row to score.")
    print(
        f"Scored {scored.rows:,} rows of {data} with the blessed model {model_ref.path} into "
        f"{scored.path} in {time.perf_counter() - started:.1f}s.",
        file=stream,
    )
    return 0


def _schema_kinds(resolved, model_ref, source: ScoringInput) -> dict[str, int]:
    """The file's columns that the model's training schema lists, typed by it (the spec's label left out)."""
    from pipelines.scoring.model import schema_feature_kinds

    schema = trained_schema_path(resolved.metadata_path, model_ref.model_id)
    if schema is None:
        raise ScoringInputError(
            f"the model {model_ref.path} has no `serving_raw` signature (a `training.module_file` model) and its "
            f"Trainer had no schema, so the types of {source.path}'s columns are unknown. Expected a model trained "
            "with SchemaGen's schema. Score a TFRecord file of tf.Examples instead."
        )
    label = resolved.spec.label
    names = set(column_names(source)) - {label.name, label.column}
    kinds = {name: kind for name, kind in schema_feature_kinds(schema).items() if name in names}
    if not kinds:
        raise ScoringInputError(
            f"{source.path} has none of the columns the model was trained on. Expected some of "
            f"{sorted(schema_feature_kinds(schema))} (the schema {schema}). Received columns: {sorted(names)}. "
            "Score a file with the training columns."
        )
    return kinds


def _scored(model, examples: list[bytes], kinds: dict[str, int], data: str) -> pa.RecordBatch:
    """The model's outputs; a model that refuses the examples (a raw input it needs is not in the file) is one
    ScoringInputError naming the columns that were encoded."""
    import tensorflow as tf

    try:
        return model.score(examples)
    except tf.errors.InvalidArgumentError as error:
        reason = _tf_reason(error.message or str(error))
        raise ScoringInputError(
            f"the model {model.path} refused the rows of {data}: {reason}. Expected the columns its serving "
            f"signature parses. Received columns encoded: {sorted(kinds)}. Add the columns it needs to the file."
        ) from None


def _tf_reason(message: str) -> str:
    """The line of a TF graph error that says what went wrong (`... Feature: x ... is required but could not be
    found.`), not its `Graph execution error:` heading or its node and stack lines."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    useful = [
        line
        for line in lines
        if not line.startswith(("Graph execution error", "Detected at node", "<stack traces", "[[", "File "))
    ]
    return (useful or lines or ["unknown error"])[0].removeprefix("Name: <unknown>, ").rstrip(".")


def _joined(kept: pa.RecordBatch, outputs: pa.RecordBatch) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [*kept.columns, *outputs.columns], names=[*kept.schema.names, *outputs.schema.names]
    )
