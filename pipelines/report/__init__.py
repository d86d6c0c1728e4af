"""The self-contained HTML report of a pipeline run."""
