"""An image folder's profile: classes, sizes, formats and skipped files; how a folder is told from a table folder."""

from __future__ import annotations

import pytest
from image_folders import write_class_folder, write_image_folder

from pipelines.profiling.data_checks import DataProblem, list_data_files
from pipelines.profiling.image_profile import ImageFolderProfile, profile_image_folder


def test_profile_counts_classes_sizes_and_formats_and_names_skipped_files(tmp_path):
    truth = write_image_folder(tmp_path)
    profile = profile_image_folder(str(tmp_path))
    assert isinstance(profile, ImageFolderProfile) and profile.format == "image_folder"
    assert profile.columns == ("image", "label", "height", "width") and profile.numeric == {"height", "width"}
    expected: dict[str, int] = {}
    for _, label, _, _ in truth.images.values():
        expected[label] = expected.get(label, 0) + 1
    assert profile.classes == expected and profile.rows == len(truth.images)
    areas = sorted((h * w, (h, w)) for _, _, h, w in truth.images.values())
    assert profile.sizes[0] == areas[0][1] and profile.sizes[-1] == areas[-1][1]
    assert profile.formats == {"PNG": 7, "JPEG": 4}
    assert {path for path, _ in profile.unreadable} == set(truth.skipped)


def test_folder_of_class_folders_is_an_image_folder_and_a_csv_folder_is_not(tmp_path):
    write_class_folder(tmp_path / "images", "a", 1)
    assert list_data_files(str(tmp_path / "images"), None) == ([str(tmp_path / "images")], "image_folder")
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "t.csv").write_text("x\n1\n", encoding="utf-8")
    write_class_folder(tmp_path / "tables", "thumbnails", 1)
    assert list_data_files(str(tmp_path / "tables"), None)[1] == "csv"


def test_format_image_folder_on_a_file_is_named(tmp_path):
    (tmp_path / "t.csv").write_text("x\n1\n", encoding="utf-8")
    with pytest.raises(DataProblem, match="`format: image_folder` needs a folder .* Received: .*t.csv"):
        list_data_files(str(tmp_path / "t.csv"), "image_folder")
