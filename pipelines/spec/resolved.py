"""A spec with its paths resolved: what the compiler and runners work from."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re

from components.common.csv_dialect import CsvDialect
from components.example_gen.spans import Span
from pipelines.spec.models import PipelineSpec

__all__ = ["ResolvedSpec", "resolve_path", "sql_export_path", "sql_span_pattern"]

_PACKAGE_SCHEME = "package://"
_URI = re.compile(r"^[a-z][a-z0-9+.-]*://")


def sql_export_path(root: str) -> str:
    """Where a run's `data.sql` rows are exported (one Parquet file in the pipeline root)."""
    return os.path.join(root, "data", "query.parquet")


def sql_span_pattern(root: str) -> str:
    """Where a `data.sql` with `{SPAN}` exports each span's rows: a file-span pattern in the pipeline root."""
    return os.path.join(root, "data", "sql", "span-{SPAN}", "query.parquet")


def _data_path(spec: PipelineSpec, base_dir: str, root: str) -> str:
    """`data.path` resolved; for a query, the file(s) its rows are exported to, which the run reads (`sql_source`)."""
    if spec.data.path:
        return resolve_path(spec.data.path, base_dir)
    return sql_span_pattern(root) if spec.data.spanned_query else sql_export_path(root)


def resolve_path(path: str, base_dir: str) -> str:
    """Resolves a spec path: `package://pkg/sub` inside an installed package,
    `~` to the home folder, relative paths against `base_dir`; other URIs
    (`gs://bucket/x`) stay as they are."""
    if path.startswith(_PACKAGE_SCHEME):
        package, _, rest = path[len(_PACKAGE_SCHEME) :].partition("/")
        try:
            found = importlib.util.find_spec(package) if package else None
        except (ImportError, ValueError):
            found = None
        if found is None:
            return os.path.join(f"<package `{package}` is not installed>", rest)
        if not found.submodule_search_locations:
            return os.path.join(f"<`{package}` is a module, not a package>", rest)
        return os.path.join(list(found.submodule_search_locations)[0], rest)
    if _URI.match(path):
        return path  # gs://, s3://, ...: an object store, resolved by whoever reads it
    path = os.path.expanduser(path)
    return os.path.abspath(os.path.join(base_dir, path))


@dataclasses.dataclass(frozen=True)
class ResolvedSpec:
    """The spec plus absolute paths and defaults filled in."""

    spec: PipelineSpec
    spec_file: str
    root: str
    data_path: str
    schema_path: str | None
    serving_dir: str
    model_name: str
    data_files: tuple[str, ...] = ()
    data_format: str = "csv"
    label_scale: tuple[float, float] | None = None  # regression: the label's (mean, std) over the data
    csv_dialect: CsvDialect = CsvDialect()  # how CSV cells are separated (`data.delimiter`, `skip_initial_space`)
    columns: tuple[str, ...] = ()
    numeric_columns: frozenset[str] = frozenset()
    spans: tuple[Span, ...] = ()  # `{SPAN}`/date placeholders in `data.path` (or `data.sql`): every span, oldest first
    ingest_span: int | None = None  # the span this run's ExampleGen ingests (None: TFX's driver takes the newest)
    transform_module_file: str | None = None  # `transform.module_file`, absolute
    training_module_file: str | None = None  # `training.module_file`, absolute

    @property
    def name(self) -> str:
        return self.spec.pipeline.name

    @property
    def metadata_path(self) -> str:
        return os.path.join(self.root, "metadata.sqlite")

    @property
    def artifact_root(self) -> str:
        return os.path.join(self.root, "artifacts")

    @property
    def log_dir(self) -> str:
        return os.path.join(self.root, "logs")

    @classmethod
    def from_spec(cls, spec: PipelineSpec, spec_file: str, cwd: str | None = None) -> ResolvedSpec:
        base_dir = os.path.dirname(os.path.abspath(spec_file))
        cwd = cwd or os.getcwd()
        root = (
            resolve_path(spec.pipeline.root, base_dir)
            if spec.pipeline.root
            else os.path.join(cwd, "runs", spec.pipeline.name)
        )
        serving_dir = (
            resolve_path(spec.push.serving_dir, base_dir) if spec.push.serving_dir else os.path.join(root, "serving")
        )
        return cls(
            spec=spec,
            spec_file=os.path.abspath(spec_file),
            root=root,
            data_path=_data_path(spec, base_dir, root),
            schema_path=resolve_path(spec.schema, base_dir) if spec.schema else None,
            serving_dir=serving_dir,
            model_name=spec.push.model_name or spec.pipeline.name,
            transform_module_file=resolve_path(spec.transform.module_file, base_dir)
            if spec.transform.module_file
            else None,
            training_module_file=resolve_path(spec.training.module_file, base_dir)
            if spec.training.module_file
            else None,
        )
