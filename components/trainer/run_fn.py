"""The built-in Trainer `run_fn`: trains the model the spec declares, on one CPU or many GPUs and workers.

TFX's Trainer calls `run_fn(fn_args)`. `fn_args.custom_config` carries:
- `transform`: the feature table (`TransformConfig.to_dict()`),
- `model`: the spec's model section,
- `training`: the spec's training section (`TrainingOptions`),
- `materialized`: whether `fn_args.train_files` are transformed examples
  (else raw examples, transformed on the fly in the tf.data pipeline),
- `metrics`: Keras metrics to report while training.

With a `tuning:` section, TFX's Trainer also gets the Tuner's best values
(`fn_args.hyperparameters`); they override the spec's `model` and
`training` options (`components.trainer.hyperparameters`).

The strategy is created first (MultiWorkerMirroredStrategy requires it); the
model, optimizer and metrics are built in its scope under the chosen
precision policy. Under several workers only the chief writes the serving
model, TensorBoard logs, the training summary and metrics; the others export
to a temporary directory that is removed.
"""

from __future__ import annotations

import math
import os
import shutil
import time

import tensorflow as tf
import tensorflow_transform as tft
from absl import logging

from compat import keras as compat_keras
from components.common.autograph_rules import skip_autograph_for_tf_keras
from components.trainer.devices import precision
from components.trainer.devices import strategy as strategy_lib
from components.trainer.devices.accelerator_memory import log_estimate as log_memory_estimate
from components.trainer.hyperparameters import knob_values, with_hyperparameters
from components.trainer.input import input_pipeline
from components.trainer.input.datasets import build_datasets
from components.trainer.models import model_builder, model_inputs
from components.trainer.monitoring import summary
from components.trainer.monitoring.performance import PerformanceMonitor, input_bound_advice
from components.trainer.monitoring.pipeline_run import pipeline_run_labels
from components.trainer.monitoring.prometheus import MetricsExporter
from components.trainer.options import TrainingOptions
from components.trainer.saved_model import export
from components.trainer.training import checkpoints
from components.trainer.training.learning_rate import learning_rate as learning_rate_over_steps
from components.trainer.training.trainer_model import StepTimer, as_trainer_model
from components.trainer.training.warm_start import warm_start
from components.transform.config import TransformConfig, vocabulary_name
from serving.custom_ops import register_ops_for_saved_model

__all__ = ["run_fn", "build_datasets", "build_compiled_model", "compile_model"]

skip_autograph_for_tf_keras()

_OPTIMIZERS = {
    "adam": tf.keras.optimizers.Adam,
    "sgd": tf.keras.optimizers.SGD,
    "rmsprop": tf.keras.optimizers.RMSprop,
    "adagrad": tf.keras.optimizers.Adagrad,
}
_KERAS_METRICS = {
    "binary_accuracy": lambda: tf.keras.metrics.BinaryAccuracy(name="binary_accuracy"),
    "auc": lambda: tf.keras.metrics.AUC(name="auc"),
    "precision": lambda: tf.keras.metrics.Precision(name="precision"),
    "recall": lambda: tf.keras.metrics.Recall(name="recall"),
    "mean_squared_error": lambda: tf.keras.metrics.MeanSquaredError(name="mean_squared_error"),
    "mean_absolute_error": lambda: tf.keras.metrics.MeanAbsoluteError(name="mean_absolute_error"),
    "root_mean_squared_error": lambda: tf.keras.metrics.RootMeanSquaredError(name="root_mean_squared_error"),
}


def compile_model(
    model: tf.keras.Model,
    config: TransformConfig,
    training: dict,
    metrics: list[str],
    learning_rate=None,
    jit_compile: bool = False,
) -> None:
    """Compiles with the spec's optimizer, the task's loss and the Keras metrics that exist.

    Args:
      model: the model (built in the strategy's scope).
      config: gives the task (classification or regression).
      training: the `training` section (`optimizer`, `learning_rate`, `steps_per_execution`).
      metrics: evaluation metric names; those Keras has are reported while training.
      learning_rate: overrides `training["learning_rate"]` (e.g. scaled for replicas): a float or a schedule.
      jit_compile: compile the train step with XLA.
    """
    rate = learning_rate if learning_rate is not None else training["learning_rate"]
    optimizer = _OPTIMIZERS[training.get("optimizer", "adam")](learning_rate=rate)
    model.compile(
        optimizer=optimizer,
        loss=training_loss(config),
        metrics=keras_metrics(config, metrics),
        steps_per_execution=training.get("steps_per_execution", 1),
        jit_compile=jit_compile,
    )


def training_loss(config: TransformConfig) -> str:
    """The Keras loss for the label: binary or sparse categorical cross-entropy, or mean squared error.

    Args:
      config: the label's task and classes.

    Returns:
      The loss name (the label is the class index; a multi-class model outputs softmax scores).
    """
    if config.task != "classification":
        return "mean_squared_error"
    return "sparse_categorical_crossentropy" if config.num_classes > 2 else "binary_crossentropy"


def keras_metrics(config: TransformConfig, metrics: list[str]) -> list[tf.keras.metrics.Metric]:
    """The Keras metrics reported while training: those of `metrics` that fit the label.

    A multi-class label reports `accuracy` (sparse categorical: the index of the
    highest score against the class index) instead of the binary metrics.

    Args:
      config: the label's task and classes.
      metrics: the spec's evaluation metric names.

    Returns:
      New metric objects (create them in the strategy's scope).
    """
    if config.task == "classification" and config.num_classes > 2:
        return [tf.keras.metrics.SparseCategoricalAccuracy(name="accuracy")]
    found = [_KERAS_METRICS[m]() for m in metrics if m in _KERAS_METRICS]
    if config.task == "classification" and "accuracy" in metrics:
        found.append(tf.keras.metrics.BinaryAccuracy(name="accuracy"))
    return found


def _vocabulary_sizes(config: TransformConfig, tf_transform_output) -> dict[str, int]:
    return {
        name: tf_transform_output.vocabulary_size_by_name(vocabulary_name(name))
        for name, feature in config.features.items()
        if feature["transform"] in ("vocabulary", "text")
    }


def build_compiled_model(
    custom: dict, config, tf_transform_output, options: TrainingOptions, replicas: int, timer, total_steps: int
):
    """Builds, wraps and compiles the spec's model (call inside the strategy and precision scopes).

    Args:
      custom: the Trainer's `custom_config` (`model`, `metrics`, `label_scale`).
      config: the feature table and label.
      tf_transform_output: the Transform graph (vocabulary sizes, the model's inputs).
      options: the `training` section (optimizer, learning rate and its schedule, accumulation, XLA).
      replicas: replicas in sync (the linear learning-rate scaling).
      timer: the `StepTimer` the wrapped model reports its steps to.
      total_steps: optimizer steps of the run (the learning-rate decay).
    """
    sizes = _vocabulary_sizes(config, tf_transform_output)
    inputs = model_inputs.from_transform_output(config, tf_transform_output, sizes)  # with a user transform's extras
    model = model_builder.build_model(config, custom["model"], sizes, inputs, custom.get("label_scale"))
    model_builder.check_head(model, config)
    if compat_keras.is_compiled(model):  # a user builder may compile its own model
        if options.gradient_accumulation_steps > 1:
            raise ValueError(
                "`training.gradient_accumulation_steps` needs the Trainer to compile the model. Expected an "
                "uncompiled model from `model.build_model`. Received: a compiled model. Remove the `compile` call "
                "from your builder, or set gradient_accumulation_steps: 1."
            )
        return model
    model = as_trainer_model(model, options.gradient_accumulation_steps)
    model.step_timer = timer
    compile_model(
        model,
        config,
        {
            "optimizer": options.optimizer,
            "learning_rate": options.learning_rate,
            "steps_per_execution": options.steps_per_execution,
        },
        custom.get("metrics", []),
        learning_rate=learning_rate_over_steps(
            options.scaled_learning_rate(replicas), options.warmup_steps, options.decay, total_steps
        ),
        jit_compile=options.xla,
    )
    return model


def _create_optimizer_variables(model: tf.keras.Model) -> None:
    """Creates the optimizer's slots now, not inside the first train step.

    Variables created while `tf.function` traces make it trace the train step
    a second time: 1.3 s of the taxi Trainer's 4.3 s first execution.
    """
    optimizer = getattr(model, "optimizer", None)
    if isinstance(optimizer, tf.keras.optimizers.Optimizer) and model.built:
        optimizer.build(model.trainable_variables)


def _callbacks(fn_args, options: TrainingOptions, chief: bool, monitor: PerformanceMonitor) -> list:
    callbacks = []
    backup = checkpoints.backup_callback(
        fn_args.model_run_dir, options.checkpoint_every_steps, options.steps_per_execution
    )
    if backup is not None:
        callbacks.append(backup)  # first: restores before the others read the step
    callbacks.append(monitor)
    if chief:
        profile = summary.profile_batches(options.profile_steps, options.steps_per_execution)
        # The train graph only with a profile: writing it costs ~0.3 s per run.
        callbacks.append(
            tf.keras.callbacks.TensorBoard(
                fn_args.model_run_dir, update_freq=1, profile_batch=profile, write_graph=bool(profile)
            )
        )
    return callbacks


def _export(model, tf_transform_output, config, fn_args, choice: strategy_lib.StrategyChoice) -> None:
    """All workers save (saving may run collectives); only the chief's copy is kept."""
    # A plain functional model over the same layers: the SavedModel's Keras
    # metadata then names no class of ours.
    serving_model = tf.keras.Model(model.inputs, model.outputs, name=model.name)
    if choice.is_chief:
        export.export_serving_model(serving_model, tf_transform_output, config, fn_args.serving_model_dir)
        return
    temporary = os.path.join(os.path.dirname(fn_args.serving_model_dir), f".workertemp_{choice.task}")
    try:
        export.export_serving_model(serving_model, tf_transform_output, config, temporary)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def _fresh_model(custom: dict, config, tf_transform_output, options: TrainingOptions, replicas: int, total_steps: int):
    """`build_compiled_model` with its own `StepTimer` and its optimizer's variables created (in the strategy's scope)."""
    model = build_compiled_model(custom, config, tf_transform_output, options, replicas, StepTimer(), total_steps)
    _create_optimizer_variables(model)
    return model


def _schedule(fn_args, options: TrainingOptions, replicas: int, warm: bool) -> tuple[int, int, int | None]:
    """(steps per epoch, epochs, train examples or None): `train_steps` in one epoch (`warm_start_steps` when
    `warm`, the model starting from a blessed one), or whole `epochs`."""
    if not options.epochs:
        return options.steps(fn_args.train_steps, warm), 1, None
    examples = input_pipeline.count_records(input_pipeline.list_files(fn_args.train_files))
    steps = max(1, math.ceil(examples / options.global_batch(replicas)))
    logging.info(
        "Training %d epoch(s) of %d steps: %d train examples, global batch %d.",
        options.epochs,
        steps,
        examples,
        options.global_batch(replicas),
    )
    return steps, options.epochs, examples


def run_fn(fn_args) -> None:
    """Trains, evaluates and exports the serving model (TFX Trainer entry point)."""
    run_started = time.perf_counter()
    tuned = getattr(fn_args, "hyperparameters", None)  # TFX's FnArgs has it; hand-made ones may not
    custom = with_hyperparameters(fn_args.custom_config, tuned)
    if tuned:
        logging.info("Training with the Tuner's best values: %s", knob_values(tuned.get("values", tuned)))
    options = TrainingOptions.from_dict(custom["training"])
    choice = strategy_lib.create_strategy(options.strategy, options.gpus, options.gpu_memory_growth)
    if options.seed is not None:
        tf.keras.utils.set_random_seed(options.seed)
    config = TransformConfig.from_dict(custom["transform"])
    policy = precision.choose_policy(options.mixed_precision, precision.gpu_compute_capabilities(choice.gpus))
    tf_transform_output = tft.TFTransformOutput(fn_args.transform_output)
    # A `tokenizer: wordpiece` Transform graph runs tensorflow-text's ops: registered before the graph is loaded.
    register_ops_for_saved_model(tf_transform_output.transform_savedmodel_dir)
    workers = (
        max(strategy_lib.cluster_task_count(strategy_lib.read_tf_config()), 1) if choice.kind == "multi_worker" else 1
    )
    input_pipeline.require_rows(fn_args.train_files, "train")
    input_pipeline.require_rows(fn_args.eval_files, "eval")
    train_data, eval_data, plan = build_datasets(
        fn_args, config, tf_transform_output, options, custom["materialized"], choice.strategy, workers
    )
    logging.info(
        "Training with %s over %d replica(s), precision %s, global batch %d.",
        choice.kind,
        choice.replicas,
        policy,
        options.global_batch(choice.replicas),
    )
    # With `warm_start_steps`, the steps (and the learning rate's schedule over them) depend on whether the
    # model starts from the blessed one: planned from whether there is one, built again cold if it does not fit.
    warm = bool(options.warm_start and options.warm_start_steps and fn_args.base_model)
    steps_per_epoch, epochs, train_examples = _schedule(fn_args, options, choice.replicas, warm)
    with choice.strategy.scope(), precision.policy_scope(policy):
        model = _fresh_model(custom, config, tf_transform_output, options, choice.replicas, steps_per_epoch * epochs)
        # The export's variable list (a plain functional model over the same layers) is what a base model holds.
        started_from = (
            warm_start(tf.keras.Model(model.inputs, model.outputs), fn_args.base_model) if options.warm_start else None
        )
        if warm and started_from.source is None:
            logging.info("Trainer: the model starts cold; training train_steps=%d instead.", fn_args.train_steps)
            warm = False
            steps_per_epoch, epochs, train_examples = _schedule(fn_args, options, choice.replicas, warm)
            model = _fresh_model(
                custom, config, tf_transform_output, options, choice.replicas, steps_per_epoch * epochs
            )
    log_memory_estimate(model, options.batch_size, options.optimizer, options.gradient_accumulation_steps, choice.gpus)
    exporter = None
    if choice.is_chief and (options.metrics_port is not None or options.pushgateway_url):
        exporter = MetricsExporter(
            options.metrics_port,
            options.pushgateway_url,
            grouping=pipeline_run_labels(),  # one Pushgateway group per pipeline run
            gpus=choice.gpus,
            examples_per_step=options.global_batch(choice.replicas),
        )
    monitor = PerformanceMonitor(options.global_batch(choice.replicas), getattr(model, "step_timer", None), exporter)
    started = time.perf_counter()
    try:
        history = model.fit(
            train_data,
            steps_per_epoch=steps_per_epoch,
            epochs=epochs,
            validation_data=eval_data,
            validation_steps=fn_args.eval_steps,
            callbacks=_callbacks(fn_args, options, choice.is_chief, monitor),
            verbose=0,
        )
    finally:
        if exporter is not None:
            exporter.close()
    seconds = time.perf_counter() - started
    checkpoints.remove_empty_checkpoint_dirs(fn_args.model_run_dir)
    _export(model, tf_transform_output, config, fn_args, choice)
    report = summary.training_summary(
        fn_args,
        options,
        choice,
        policy,
        monitor,
        history,
        seconds=seconds,
        wall_seconds=time.perf_counter() - run_started,
        workers=workers,
        optimizer_steps=int(model.optimizer.iterations.numpy()),
        learning_rate=float(tf.keras.backend.get_value(model.optimizer.learning_rate)),
        train_steps=steps_per_epoch * epochs,
        epochs=options.epochs,
        train_examples=train_examples,
    )
    if started_from is not None:
        report.update(started_from.summary())
    if warm:
        report["warm_start_steps"] = options.warm_start_steps
    advice = input_bound_advice(
        report.get("input_wait_fraction") or 0.0,
        plan.materialized,
        plan.fits,  # a split that fits but streams (the run reads few of its rows): a bigger budget would not help
        mean_step_seconds=report.get("mean_step_seconds"),
        on_accelerator=bool(choice.gpus),
    )
    if advice:
        logging.warning("Trainer: %s", advice)
        report["input_advice"] = advice  # shown in the run summary, not only in the log
    logging.info("Training summary: %s", report)
    if choice.is_chief:
        summary.write_summary(fn_args, report)
