"""The built-in Keras models: one package per `model.type` (`dnn`, `wide_and_deep`, `image_classifier`,
`text_classifier`), their registry (`registry`), what they share (`base`: options and the `ModelType` record;
`tower`: table features and the dense tower; `advice`), the model inputs (`model_inputs`) and the entry point
the Trainer calls (`model_builder.build_model`)."""
