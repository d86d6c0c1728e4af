"""This machine's resources for a run: the memory estimate before it starts and Python's GC settings."""
