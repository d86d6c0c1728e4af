"""The Trainer's input: the tf.data pipeline over the (transformed) examples and the train/eval datasets."""
