"""The `data:` section: where the examples come from, how they are split and checked."""

import dataclasses
from typing import Literal, Optional

from components.example_gen.spans import has_span_number, has_span_spec

__all__ = ["DEFAULT_NA_VALUES", "DataChecksSpec", "DataSpec"]

DEFAULT_NA_VALUES: tuple[str, ...] = ("", "NA", "N/A", "NaN", "nan", "null")


@dataclasses.dataclass(frozen=True)
class DataChecksSpec:
    """Limits on data defects, checked before training.

    `non_finite`: what an `inf`/`-inf` cell (or `NaN`, when `na_values` does not
    list it) in a numeric column does: `error` stops `validate` naming the file,
    column and row; `impute` treats it as a missing cell. `skew` and `drift`
    are TFDV comparator thresholds between the eval and train statistics
    (L-infinity distance for categorical features, Jensen-Shannon divergence
    for numeric ones, each in [0, 1]); null: not checked. Both compare eval
    with train: `skew` reports it as training/serving skew, `drift` as drift.

    The schema is inferred from the train split only, so a category that only
    eval has is an anomaly; `unseen_categories` is the largest fraction of a
    split's values of one categorical feature that may be such categories
    (default 0.05: rare values go to the vocabulary's OOV bucket, and on small
    data a handful of rows is already 1%; 0: none).

    `sample_rate` (null: every row) has StatisticsGen compute the statistics,
    and so the schema and the checks above, on that fraction of each split's
    rows (TFDV's `StatsOptions.sample_rate`): on millions of rows 0.1 keeps
    the distributions and cuts the time, but a defect in a handful of rows
    (an unseen category, one non-finite cell) may not be sampled.
    """

    non_finite: Literal["error", "impute"] = "error"
    skew: Optional[float] = None
    drift: Optional[float] = None
    unseen_categories: float = 0.05
    sample_rate: Optional[float] = None

    def __post_init__(self):
        if self.sample_rate is not None and not 0.0 < self.sample_rate <= 1.0:
            raise ValueError(
                f"`sample_rate` must be a fraction above 0 and at most 1. Received: sample_rate={self.sample_rate}. "
                "Example: `sample_rate: 0.1` (statistics on 10% of the rows), or null for every row."
            )
        if not 0.0 <= self.unseen_categories < 1.0:
            raise ValueError(
                f"`unseen_categories` must be a fraction, 0 or more and below 1. Received: "
                f"unseen_categories={self.unseen_categories}. Example: `unseen_categories: 0.01` (1%)."
            )
        for name in ("skew", "drift"):
            value = getattr(self, name)
            if value is not None and not 0.0 < value <= 1.0:
                raise ValueError(
                    f"`{name}` must be a threshold above 0 and at most 1. Received: {name}={value}. "
                    f"Example: `{name}: 0.1`, or null to skip the check."
                )


@dataclasses.dataclass(frozen=True)
class DataSpec:
    """Where the examples come from and how they are split.

    `path` is a CSV or TFRecord (tf.Example, optionally GZIP) file, or a folder
    of them, or (`format: image_folder`) a folder with one sub-folder per class
    holding JPEG/PNG files: ExampleGen writes one tf.Example per image with
    `image` (the encoded bytes), `label` (the sub-folder's name), `height` and
    `width`. `splits` maps split names to hash-bucket weights; it must have
    `train` and `eval`. `na_values` lists the CSV cell texts that mean
    "missing" (default: empty, `NA`, `N/A`, `NaN`, `nan`, `null`); a numeric
    column with such cells stays numeric and its gaps are imputed (see
    `FeatureSpec.impute`). A UTF-8 byte-order mark before the header is
    ignored. `delimiter` is the one character between a CSV file's cells
    (default: a tab for `.tsv` files, else `,`), e.g. `";"` for the
    semicolon-separated files of locales with decimal commas, or `"\t"`.
    `skip_initial_space: true` drops the spaces at the start of every cell,
    header names included, for files written `39, State-gov, 13` (UCI's adult
    census data; pandas' `skipinitialspace`). `checks` sets limits on data
    defects (`DataChecksSpec`).

    `format: parquet | avro | jsonl` (or files named `.parquet`/`.pq`,
    `.avro`, `.jsonl`/`.ndjson`, optionally `.gz` for JSON Lines) reads those
    files: column types follow the file's types (booleans are 0/1), nulls and
    text cells in `na_values` are missing, and a list, struct or map column the
    spec uses is refused by `validate`. `flatten: true` reads each struct
    column (an Avro record, a JSON object) as one column per leaf field,
    named `parent__child` (`a__b__c` for a struct in a struct), in `validate`,
    ExampleGen and `predict` alike; lists and maps stay refused.

    `sql` (instead of `path`) is a query whose rows are the data, run through
    SQLAlchemy on `connection`, a SQLAlchemy URL in which `${VAR}` is read from
    the environment (`connection: "${DB_URL}"`, so no password sits in the
    spec). Each run exports the rows once, typed by the database's column
    types, to `<root>/data/query.parquet` (`pipelines/spec/sql_source.py`).
    `{SPAN}` in `sql` makes the query's rows spans: `spans_sql` (required then)
    lists the span numbers, and each span not yet exported is exported, with
    `{SPAN}` replaced by its number, to `<root>/data/sql/span-N/query.parquet`,
    from where the spans are file spans (`pipelines/spec/sql_spans.py`).

    With spans in `path` (TFX's `{SPAN}`, `{VERSION}`,
    `{YYYY}`/`{MM}`/`{DD}`) or in `sql`, `window` is how many of the newest
    spans Transform's analysis and the Trainer read (default 1: the newest only).
    """

    path: Optional[str] = None
    sql: Optional[str] = None
    spans_sql: Optional[str] = None
    connection: Optional[str] = None
    format: Optional[Literal["csv", "tfrecord", "image_folder", "parquet", "avro", "jsonl"]] = None
    window: int = 1
    splits: dict[str, int] = dataclasses.field(default_factory=lambda: {"train": 2, "eval": 1})
    na_values: list[str] = dataclasses.field(default_factory=lambda: list(DEFAULT_NA_VALUES))
    delimiter: Optional[str] = None
    skip_initial_space: bool = False
    flatten: bool = False
    checks: DataChecksSpec = dataclasses.field(default_factory=DataChecksSpec)

    def __post_init__(self):
        if (self.path is None) == (self.sql is None):
            raise ValueError(
                "`data` needs either `path` (a file or folder of data) or `sql` (a query, with `connection`). "
                f"Received: {'both' if self.path is not None else 'neither'}. Example: `path: data.csv`, or "
                '`sql: "SELECT * FROM trips"` and `connection: "${DB_URL}"`.'
            )
        if (self.sql is None) != (self.connection is None):
            raise ValueError(
                "`sql` and `connection` go together: the query and the database it runs on. "
                f"Received: sql={self.sql!r:.60}, connection={'set' if self.connection else None}. "
                'Example: `sql: "SELECT * FROM trips"` and `connection: "${DB_URL}"` (a SQLAlchemy URL).'
            )
        if self.spans_sql is not None and self.sql is None:
            raise ValueError(
                "`spans_sql` lists the span numbers of a query: it goes with `sql` holding `{SPAN}`. Received: "
                "spans_sql with `path`. Remove `spans_sql` (a path names its spans with `{SPAN}` in the file names)."
            )
        if self.sql is not None and self.format is not None:
            raise ValueError(
                f"`format` is for files; a query's rows have their database's types. Received: format={self.format}. "
                "Remove `format`."
            )
        if self.window < 1:
            raise ValueError(
                f"`window` is how many of the newest spans training reads. Expected a whole number >= 1. Received: "
                f"window={self.window}. Example: `window: 3`."
            )
        if self.delimiter is not None and (len(self.delimiter) != 1 or self.delimiter in '"\r\n'):
            raise ValueError(
                "`delimiter` must be one character other than a quote or a line break. "
                f'Received: delimiter={self.delimiter!r}. Example: `delimiter: ";"`, or `delimiter: "\\t"` for tabs.'
            )
        if self.flatten and (self.sql is not None or self.format in ("csv", "tfrecord", "image_folder")):
            raise ValueError(
                "`flatten` reads struct columns of Parquet, Avro or JSON Lines files. Received: "
                f"flatten=true with {'`sql`' if self.sql is not None else f'format={self.format}'}, whose "
                "columns are flat. Remove `flatten`."
            )
        for name in ("delimiter", "skip_initial_space"):
            if getattr(self, name) not in (None, False) and self.format not in (None, "csv"):
                raise ValueError(
                    f"`{name}` is for CSV files. Received: format={self.format}, {name}={getattr(self, name)!r}. "
                    f"Remove `{name}`."
                )

    @property
    def spanned_query(self) -> bool:
        """`{SPAN}` in `sql`: the query's rows are exported per span (`pipelines/spec/sql_spans.py`)."""
        return self.sql is not None and has_span_number(self.sql)

    @property
    def has_spans(self) -> bool:
        """Whether the data comes in spans: placeholders in `path`, or `{SPAN}` in `sql`."""
        return has_span_spec(self.path) if self.path is not None else self.spanned_query
