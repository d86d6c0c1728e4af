"""What an image folder holds, checked before anything runs: classes, sizes, formats, unreadable files.

`profile_image_folder` reads every image the way ExampleGen will
(`components.example_gen.image_folder`: the same listing, the same decode
check), so `validate` names the files ExampleGen would skip. `rule_image_folder`
prints a summary (classes with their counts, the range of image sizes, the
formats) and warns about skipped files and rare classes; a class whose every
image is unreadable is an error.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

from components.example_gen.image_files import ImageFolderError, UnreadableImage, inspect_image, list_image_folder
from pipelines.spec.data_checks import DataProblem, DataProfile
from pipelines.spec.errors import SpecProblem

__all__ = ["ImageFolderProfile", "profile_image_folder", "rule_image_folder", "IMAGE_COLUMNS", "RARE_CLASS_SHARE"]

IMAGE_COLUMNS = ("image", "label", "height", "width")
# A class with fewer images than this share of the largest class's is reported as rare.
RARE_CLASS_SHARE = 0.2
_MAX_NAMED = 10
# Pillow releases the GIL while it decodes: a few threads read a folder several times faster.
_READERS = min(8, (os.cpu_count() or 1) * 2)


@dataclasses.dataclass(frozen=True)
class ImageFolderProfile(DataProfile):
    """A DataProfile of an image folder, plus what a person checks before training on it."""

    # Class -> readable images, sorted by class name (a class whose images are all unreadable has 0).
    classes: dict[str, int] = dataclasses.field(default_factory=dict)
    # (height, width) of the smallest, median and largest readable image, by pixel count.
    sizes: tuple[tuple[int, int], ...] = ()
    # "JPEG" / "PNG" -> readable images.
    formats: dict[str, int] = dataclasses.field(default_factory=dict)
    # (path, reason) of every file ExampleGen skips, sorted by path.
    unreadable: tuple[tuple[str, str], ...] = ()

    def summary(self) -> str:
        """One line: classes and their counts, size range, formats."""
        classes = ", ".join(f"{name}: {count}" for name, count in self.classes.items())
        (small_h, small_w), (mid_h, mid_w), (big_h, big_w) = self.sizes
        formats = ", ".join(f"{kind} {count}" for kind, count in sorted(self.formats.items()))
        return (
            f"image folder {self.files[0]}: {self.rows} image(s) in {len(self.classes)} classes ({classes}); "
            f"sizes (height x width) from {small_h}x{small_w} to {big_h}x{big_w}, median {mid_h}x{mid_w}; "
            f"formats: {formats}."
        )


def _inspect(path: str) -> tuple[str, int, int] | str:
    """(format, height, width) of the image at `path`, or why it is unreadable."""
    try:
        with open(path, "rb") as handle:
            return inspect_image(handle.read())
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    except UnreadableImage as err:
        return str(err)


def profile_image_folder(path: str) -> ImageFolderProfile:
    """Reads every image of an image folder once, as ExampleGen will.

    Args:
        path: the folder holding one sub-folder per class.

    Returns:
        The profile: columns `image`, `label`, `height`, `width` (the last two numeric), one row per
        readable image, and the classes, sizes, formats and unreadable files.

    Raises:
        DataProblem: the folder does not exist, has fewer than two class folders of images, or holds no
            readable image at all.
    """
    try:
        listing = list_image_folder(path)
    except ImageFolderError as err:
        raise DataProblem(str(err)) from None
    with ThreadPoolExecutor(_READERS) as pool:
        results = list(pool.map(_inspect, [image for image, _ in listing.images]))
    classes = dict.fromkeys(listing.classes, 0)
    formats: dict[str, int] = {}
    sizes: list[tuple[int, int]] = []
    unreadable = list(listing.skipped)
    for (image, label), result in zip(listing.images, results):
        if isinstance(result, str):
            unreadable.append((image, result))
            continue
        kind, height, width = result
        classes[label] += 1
        formats[kind] = formats.get(kind, 0) + 1
        sizes.append((height, width))
    if not sizes:
        shown = "; ".join(f"{file}: {reason}" for file, reason in sorted(unreadable)[:3])
        raise DataProblem(
            f"image folder {path} has no readable image. Expected JPEG or PNG files that decode. "
            f"Received {len(unreadable)} unreadable file(s), e.g. {shown}. Replace the files."
        )
    by_area = sorted(sizes, key=lambda hw: (hw[0] * hw[1], hw))
    constant = {
        name
        for name, values in (("height", {h for h, _ in sizes}), ("width", {w for _, w in sizes}))
        if len(values) == 1
    }
    return ImageFolderProfile(
        files=(path,),
        format="image_folder",
        columns=IMAGE_COLUMNS,
        numeric=frozenset({"height", "width"}),
        rows=len(sizes),
        constant=frozenset(constant),
        classes=classes,
        sizes=(by_area[0], by_area[(len(by_area) - 1) // 2], by_area[-1]),
        formats=formats,
        unreadable=tuple(sorted(unreadable)),
    )


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
