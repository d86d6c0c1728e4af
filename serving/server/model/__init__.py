"""A loaded SavedModel version: its signatures, the TF1 session or TF2 functions that run them, and argument binding."""
