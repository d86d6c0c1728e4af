"""Which run a person means: an id, a unique prefix of one, `latest`, or `-N` (-1 the newest, -2 the one before)."""

from __future__ import annotations

import difflib

__all__ = ["RunNotFound", "select_run"]


class RunNotFound(LookupError):
    """No run, or more than one, matches what was asked for; the message names the nearest ids."""


def select_run(run_ids: list[str], wanted: str) -> str:
    """The run id that `wanted` names.

    Args:
        run_ids: the known run ids, newest first.
        wanted: a run id, a unique prefix of one, `latest`, or `-N` (-1 the newest).

    Returns:
        The matching run id.

    Raises:
        RunNotFound: nothing or several runs match; the message lists the nearest ids.
    """
    expected = "Expected a run id, a unique prefix of one, `latest` or -N (-1 the newest, -2 the one before)"
    if not run_ids:
        raise RunNotFound(
            f"there are no runs in ML Metadata yet. {expected}. Received: {wanted}. Run the pipeline first."
        )
    if wanted in run_ids:
        return wanted
    if wanted == "latest":
        return run_ids[0]
    if wanted.startswith("-") and wanted[1:].isdigit():
        index = int(wanted[1:])
        if 1 <= index <= len(run_ids):
            return run_ids[index - 1]
        raise RunNotFound(
            f"run {wanted} does not exist: there are {len(run_ids)} run(s). {expected}. Received: {wanted}. "
            f"Use -1 to -{len(run_ids)}."
        )
    matches = [run_id for run_id in run_ids if run_id.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise RunNotFound(
            f"run prefix `{wanted}` is ambiguous. {expected}. Received: {wanted}, which starts {len(matches)} run ids: "
            f"{', '.join(matches[:5])}. Give more of the id."
        )
    nearest = difflib.get_close_matches(wanted, run_ids, n=3, cutoff=0.0)
    raise RunNotFound(f"no run `{wanted}`. {expected}. Received: {wanted}. Nearest run ids: {', '.join(nearest)}.")
