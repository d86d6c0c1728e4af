"""Runners that execute a compiled pipeline."""
