"""What an image folder holds, checked before anything runs: classes, sizes, formats, unreadable files.

`profile_image_folder` reads every image the way ExampleGen will
(`components.example_gen.image_folder`: the same listing, the same decode
check), so `validate` names the files ExampleGen would skip; the spec rule
`pipelines.spec.image_folder_rules.rule_image_folder` reports on the profile.
"""

from __future__ import annotations

import dataclasses
import os
from concurrent.futures import ThreadPoolExecutor

from components.example_gen.image_files import ImageFolderError, UnreadableImage, inspect_image, list_image_folder
from pipelines.profiling.data_checks import DataProblem, DataProfile

__all__ = ["ImageFolderProfile", "profile_image_folder", "IMAGE_COLUMNS"]

IMAGE_COLUMNS = ("image", "label", "height", "width")
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
