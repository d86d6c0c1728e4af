"""The built-in Tuner's `tuner_fn`: KerasTuner searches the spec's knobs over the model the Trainer builds."""
