"""Spec rule on an image folder's profile: a summary, warnings for skipped files and rare classes.

`rule_image_folder` prints a summary (classes with their counts, the range of
image sizes, the formats) and warns about the files ExampleGen would skip and
about rare classes; a class whose every image is unreadable is an error.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

from pipelines.profiling.image_profile import ImageFolderProfile
from pipelines.spec.errors import SpecProblem

__all__ = ["RARE_CLASS_SHARE", "rule_image_folder"]

# A class with fewer images than this share of the largest class's is reported as rare.
RARE_CLASS_SHARE = 0.2
_MAX_NAMED = 10


def _named(entries: list[tuple[str, str]]) -> str:
    shown = "; ".join(f"{file} ({reason})" for file, reason in entries[:_MAX_NAMED])
    return shown + (f"; and {len(entries) - _MAX_NAMED} more" if len(entries) > _MAX_NAMED else "")


def rule_image_folder(ctx) -> Iterator[SpecProblem]:
    """Prints the folder's summary; warns about skipped files and rare classes; a class with no readable image is an error."""
    profile = ctx.profile
    if not isinstance(profile, ImageFolderProfile):
        return
    print(f"note: data.path: {profile.summary()}", file=sys.stderr)
    if profile.unreadable:
        print(
            f"warning: data.path: {len(profile.unreadable)} file(s) in {profile.files[0]} are not readable JPEG/PNG "
            f"images; ExampleGen skips them: {_named(list(profile.unreadable))}. Fix or remove those files.",
            file=sys.stderr,
        )
    for name, count in profile.classes.items():
        if count == 0:
            folder = os.path.join(profile.files[0], name)
            bad = [entry for entry in profile.unreadable if entry[0].startswith(folder + os.sep)]
            yield ctx.problem(
                "data.path",
                f"class `{name}` has no readable image: every file in {folder} is unreadable. Expected JPEG or PNG "
                f"files that decode. Received: {_named(bad)}. Replace those files, or remove the folder.",
            )
    largest_name, largest = max(profile.classes.items(), key=lambda item: item[1])
    for name, count in profile.classes.items():
        if 0 < count < RARE_CLASS_SHARE * largest:
            print(
                f"warning: data.path: class `{name}` has {count} image(s), far fewer than `{largest_name}` "
                f"({largest}); the model will rarely predict it and its metrics rest on few eval images. "
                f"Add images of `{name}`, or merge or drop the class.",
                file=sys.stderr,
            )
