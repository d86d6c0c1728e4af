"""The Keras model class the Trainer fits: gradient accumulation and input-wait timing.

`TrainerModel` is a functional Keras model (`as_trainer_model` re-wraps any
functional model around the same layers, so no weight is copied) with two
changes to `fit`:

- Gradient accumulation. With `accumulation_steps = N > 1`, every element of
  the training dataset holds N micro-batches stacked along the batch axis; one
  train step runs forward and backward on each micro-batch in turn (a
  `tf.while_loop`, so only one micro-batch's activations are alive at a
  time; unrolled under XLA), sums the gradients and applies their mean once. That equals one step
  on the whole N-times-larger batch, and the optimizer's `iterations` counts
  optimizer updates. Doing it inside one step (rather than applying every N-th
  call) keeps `apply_gradients` out of a `tf.cond`, where cross-replica
  all-reduce is not allowed, so it works under every distribution strategy.
- Timing. The train function records, inside the graph, how long each step
  waited for `next(iterator)` and how long the whole step took, into a
  `StepTimer`; `steps_per_execution` and XLA work as in Keras.

Example:
    >>> model = as_trainer_model(functional_model, accumulation_steps=4)
    >>> model.step_timer = StepTimer()
"""

from __future__ import annotations

import tensorflow as tf

__all__ = ["TrainerModel", "StepTimer", "as_trainer_model"]


class StepTimer:
    """In-graph totals of step time and of the part spent waiting for input.

    A plain object (not a `tf.Module`) so Keras neither tracks nor
    checkpoints its variables. Create it outside any `strategy.scope()`: the
    variables are local to the process.
    """

    def __init__(self):
        self.input_seconds = tf.Variable(0.0, dtype=tf.float64, trainable=False, name="input_wait_seconds")
        self.step_seconds = tf.Variable(0.0, dtype=tf.float64, trainable=False, name="step_seconds")
        self.steps = tf.Variable(0, dtype=tf.int64, trainable=False, name="timed_steps")

    def record(self, input_seconds: tf.Tensor, step_seconds: tf.Tensor) -> None:
        self.input_seconds.assign_add(input_seconds)
        self.step_seconds.assign_add(step_seconds)
        self.steps.assign_add(1)

    def totals(self) -> dict[str, float]:
        """Returns `{"steps", "input_seconds", "step_seconds"}` so far."""
        return {
            "steps": int(self.steps.numpy()),
            "input_seconds": float(self.input_seconds.numpy()),
            "step_seconds": float(self.step_seconds.numpy()),
        }


def _first_replica(strategy: tf.distribute.Strategy, outputs):
    """Keras's default `distribute_reduction_method`: the first local replica's value."""
    return tf.nest.map_structure(lambda value: strategy.experimental_local_results(value)[0], outputs)


class TrainerModel(tf.keras.Model):
    """A Keras model whose `fit` accumulates gradients and times input waits.

    Set `accumulation_steps` and `step_timer` as attributes after building
    (see `as_trainer_model`).
    """

    accumulation_steps: int = 1
    step_timer: StepTimer | None = None

    def train_step(self, data):
        if self.accumulation_steps == 1:
            return super().train_step(data)
        return self._accumulating_train_step(data)

    def _accumulating_train_step(self, data):
        x, y, sample_weight = tf.keras.utils.unpack_x_y_sample_weight(data)
        steps = self.accumulation_steps

        def micro_batches(tensor):
            if tensor is None:
                return None
            if tensor.shape.is_fully_defined():  # static shapes: XLA needs them
                return tf.reshape(tensor, [steps, tensor.shape[0] // steps, *tensor.shape[1:]])
            batch = tf.shape(tensor)[0] // steps
            return tf.reshape(tensor, tf.concat([[steps, batch], tf.shape(tensor)[1:]], axis=0))

        x, y, sample_weight = tf.nest.map_structure(micro_batches, (x, y, sample_weight))
        variables = self.trainable_variables

        def body(index, sums):
            x_i, y_i, w_i = tf.nest.map_structure(lambda t: None if t is None else t[index], (x, y, sample_weight))
            with tf.GradientTape() as tape:
                y_pred = self(x_i, training=True)
                loss = self.compute_loss(x_i, y_i, y_pred, w_i)
            gradients = [g for g, _ in self.optimizer.compute_gradients(loss, variables, tape=tape)]
            self.compiled_metrics.update_state(y_i, y_pred, w_i)
            return index + 1, [s + _dense(g, v) for s, g, v in zip(sums, gradients, variables)]

        sums = [tf.zeros_like(v) for v in variables]
        if self.jit_compile:
            # XLA cannot compile some layers (CategoryEncoding's bincount) inside
            # a while loop; unrolled, XLA's buffer assignment still reuses memory.
            for index in range(steps):
                _, sums = body(index, sums)
        else:
            _, sums = tf.while_loop(lambda index, _: index < steps, body, (tf.constant(0), sums))
        self.optimizer.apply_gradients(zip([s / steps for s in sums], variables))
        return self.get_metrics_result()

    def make_train_function(self, force: bool = False):
        """Keras's train function, with `next(iterator)` and the step timed in-graph."""
        if self.train_function is not None and not force:
            return self.train_function
        if self.step_timer is None or self._cluster_coordinator is not None:
            return super().make_train_function(force=force)
        strategy = self.distribute_strategy
        timer = self.step_timer

        def run_step(data):
            outputs = self.train_step(data)
            with tf.control_dependencies(tf.nest.flatten(outputs)):
                self._train_counter.assign_add(1)
            return outputs

        if self.jit_compile:
            run_step = tf.function(run_step, jit_compile=True, reduce_retracing=True)

        def one_step(iterator):
            started = tf.timestamp()
            with tf.control_dependencies([started]):
                data = next(iterator)
            with tf.control_dependencies(tf.nest.flatten(data, expand_composites=True)):
                fetched = tf.timestamp()
            outputs = _first_replica(strategy, strategy.run(run_step, args=(data,)))
            with tf.control_dependencies(tf.nest.flatten(outputs)):
                finished = tf.timestamp()
            timer.record(fetched - started, finished - started)
            return outputs

        def train_function(iterator):
            outputs = one_step(iterator)
            for _ in tf.range(self._steps_per_execution - 1):
                outputs = one_step(iterator)
            return outputs

        if not self.run_eagerly:
            train_function = tf.function(train_function, reduce_retracing=True)
            self.train_tf_function = train_function
        self.train_function = train_function
        return train_function


def _dense(gradient, variable: tf.Variable) -> tf.Tensor:
    """A gradient as a dense tensor (embeddings give IndexedSlices); zeros when None."""
    if gradient is None:
        return tf.zeros_like(variable)
    return tf.convert_to_tensor(gradient)


def as_trainer_model(model: tf.keras.Model, accumulation_steps: int = 1) -> TrainerModel:
    """Re-wraps a functional model's graph of layers as a `TrainerModel` (weights shared).

    Args:
      model: a functional (or Sequential) Keras model, not compiled.
      accumulation_steps: micro-batches per optimizer update (1: none).

    Returns:
      A `TrainerModel` over the same layers and weights.

    Raises:
      ValueError: `model` is a subclassed model without symbolic inputs.
    """
    if not getattr(model, "_is_graph_network", False):
        raise ValueError(
            f"gradient accumulation and input timing need a functional Keras model. Received: "
            f"{type(model).__name__}, a subclassed model. Build it with `tf.keras.Model(inputs, outputs)`."
        )
    wrapped = TrainerModel(inputs=model.inputs, outputs=model.outputs, name=model.name)
    wrapped.accumulation_steps = accumulation_steps
    return wrapped
