"""The files of an image folder: which are images of which class, and whether each decodes.

No TensorFlow here: `validate` (`pipelines/profiling/image_profile.py`) uses the
same listing and check as ExampleGen (`image_folder.py`) without importing it.

An image folder holds one sub-folder per class; files named *.jpg, *.jpeg or
*.png (any case) in it, or in folders nested in it, are that class's images (as
Keras's `image_dataset_from_directory` and torchvision's `ImageFolder` read
them). A file is readable when its content is JPEG or PNG and Pillow decodes it
(a JPEG at 1/8 scale: every byte of it is still read, so a truncated file is
caught, at a fraction of the cost).
"""

from __future__ import annotations

import dataclasses
import glob
import io
import os
import types

__all__ = [
    "DEFAULT_PATTERN",
    "FolderListing",
    "IMAGE_EXTENSIONS",
    "ImageFolderError",
    "LOCAL_FILES",
    "UnreadableImage",
    "inspect_image",
    "list_image_folder",
]

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png")
# The class folders' entries: ExampleGen's driver fingerprints what this matches, so an image added, removed
# or replaced in a class folder changes the fingerprint (TFX's default `*` would see only the class folders).
DEFAULT_PATTERN = "*/*"
# The file-system calls the listing makes; ExampleGen passes TFX's `fileio` (object stores too).
LOCAL_FILES = types.SimpleNamespace(glob=glob.glob, isdir=os.path.isdir, walk=os.walk)
_FORMATS = ("JPEG", "PNG")


class ImageFolderError(ValueError):
    """The folder cannot be read as an image folder; the message names it and the fix."""


class UnreadableImage(ValueError):
    """One file is not a JPEG or PNG image that decodes; the message says why."""


@dataclasses.dataclass(frozen=True)
class FolderListing:
    """What is in an image folder: candidate images as (path, class), and skipped files as (path, reason)."""

    images: tuple[tuple[str, str], ...]
    skipped: tuple[tuple[str, str], ...]

    @property
    def classes(self) -> dict[str, int]:
        """Class name -> number of candidate images, sorted by name."""
        counts: dict[str, int] = {}
        for _, label in self.images:
            counts[label] = counts.get(label, 0) + 1
        return dict(sorted(counts.items()))


def _text(name) -> str:
    return name.decode("utf-8") if isinstance(name, bytes) else name


def _walk_files(folder: str, files) -> list[str]:
    found = []
    for root, dirs, names in files.walk(folder):
        root = _text(root)
        dirs[:] = sorted(d for d in dirs if not _text(d).startswith("."))
        found.extend(os.path.join(root, _text(n)) for n in sorted(names) if not _text(n).startswith("."))
    return found


def _parts(path: str, input_base: str) -> list[str]:
    return path[len(input_base) :].replace("\\", "/").strip("/").split("/")


def _hidden(path: str, input_base: str) -> bool:
    return any(part.startswith(".") for part in _parts(path, input_base))


def _class_of(path: str, input_base: str) -> str | None:
    parts = _parts(path, input_base)
    return parts[0] if len(parts) > 1 else None


def list_image_folder(input_base: str, pattern: str = DEFAULT_PATTERN, files=LOCAL_FILES) -> FolderListing:
    """Lists the images of an image folder and the files that will be skipped.

    Args:
        input_base: the folder holding one sub-folder per class.
        pattern: a glob under `input_base`; matched folders are walked recursively. A file's class is its
            first folder under `input_base`.
        files: the file-system calls (`glob`, `isdir`, `walk`); default: the local disk.

    Returns:
        The listing: the .jpg/.jpeg/.png files inside class folders, and the other files with the reason
        they are skipped. Hidden files and folders (`.name`) are ignored.

    Raises:
        ImageFolderError: the folder does not exist, or fewer than two class folders hold images.
    """
    input_base = input_base.rstrip("/\\") or input_base
    if not files.isdir(input_base):
        raise ImageFolderError(
            f"image folder {input_base} does not exist or is not a folder. Expected a folder with one "
            "sub-folder per class holding JPEG/PNG files. Fix `data.path`."
        )
    found = set()
    for match in files.glob(os.path.join(input_base, pattern)):
        if not _hidden(match, input_base):
            found.update(_walk_files(match, files) if files.isdir(match) else [match])
    # Files in the folder itself belong to no class: named, whatever the pattern.
    found.update(
        m for m in files.glob(os.path.join(input_base, "*")) if not _hidden(m, input_base) and not files.isdir(m)
    )
    images, skipped = [], []
    for path in sorted(found):
        label = _class_of(path, input_base)
        if label is None:
            skipped.append((path, "not inside a class folder"))
        elif not path.lower().endswith(IMAGE_EXTENSIONS):
            skipped.append((path, "not a .jpg, .jpeg or .png file"))
        else:
            images.append((path, label))
    listing = FolderListing(tuple(images), tuple(skipped))
    _check_classes(input_base, listing)
    return listing


def _check_classes(input_base: str, listing: FolderListing) -> None:
    classes = listing.classes
    example = f"{os.path.join(input_base, 'cat', '1.jpg')} and {os.path.join(input_base, 'dog', '2.png')}"
    if not classes:
        found = f"{len(listing.skipped)} other file(s), e.g. {listing.skipped[0][0]}" if listing.skipped else "nothing"
        raise ImageFolderError(
            f"image folder {input_base} has no class sub-folders holding .jpg/.jpeg/.png files. Expected one "
            f"sub-folder per class, e.g. {example}. Received: {found}. Put each class's images in a sub-folder "
            "named after the class."
        )
    if len(classes) == 1:
        ((name, count),) = classes.items()
        raise ImageFolderError(
            f"image folder {input_base} has a single class: `{name}` ({count} image(s)). Expected at least two "
            f"class sub-folders holding images, e.g. {example}. Add a sub-folder of images for each other class."
        )


def inspect_image(data: bytes) -> tuple[str, int, int]:
    """(format, height, width) of an encoded image, after checking that it decodes.

    Args:
        data: the file's bytes.

    Returns:
        `("JPEG" | "PNG", height, width)`.

    Raises:
        UnreadableImage: the bytes are not a JPEG or PNG image, or do not decode (truncated, corrupt, or
            past Pillow's decompression-bomb limit).
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            kind = image.format
            if kind not in _FORMATS:
                raise UnreadableImage(f"holds a {kind} image; expected JPEG or PNG")
            width, height = image.size
            if kind == "JPEG":
                image.draft(None, (1, 1))  # decode at 1/8 scale: reads every byte, builds few pixels
            image.load()
    except UnidentifiedImageError:
        raise UnreadableImage("is not an image (Pillow cannot identify it)") from None
    except UnreadableImage:
        raise
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as err:
        raise UnreadableImage(f"does not decode ({err})") from None
    return kind, height, width
