"""The fit itself: the Keras model class the Trainer fits, the learning-rate schedule and checkpoints."""
