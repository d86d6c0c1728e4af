"""What a run leaves behind, read by the runners, the report, the history and the UI.

- `results`: how each component ended (`ComponentResult`).
- `metadata_file`: opening a pipeline's ML Metadata file, with a clear error when it is unreadable.
- `summary`: a run's summary (artifacts, verdict, reasons) read from ML Metadata.
- `fingerprint`: what makes two runs the same (spec, data, code), recorded with each run.
"""
