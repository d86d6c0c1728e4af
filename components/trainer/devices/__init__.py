"""Where and at what precision training runs: the `tf.distribute` strategy, the Keras dtype policy, the
accelerator memory a step needs, and GPU utilisation sampling."""
