"""`{SPAN}` in `data.sql`: a query's rows exported per span, which from then on are file spans.

`data.spans_sql` lists the span numbers (one column of whole numbers >= 0,
e.g. `SELECT DISTINCT year FROM trips`). `validate` (which every run starts
with) runs it, then runs `data.sql` with `{SPAN}` replaced by each listed span
that has no export yet, writing `<root>/data/sql/span-N/query.parquet`
(`resolved.sql_span_pattern`; complete or not at all). The resolved data path
is that `{SPAN}` pattern, so the file spans' machinery (which spans a run
ingests, the window, drift between spans, `--span N`) reads the exports as it
reads delivered files. A span once exported is not queried again (spans are
immutable, as delivered files are); `run --span N` re-exports span N alone
(`export_span`), for a corrected span.

The number replacing `{SPAN}` is an int this module formats (zero-padded to
`N` digits for TFX's `{SPAN:N}`): no text from the database or the user is
spliced into the query. TFX's other placeholders (`{VERSION}`, `{YYYY}`,
`{MM}`, `{DD}`) name parts of file names; a query's span is one number.

Example:
    >>> span_query("SELECT * FROM trips WHERE year = {SPAN} AND code = '{SPAN:4}'", 7)
    "SELECT * FROM trips WHERE year = 7 AND code = '0007'"
"""

from __future__ import annotations

import decimal
import numbers
import os
import re
from collections.abc import Iterator, Mapping

from pipelines.spec.sql_source import Database, SqlProblem, connected

__all__ = ["query_span_problems", "span_query", "span_file", "export_new_spans", "export_span"]

_SPAN = re.compile(r"\{SPAN(?::(\d+))?\}")
_ANY_SPAN = re.compile(r"\{SPAN(:[^}]*)?\}")
_OTHER_PLACEHOLDERS = re.compile(r"\{VERSION(:[^}]*)?\}|\{YYYY\}|\{MM\}|\{DD\}")
_LARGEST_SPAN = 2**63 - 1  # TFX keeps a span in an int64 property


def query_span_problems(data) -> Iterator[tuple[str, str]]:
    """(spec key, message) for each reason `data.sql`/`data.spans_sql` cannot make spans (nothing is run)."""
    other = _OTHER_PLACEHOLDERS.search(data.sql)
    if other:
        yield (
            "data.sql",
            f"`{other.group(0)}` in a query: a query's span is one number, listed by `spans_sql` and put in place "
            "of `{SPAN}`; versions and dates are placeholders of file names (`data.path`). Expected `{SPAN}` alone. "
            f"Received: {other.group(0)}. For dates, have `spans_sql` list day numbers (e.g. "
            "`SELECT DISTINCT day - DATE '1970-01-01' FROM trips` in PostgreSQL) and compare with `{SPAN}` in `sql`.",
        )
    malformed = next((m.group(0) for m in _ANY_SPAN.finditer(data.sql) if not _SPAN.fullmatch(m.group(0))), None)
    if malformed:
        yield (
            "data.sql",
            f"`{malformed}` is not a span placeholder. Expected `{{SPAN}}`, or `{{SPAN:N}}` (the number zero-padded "
            f"to N digits). Received: {malformed}. Write e.g. `WHERE year = {{SPAN}}`.",
        )
    if data.spanned_query and data.spans_sql is None:
        yield (
            "data.spans_sql",
            "`{SPAN}` in `sql` makes the query's rows spans, and nothing lists them. Expected `spans_sql`, a query "
            "returning one column of span numbers. Received: no `spans_sql`. Add e.g. `spans_sql: SELECT DISTINCT "
            "year FROM trips` under `data:`, or remove `{SPAN}` from `sql`.",
        )
    if data.spans_sql is not None and not data.spanned_query:
        yield (
            "data.spans_sql",
            "`spans_sql` lists spans, and `sql` has no `{SPAN}` to put them in. Expected `{SPAN}` in `sql` (e.g. "
            f"`WHERE year = {{SPAN}}`). Received: sql={data.sql!r:.80}. Add `{{SPAN}}` to `sql`, or remove "
            "`spans_sql`.",
        )


def span_query(sql: str, span: int) -> str:
    """`sql` with each `{SPAN}` replaced by `span` (zero-padded to N digits for `{SPAN:N}`)."""
    number = int(span)  # an int we format: nothing else reaches the query
    return _SPAN.sub(lambda match: str(number).zfill(int(match.group(1) or 0)), sql)


def span_file(pattern: str, span: int) -> str:
    """The export of `span` for a `{SPAN}` pattern (`resolved.sql_span_pattern`)."""
    return pattern.replace("{SPAN}", str(int(span)))


def _span_number(value) -> int | None:
    """`value` as a span number, or None when it is not a whole number (booleans and text included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, (float, decimal.Decimal)) and value == value and value == int(value):
        return int(value)
    return None


def _listed_spans(database: Database, spans_sql: str) -> list[int]:
    """The distinct span numbers `spans_sql` returns, ascending.

    Raises:
        SqlProblem: on `data.spans_sql`: the query fails, returns no rows or several columns, or a value that is
            not a whole number >= 0.
    """
    key = "data.spans_sql"
    names, _, rows = database.rows(spans_sql, key)
    if len(names) != 1:
        raise SqlProblem(
            f"`spans_sql` returns {len(names)} columns ({', '.join(names)}). Expected one column of span numbers. "
            "Select the span column alone, e.g. `SELECT DISTINCT year FROM trips`.",
            key,
        )
    if not rows:
        raise SqlProblem(
            f"`spans_sql` returned no rows on `{database.shown}`. Expected one row per span, its number in the "
            "column. Load the first span's rows, or fix `spans_sql` (e.g. `SELECT DISTINCT year FROM trips`).",
            key,
        )
    spans = set()
    for (value,) in rows:
        number = _span_number(value)
        if number is None:
            shown = "NULL" if value is None else f"{str(value)[:40]!r} ({type(value).__name__})"
            raise SqlProblem(
                f"`spans_sql` returned {shown}, which is not a span number. Expected whole numbers >= 0 in its "
                f"column `{names[0]}`. Cast it in the query (e.g. `SELECT DISTINCT CAST({names[0]} AS INTEGER) "
                f"...`), and leave out NULLs (`WHERE {names[0]} IS NOT NULL`).",
                key,
            )
        if not 0 <= number <= _LARGEST_SPAN:
            raise SqlProblem(
                f"`spans_sql` returned {number}, which is not a span number. Expected whole numbers >= 0 (TFX "
                f"numbers spans from 0, in 64 bits) in its column `{names[0]}`. Leave such rows out (e.g. "
                f"`WHERE {names[0]} >= 0`) or shift the numbers in the query.",
                key,
            )
        spans.add(number)
    return sorted(spans)


def _export(database: Database, sql: str, pattern: str, span: int) -> None:
    database.export(
        span_query(sql, span), span_file(pattern, span), what=f"the query for span {span} (which `spans_sql` lists)"
    )


def export_new_spans(
    sql: str, spans_sql: str, connection: str, pattern: str, environ: Mapping[str, str] = os.environ
) -> tuple[list[int], list[int]]:
    """Runs `spans_sql`, then exports each listed span that has no export under `pattern` yet.

    Returns:
        (every listed span, the spans exported now), ascending.

    Raises:
        SqlProblem: the connection fails, `spans_sql` lists no valid spans, or a span's query fails or returns
            no rows (the spans exported before it stay: each file is whole).
    """
    with connected(connection, environ) as database:
        listed = _listed_spans(database, spans_sql)
        new = [span for span in listed if not os.path.isfile(span_file(pattern, span))]
        for span in new:
            _export(database, sql, pattern, span)
    return listed, new


def export_span(sql: str, connection: str, pattern: str, span: int, environ: Mapping[str, str] = os.environ) -> None:
    """Exports span `span` again (`run --span N`: a corrected span); an unchanged span keeps its file and time.

    Raises:
        SqlProblem: the connection fails, or the span's query fails or returns no rows.
    """
    with connected(connection, environ) as database:
        _export(database, sql, pattern, span)
