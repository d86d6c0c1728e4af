"""Keeps AutoGraph from converting tf-keras' own code.

TensorFlow 2.16 lists `keras` among the modules AutoGraph never converts,
but not `tf_keras`, where Keras 2 lives now. So every tf.function that calls
a Keras 2 layer (Keras' train step, SavedModel export) has AutoGraph rewrite
tf-keras' source first, which makes the first `fit` call several times
slower. This rule adds `tf_keras` to the do-not-convert list.
"""

from __future__ import annotations

from compat import tensorflow as compat_tf

__all__ = ["skip_autograph_for_tf_keras"]

_DONE = False


def skip_autograph_for_tf_keras() -> None:
    """Adds `tf_keras` to AutoGraph's do-not-convert rules (idempotent)."""
    global _DONE
    if _DONE:
        return
    compat_tf.skip_autograph_for("tf_keras")
    _DONE = True
