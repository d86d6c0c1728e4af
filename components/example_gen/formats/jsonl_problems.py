"""What is wrong in a JSON Lines file pyarrow refused: the file line at fault, and the fault.

pyarrow's "in row N" counts rows from 0 within one block of the file, and a line cut short runs into
the next, so its message names neither the line nor the fault. `jsonl_problem` reads the file again
with the json module, only on that error path.
"""

from __future__ import annotations

import gzip

__all__ = ["jsonl_problem"]


def jsonl_problem(path: str, err: Exception) -> str:
    """The message for a JSON Lines file pyarrow refused, naming the file's line (counted from 1) at fault.

    pyarrow's "in row N" counts rows from 0 within one block of the file, and a line cut short runs into the
    next (`{"a": 1, "b":` and a newline read the next line's object as `b`'s value: "changed from number to
    object"), so its message names neither the line nor the fault. On this error path the file is read again
    with the json module, line by line, up to the first line that is not one JSON object or whose key holds
    another type than on an earlier line.
    """
    try:
        fault = _first_bad_line(path)
    except (OSError, EOFError):
        fault = None
    if fault is None:
        return (
            f"{path} is not readable JSON Lines ({err}). Expected one JSON object per line, each key holding "
            "the same type on every line (numbers, text, true/false or null). Fix those lines."
        )
    return f"{path} line {fault}"


_JSON_KINDS = ((bool, "true/false"), ((int, float), "a number"), (str, "text"), (dict, "an object"), (list, "a list"))


def _json_kind(value) -> str:
    """What a parsed JSON value is, for messages (`null` for None, which any key may hold)."""
    return next((name for kinds, name in _JSON_KINDS if isinstance(value, kinds)), "null")


def _first_bad_line(path: str) -> str | None:
    """`N <what is wrong>. Expected ... Received: ... <fix>` for the first faulty line N of `path`, or None."""
    seen: dict[str, tuple[str, int]] = {}  # key -> (the kind it holds, the line that first held it)
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            record, syntax_error = _parse_line(raw.rstrip(b"\r\n"))
            shown = raw.decode("utf-8", "replace").strip()[:120]
            if syntax_error is not None:
                return (
                    f"{number} is not valid JSON ({syntax_error}). Expected one complete JSON object per line. "
                    f"Received: `{shown}`. Fix or remove that line (was the file written completely?), or write "
                    "the file again, e.g. pandas `df.to_json(path, orient='records', lines=True)`."
                )
            if not isinstance(record, dict):
                return (
                    f"{number} holds {_json_kind(record)}, not an object. Expected one JSON object per line, its "
                    f'keys the columns. Received: `{shown}`. Write each row as an object, `{{"column": value, ...}}`.'
                )
            clash = _type_clash(record, "", number, seen)
            if clash is not None:
                return clash
    return None


def _parse_line(line: bytes) -> tuple[object, str | None]:
    """(the line's JSON value, None), or (None, what json found wrong: where, or bytes that are not UTF-8)."""
    import json

    try:
        return json.loads(line), None
    except json.JSONDecodeError as err:
        where = "the end of the line" if err.pos >= len(err.doc) else f"column {err.colno}"
        return None, f"{err.msg} at {where}"
    except ValueError as err:  # UnicodeDecodeError
        return None, str(err)


def _type_clash(record: dict, parent: str, number: int, seen: dict[str, tuple[str, int]]) -> str | None:
    """The message tail for the first key of `record` (line `number`) holding another kind than before, or None."""
    for key, value in record.items():
        name, kind = f"{parent}{key}", _json_kind(value)
        if kind == "null":
            continue
        first_kind, first_line = seen.setdefault(name, (kind, number))
        if first_kind != kind:
            return (
                f"{number}: key `{name}` holds {kind}, but line {first_line} holds {first_kind} there. Expected "
                "each key to hold one type on every line (numbers, text, true/false or null). Received: "
                f"{value!r:.80}. Write that key with one type on every line (e.g. text for every value of a text "
                "column), or null where a value is missing."
            )
        if kind == "an object":
            clash = _type_clash(value, f"{name}.", number, seen)
            if clash is not None:
                return clash
    return None
