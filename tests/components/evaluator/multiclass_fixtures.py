"""A tiny multi-class model exported per the label contract, its eval split, and a real Evaluator run.

The model follows what the Trainer exports for a 3-class label: a
`transform_features` signature mapping the raw `species` string to its class
index through the `label_classes` vocabulary asset, and `serving_default`
returning `scores` [batch, 3]. It predicts the class whose index is the
feature `x`, so each row's prediction is chosen by the data:

    species    rows  x   predicted
    Adelie      40   0   Adelie
    Chinstrap   10   1   Chinstrap
    Chinstrap   10   0   Adelie      (mistakes)
    Gentoo      20   2   Gentoo

accuracy 70/80 = 0.875 (majority share 40/80 = 0.5), precision@Adelie 40/50
= 0.8, recall@Chinstrap 0.5, precision@Gentoo = recall@Gentoo = 1.0. A row
with x = 99 gets NaN scores (what NaN cells in the data do to a model).
"""

from __future__ import annotations

import os

import tensorflow as tf
from tfx.dsl.components.base import base_beam_executor
from tfx.types import standard_artifacts

from components.evaluator.eval_config import EvaluationRequest
from components.evaluator.executor import Executor

CLASSES = ["Adelie", "Chinstrap", "Gentoo"]
ROWS = [("Adelie", 0)] * 40 + [("Chinstrap", 1)] * 10 + [("Chinstrap", 0)] * 10 + [("Gentoo", 2)] * 20
BEAM_ARGS = [
    "--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner",
    "--direct_running_mode=in_memory",
    "--direct_num_workers=1",
]


def export_model(model_uri: str, classes: list[str] = CLASSES) -> str:
    """Exports the model into `<model_uri>/Format-Serving`; returns that folder."""
    export_dir = os.path.join(model_uri, "Format-Serving")
    vocab = os.path.join(model_uri, "vocab", "label_classes")
    os.makedirs(os.path.dirname(vocab), exist_ok=True)
    with open(vocab, "w", encoding="utf-8") as handle:
        handle.write("".join(f"{name}\n" for name in classes))
    root = tf.Module()
    root.asset = tf.saved_model.Asset(vocab)
    root.table = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(
            root.asset, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER
        ),
        default_value=-1,
    )
    spec = {"species": tf.io.FixedLenFeature([], tf.string), "x": tf.io.FixedLenFeature([], tf.int64)}
    num_classes = len(classes)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
    def transform_features(examples):
        parsed = tf.io.parse_example(examples, spec)
        return {"species": root.table.lookup(parsed["species"]), "x": parsed["x"]}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
    def serve(examples):
        x = tf.io.parse_example(examples, {"x": spec["x"]})["x"]
        scores = tf.one_hot(x, num_classes) * 0.8 + 0.2 / num_classes
        # x = 99 stands for a row whose cells were NaN: the model's scores are NaN too.
        scores = tf.where(tf.equal(x, 99)[:, tf.newaxis], tf.fill(tf.shape(scores), float("nan")), scores)
        return {"scores": scores, "probability": scores[:, -1]}

    tf.saved_model.save(
        root, export_dir, signatures={"serving_default": serve, "transform_features": transform_features}
    )
    return export_dir


def write_eval_split(examples_uri: str, rows=ROWS) -> None:
    """Writes `rows` as GZIP TFRecords under `<examples_uri>/Split-eval`, as ExampleGen does."""
    split = os.path.join(examples_uri, "Split-eval")
    os.makedirs(split, exist_ok=True)
    with tf.io.TFRecordWriter(os.path.join(split, "data.tfrecord.gz"), options="GZIP") as writer:
        for species, x in rows:
            example = tf.train.Example(
                features=tf.train.Features(
                    feature={
                        "species": tf.train.Feature(bytes_list=tf.train.BytesList(value=[species.encode()])),
                        "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[x])),
                    }
                )
            )
            writer.write(example.SerializeToString())


def run_evaluator(
    root: str, request: EvaluationRequest, model_uri: str, examples_uri: str, exec_properties: dict | None = None
) -> dict[str, str]:
    """Runs the real Evaluator executor (TFMA on in-process Beam); returns the output URIs.

    `exec_properties` are added to the executor's (e.g. TFX's `custom_extractors`).
    """
    examples = standard_artifacts.Examples()
    examples.uri = examples_uri
    examples.split_names = '["eval"]'
    model = standard_artifacts.Model()
    model.uri = model_uri
    evaluation = standard_artifacts.ModelEvaluation()
    evaluation.uri = os.path.join(root, "evaluation")
    blessing = standard_artifacts.ModelBlessing()
    blessing.uri = os.path.join(root, "blessing")
    for artifact in (evaluation, blessing):
        os.makedirs(artifact.uri, exist_ok=True)
    context = base_beam_executor.BaseBeamExecutor.Context(
        beam_pipeline_args=BEAM_ARGS, extra_flags=[request.to_flag()], tmp_dir=os.path.join(root, "tmp"), unique_id="1"
    )
    Executor(context).Do(
        {"examples": [examples], "model": [model]},
        {"evaluation": [evaluation], "blessing": [blessing]},
        {"eval_config": "", "example_splits": '["eval"]', **(exec_properties or {})},
    )
    return {
        "evaluation": evaluation.uri,
        "blessing": blessing.uri,
        "blessed": blessing.get_int_custom_property("blessed"),
    }


# TFX's `custom_extractors` hook names a function by module path (and reloads that module first).
TFMA_DEFAULT_EXTRACTORS = f"{__name__}.tfma_default_extractors"
RECORDING_EXTRACTORS = f"{__name__}.recording_extractors"
RECORD_ENV = "YTFX_TEST_TRIM_RECORD"


def tfma_default_extractors(eval_shared_model, eval_config, tensor_adapter_config=None) -> list:
    """TFMA's own extractors, as TFX runs them without the hook."""
    import tensorflow_model_analysis as tfma

    return tfma.default_extractors(
        eval_shared_model=eval_shared_model, eval_config=eval_config, tensor_adapter_config=tensor_adapter_config
    )


def _record_keys(extract: dict) -> dict:
    with open(os.environ[RECORD_ENV], "a", encoding="utf-8") as handle:
        handle.write(",".join(sorted(extract)) + "\n")
    return extract


def recording_extractors(eval_shared_model, eval_config, tensor_adapter_config=None) -> list:
    """Our extractors, each trimmed batch's keys appended to the file named by `$YTFX_TEST_TRIM_RECORD`."""
    import apache_beam as beam
    import tensorflow_model_analysis as tfma

    from components.evaluator import extractors

    found = extractors.custom_extractors(eval_shared_model, eval_config, tensor_adapter_config)
    at = [e.stage_name for e in found].index(extractors.TRIM_STAGE_NAME) + 1
    record = tfma.extractors.Extractor(stage_name="RecordTrimmedKeys", ptransform=beam.Map(_record_keys))
    return found[:at] + [record] + found[at:]
