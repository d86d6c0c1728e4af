"""run_fn's own helpers: the train step is traced once."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from components.trainer.run_fn import _create_optimizer_variables


def _fit_and_count_traces(create_slots_first: bool) -> int:
    tf.keras.utils.set_random_seed(0)
    inputs = tf.keras.Input(shape=(3,))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))
    model.compile(tf.keras.optimizers.Adam(0.01), "mse")
    if create_slots_first:
        _create_optimizer_variables(model)
    x, y = np.ones((8, 3), np.float32), np.ones((8, 1), np.float32)
    model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    return model.train_tf_function.experimental_get_tracing_count()


def test_optimizer_slots_made_up_front_spare_the_second_trace_of_the_train_step():
    assert _fit_and_count_traces(create_slots_first=False) == 2  # slots made while tracing: traced again
    assert _fit_and_count_traces(create_slots_first=True) == 1
