"""What the input data looks like, read before anything runs: files, columns, types, missing cells, images.

`data_checks` lists a spec's data files and profiles CSV and TFRecord data
(`csv_profile_fast` for large CSVs), `format_profile` Parquet, Avro and JSON
Lines, `image_profile` image folders; each returns a `DataProfile`
(`data_profile`) or raises `DataProblem` naming the file and row. Nothing here
knows the spec: the spec rules (`pipelines.spec.column_rules`) decide what a
profile means for a spec.
"""
