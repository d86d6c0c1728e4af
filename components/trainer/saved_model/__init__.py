"""The exported SavedModel: its signatures over raw features, their input names and class outputs."""
