"""Small image folders written with Pillow, for the image ExampleGen and `validate` tests.

`write_image_folder` returns what a reader must find: for every readable image
its bytes, class and size, and the paths of the files that must be skipped.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import numpy as np
from PIL import Image


@dataclasses.dataclass
class FolderTruth:
    """What the folder holds: readable images as path -> (bytes, class, height, width); skipped paths."""

    images: dict[str, tuple[bytes, str, int, int]]
    skipped: dict[str, str]  # path -> a word the reason must contain


def encode(size: tuple[int, int], mode: str, kind: str, seed: int) -> bytes:
    """A `kind` (PNG/JPEG/GIF/BMP) image of `size` (height, width) in `mode` (L/RGB), noise from `seed`."""
    height, width = size
    shape = (height, width) if mode == "L" else (height, width, 3)
    pixels = np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels, mode).save(buffer, format=kind)
    return buffer.getvalue()


def write_image_folder(root: Path) -> FolderTruth:
    """cat/ and dog/ of PNG and JPEG, grey and RGB, plus files that must be skipped.

    cat/ also holds a nested folder (its image is a cat), an image whose bytes dog/ holds too, a
    corrupt .png, a truncated .jpg, a GIF named .png and a .txt; a loose file sits in `root` itself.
    """
    images: dict[str, tuple[bytes, str, int, int]] = {}
    skipped: dict[str, str] = {}

    def put(relative: str, data: bytes) -> str:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return str(path)

    layout = [
        ("cat/a.png", (20, 30), "RGB", "PNG"),
        ("cat/b.png", (24, 24), "L", "PNG"),
        ("cat/c.jpg", (16, 40), "RGB", "JPEG"),
        ("cat/d.JPEG", (33, 17), "L", "JPEG"),
        ("cat/nested/e.png", (12, 12), "RGB", "PNG"),
        ("dog/a.png", (40, 20), "L", "PNG"),
        ("dog/b.jpeg", (28, 28), "RGB", "JPEG"),
        ("dog/C.PNG", (10, 50), "RGB", "PNG"),
        ("dog/d.jpg", (64, 48), "L", "JPEG"),
    ]
    for seed, (relative, size, mode, kind) in enumerate(layout):
        data = encode(size, mode, kind, seed)
        images[put(relative, data)] = (data, relative.split("/")[0], *size)
    shared = encode((18, 18), "RGB", "PNG", 99)
    images[put("cat/same.png", shared)] = (shared, "cat", 18, 18)
    images[put("dog/same_bytes.png", shared)] = (shared, "dog", 18, 18)
    skipped[put("cat/corrupt.png", b"\x89PNG\r\n\x1a\n not really a png")] = "not an image"
    skipped[put("dog/truncated.jpg", encode((32, 32), "RGB", "JPEG", 7)[:200])] = "does not decode"
    skipped[put("dog/animated.png", encode((8, 8), "RGB", "GIF", 8))] = "GIF"
    skipped[put("cat/notes.txt", b"labelled by hand\n")] = "not a .jpg"
    skipped[put("loose.png", encode((8, 8), "RGB", "PNG", 9))] = "not inside a class folder"
    put(".hidden/x.png", encode((8, 8), "RGB", "PNG", 10))  # hidden: ignored, not named
    return FolderTruth(images, skipped)


def write_class_folder(root: Path, name: str, count: int, seed: int = 0) -> None:
    """`count` small PNGs in `root/name/`, noise from `seed`."""
    (root / name).mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (root / name / f"{i}.png").write_bytes(encode((8, 8), "RGB", "PNG", seed * 1000 + i))
