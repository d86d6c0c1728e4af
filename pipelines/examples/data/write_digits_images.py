"""Writes scikit-learn's bundled digits as PNG files in class folders (no download).

The 1797 grey 8x8 images of `sklearn.datasets.load_digits` (values 0-16) are
scaled to 0-255, enlarged to 32x32 (bilinear, Pillow) and written as
`<out>/<digit>/<index>.png`, one folder per class `0`-`9`, `index` the row in
scikit-learn's order (`0000`-`1796`). The folder is what `../digits.yaml` reads
with `data.format: image_folder`. The output is the same bytes on every run; the
folder is not checked in (see .gitignore): run this once before the example.

Usage:
    .venv/bin/python pipelines/examples/data/write_digits_images.py [OUT]   # OUT: default data/digits
"""

from __future__ import annotations

import io
import os
import shutil
import sys

__all__ = ["DIGITS_DIR", "IMAGE_SIZE", "digit_images", "write_digits"]

DIGITS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "digits")
IMAGE_SIZE = 32


def digit_images(size: int = IMAGE_SIZE) -> list[tuple[str, str, bytes]]:
    """The images as PNG bytes, in scikit-learn's row order.

    Args:
      size: Side of the written square image in pixels (the 8x8 originals are enlarged bilinearly).

    Returns:
      (class folder name, file name, PNG bytes) for each of the 1797 images.
    """
    import numpy as np
    from PIL import Image
    from sklearn.datasets import load_digits

    digits = load_digits()
    # 0-16 -> 0-255; exact in float, rounded once.
    pixels = np.rint(digits.images * (255.0 / 16.0)).astype(np.uint8)
    images = []
    for index, (image, target) in enumerate(zip(pixels, digits.target)):
        enlarged = Image.fromarray(image, mode="L").resize((size, size), Image.Resampling.BILINEAR)
        buffer = io.BytesIO()
        # No metadata chunks and a fixed compression level: the same pixels give the same bytes.
        enlarged.save(buffer, format="PNG", optimize=False, compress_level=6)
        images.append((str(int(target)), f"{index:04d}.png", buffer.getvalue()))
    return images


def write_digits(out: str = DIGITS_DIR, size: int = IMAGE_SIZE) -> int:
    """Writes `<out>/<digit>/<index>.png`, replacing whatever `out` held.

    Args:
      out: The folder to write (created; an existing one is emptied first so no stale file survives).
      size: Side of the square images in pixels.

    Returns:
      The number of files written.

    Raises:
      NotADirectoryError: `out` exists and is a file.
    """
    if os.path.exists(out) and not os.path.isdir(out):
        raise NotADirectoryError(
            f"The digits output path is a file, expected a folder (or nothing). Received: {out}. "
            "Pass another folder as the first argument, or remove the file."
        )
    images = digit_images(size)
    shutil.rmtree(out, ignore_errors=True)
    for label, name, data in images:
        os.makedirs(os.path.join(out, label), exist_ok=True)
        with open(os.path.join(out, label, name), "wb") as handle:
            handle.write(data)
    return len(images)


if __name__ == "__main__":
    target = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else DIGITS_DIR
    count = write_digits(target)
    print(f"wrote {count} PNG files ({IMAGE_SIZE}x{IMAGE_SIZE}, grey) in 10 class folders under {target}")
