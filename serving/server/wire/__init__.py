"""The wire formats: tensors in and out of REST JSON and gRPC TensorProto, tf.Example inputs, status and metadata responses."""
