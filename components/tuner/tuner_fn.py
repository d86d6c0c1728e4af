"""The built-in `tuner_fn` (TFX's Tuner calls it): KerasTuner over the model the Trainer builds.

`fn_args.custom_config` is the Trainer's (`components.trainer.run_fn`) plus
`tuning` (the spec's section as a dict). Each trial builds the model with
`run_fn.build_compiled_model` and reads the data with `run_fn`'s
`build_datasets`, the trial's knob values overriding the spec's
(`components.trainer.hyperparameters.with_hyperparameters`), so a trial trains
what the Trainer would train with those values. Trials are scored on the eval
split (`val_<objective>`), the direction from the metric. With
`tuning.parallel_trials` above 1, `TrialRunner.search` runs the trials in
worker processes through KerasTuner's distributed mode
(`components.tuner.parallel`).

`TrialRunner` overrides `run_trial`, KerasTuner's documented hook for a
custom training loop: it builds, fits and returns the last epoch's metrics
(what the model the trial ends with scores; KerasTuner's own loop would keep
its best epoch and save a checkpoint per epoch), and the oracle (random,
Bayesian, Hyperband) works as it does for any tuner. Hyperband's rounds train
from scratch for the round's epochs (no weights are carried between rounds).
KerasTuner is pinned to 1.3.5 (`requirements.lock`): 1.4 and later accept
Keras 3 models only, and TFX 1.16 trains Keras 2 (tf-keras) models.
"""

from __future__ import annotations

import math
from typing import Any

import keras_tuner
import tensorflow as tf
import tensorflow_transform as tft
from absl import logging
from tfx.components.tuner.component import TunerFnResult

from components.evaluator.metrics import METRICS
from components.trainer.hyperparameters import knob_values, with_hyperparameters
from components.trainer.options import TrainingOptions
from components.trainer.run_fn import build_compiled_model, build_datasets
from components.trainer.training.trainer_model import StepTimer
from components.transform.config import TransformConfig
from components.tuner import parallel
from components.tuner.search_space import declare_knobs
from serving.custom_ops import register_ops_for_saved_model

__all__ = ["tuner_fn", "objective", "SpecHyperModel", "TrialRunner"]


def objective(name: str) -> keras_tuner.Objective:
    """The trial score: `val_<name>` on the eval split; losses and errors down, the other metrics up."""
    if name == "loss":
        return keras_tuner.Objective("val_loss", "min")
    return keras_tuner.Objective(f"val_{name}", "max" if METRICS[name].higher_is_better else "min")


class SpecHyperModel(keras_tuner.HyperModel):
    """The spec's model and input pipeline, with a trial's knob values over the spec's values."""

    def __init__(self, fn_args, tf_transform_output):
        super().__init__(name="spec_model")
        self._fn_args = fn_args
        self._custom = fn_args.custom_config
        self._search_space = self._custom["tuning"]["search_space"]
        self._config = TransformConfig.from_dict(self._custom["transform"])
        self._transform_output = tf_transform_output

    def declare_hyperparameters(self, hp) -> None:
        declare_knobs(hp, self._search_space)

    def _trial_config(self, hp) -> tuple[dict, TrainingOptions]:
        custom = with_hyperparameters(self._custom, hp.values)
        return custom, TrainingOptions.from_dict(custom["training"])

    def build(self, hp):
        custom, options = self._trial_config(hp)
        if options.seed is not None:
            tf.keras.utils.set_random_seed(options.seed)
        return build_compiled_model(
            custom, self._config, self._transform_output, options, 1, StepTimer(), self._fn_args.train_steps
        )

    def fit(self, hp, model, *args, **kwargs):
        custom, options = self._trial_config(hp)
        train, evaluation, _ = build_datasets(
            self._fn_args, self._config, self._transform_output, options, custom["materialized"]
        )
        return model.fit(train, validation_data=evaluation, validation_steps=self._fn_args.eval_steps, **kwargs)


class TrialRunner(keras_tuner.Tuner):
    """A KerasTuner tuner whose trials build and fit tf-keras models (see the module docstring).

    Args:
      workers: trial processes (`parallel.worker_count`); 1: trials run in this process.
      fn_args_record: `parallel.fn_args_record(fn_args)`, what the trial processes build from.
    """

    def __init__(self, *args, workers: int = 1, fn_args_record: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self._workers = workers
        self._fn_args_record = fn_args_record

    def search(self, *fit_args, **fit_kwargs):
        if self._workers <= 1 or parallel.in_trial_process():
            return super().search(*fit_args, **fit_kwargs)
        parallel.search_in_processes(self._fn_args_record, self._workers, fit_kwargs)
        self.reload()  # the oracle the chief saved: every trial, as after a search in this process
        return None

    def search_space_summary(self, extended: bool = False) -> None:
        # KerasTuner prints to stdout; the run's console shows one summary line at the end instead.
        logging.info("Tuner search space: %s", self.oracle.get_space().get_config()["space"])

    def results_summary(self, num_trials: int = 10) -> None:
        for trial in self.oracle.get_best_trials(num_trials):
            logging.info(
                "Tuner trial %s: score %s, %s", trial.trial_id, trial.score, knob_values(trial.hyperparameters.values)
            )

    def run_trial(self, trial, *args, **kwargs) -> dict[str, float]:
        hp = trial.hyperparameters
        kwargs = dict(kwargs)
        if "tuner/epochs" in hp.values:  # Hyperband: this round's epochs
            kwargs["epochs"] = hp.values["tuner/epochs"]
        logging.info("Tuner trial %s: %s", trial.trial_id, knob_values(hp.values))
        model = self.hypermodel.build(hp)
        history = self.hypermodel.fit(hp, model, *args, **kwargs)
        tf.keras.backend.clear_session()
        # The last epoch's values: what the model the trial ends with scores.
        return {name: float(values[-1]) for name, values in history.history.items()}


def _oracle(tuning: dict[str, Any]):
    common = {"objective": objective(tuning["objective"]), "seed": tuning.get("seed", 0)}
    if tuning["algorithm"] == "bayesian":
        return keras_tuner.oracles.BayesianOptimizationOracle(max_trials=tuning["max_trials"], **common)
    if tuning["algorithm"] == "hyperband":
        oracle = keras_tuner.oracles.HyperbandOracle(max_epochs=tuning["max_epochs"], factor=3, **common)
        oracle.max_trials = tuning["max_trials"]  # Hyperband's brackets stop at this many trials too
        return oracle
    return keras_tuner.oracles.RandomSearchOracle(max_trials=tuning["max_trials"], **common)


def tuner_fn(fn_args) -> TunerFnResult:
    """Builds the tuner and the `search` arguments (TFX Tuner entry point).

    Args:
      fn_args: TFX's FnArgs: `train_files`, `eval_files`, `train_steps` (per trial), `eval_steps`,
        `transform_graph_path`, `working_dir`, `custom_config` (the Trainer's, plus `tuning`).

    Returns:
      The tuner (trials under `working_dir`) and the keyword arguments of `tuner.search`.
    """
    tuning = fn_args.custom_config["tuning"]
    workers = parallel.worker_count(tuning.get("parallel_trials", 1), tuning["max_trials"])
    tf_transform_output = tft.TFTransformOutput(fn_args.transform_graph_path)
    register_ops_for_saved_model(tf_transform_output.transform_savedmodel_dir)
    tuner = TrialRunner(
        oracle=_oracle(tuning),
        hypermodel=SpecHyperModel(fn_args, tf_transform_output),
        directory=fn_args.working_dir,
        project_name="trials",
        overwrite=not parallel.in_trial_process(),  # the trial processes share the Tuner's project
        workers=workers,
        fn_args_record=parallel.fn_args_record(fn_args) if workers > 1 else None,
    )
    if tuning["algorithm"] == "hyperband":  # an epoch is a share of the trial's steps; Hyperband picks how many
        fit = {"steps_per_epoch": max(1, math.ceil(fn_args.train_steps / tuning["max_epochs"])), "epochs": 1}
    else:
        fit = {"steps_per_epoch": fn_args.train_steps, "epochs": 1}
    return TunerFnResult(tuner=tuner, fit_kwargs={**fit, "verbose": 0})
