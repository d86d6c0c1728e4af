"""Checks that the folders a run writes to can be written, without creating anything.

`pipeline.root` (artifacts, ML Metadata, logs) and `push.serving_dir` (pushed
models) must each be a writable folder, or a path whose nearest existing
ancestor is a writable folder (the run creates the rest). A folder with no
write permission bits counts as read-only even for root, who could write
there anyway: its owner has said that nothing goes in it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator

__all__ = ["folder_problem", "rule_storage"]

_URI = re.compile(r"^[a-z][a-z0-9+.-]*://")


def _nearest_existing(path: str) -> str:
    while not os.path.lexists(path):
        parent = os.path.dirname(path)
        if parent == path:
            return path
        path = parent
    return path


def folder_problem(path: str, key: str) -> str | None:
    """Why the run could not write to folder `path`, or None when it can.

    Args:
        path: an absolute folder path, which may not exist yet, or a URI (`gs://...`: not checked).
        key: the spec key that sets it, for the message (`pipeline.root`).

    Returns:
        A message in the what / expected / received / fix form, or None.
    """
    if "://" in path:
        return None  # an object store (the kubeflow target's root): checked where it is written
    if _URI.match(path):
        return None  # gs://, s3://: an object store, checked by whoever writes there
    existing = _nearest_existing(path)
    if not os.path.isdir(existing):
        what = "is a file" if os.path.isfile(existing) else "is not a folder"
        inside = "" if existing == path else f" (inside {existing})"
        return (
            f"`{key}` cannot be created: {existing} {what}. Expected a folder, or a path under a writable folder. "
            f"Received: {path}{inside}. Point `{key}` somewhere else or move that file away."
        )
    mode = os.stat(existing).st_mode
    if not os.access(existing, os.W_OK | os.X_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        inside = "" if existing == path else f" (the nearest existing folder of {path})"
        return (
            f"`{key}` is not writable: {existing}{inside} is read-only. Expected a folder this user can write to. "
            f"Received: {path}. Fix its permissions (chmod u+w) or point `{key}` to a writable folder."
        )
    return None


def rule_storage(ctx) -> Iterator:
    """The pipeline root and the serving folder are writable folders (or can be created)."""
    root_problem = folder_problem(ctx.resolved.root, "pipeline.root")
    if root_problem:
        yield ctx.problem("pipeline.root" if ctx.spec.pipeline.root else "pipeline", root_problem)
    if ctx.spec.push.serving_dir or not root_problem:  # the default serving_dir is inside the root
        serving_problem = folder_problem(ctx.resolved.serving_dir, "push.serving_dir")
        if serving_problem:
            yield ctx.problem("push.serving_dir" if ctx.spec.push.serving_dir else "push", serving_problem)
