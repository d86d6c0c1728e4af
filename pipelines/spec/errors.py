"""Errors raised while reading and checking a pipeline spec.

Every message follows one formula: where (file, YAML path, line), what is wrong,
what was expected, what was received, and how to fix it.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Sequence

__all__ = ["SpecProblem", "SpecError", "did_you_mean"]


@dataclasses.dataclass(frozen=True)
class SpecProblem:
    """One problem found in a spec, located by YAML path and line."""

    path: str
    message: str
    line: int | None = None
    file: str | None = None

    def __str__(self) -> str:
        where = self.file or "<spec>"
        if self.line is not None:
            where += f":{self.line}"
        return f"{where}: {self.path or '<root>'}: {self.message}"


class SpecError(ValueError):
    """A spec has one or more problems. `problems` lists them all."""

    def __init__(self, problems: Sequence[SpecProblem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Returns ' Did you mean `x`?' when `word` is close to one of `choices`."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" Did you mean `{close[0]}`?" if close else ""
