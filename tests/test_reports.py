"""Report folders: only under output/, never replacing the report of other inputs."""

import json

import pytest

from retrieval_eval.reports import INPUTS_FILE, ReportNameError, report_folder


@pytest.mark.parametrize("name", ["", "..", ".hidden", "../notebooks/05_three_retrievers", "a/b", "a\\b", "/tmp/x",
                                  " padded", "padded ", "x" * 101, "semi;colon", 5, None])
def test_a_name_that_is_not_a_plain_folder_name_is_refused(tmp_path, name):
    with pytest.raises(ReportNameError, match="plain folder name"):
        report_folder(name, {"golden": "g.csv"}, output_dir=tmp_path / "output")
    assert not (tmp_path / "output").exists() or not any((tmp_path / "output").iterdir())


@pytest.mark.parametrize("name", ["library_hours", "my report 2", "bibliothèque", "v1.2-final"])
def test_plain_names_with_spaces_and_non_ascii_letters_are_accepted(tmp_path, name):
    folder = report_folder(name, {"golden": "g.csv"}, output_dir=tmp_path)
    assert folder == (tmp_path / name).resolve() and folder.is_dir()
    assert json.loads((folder / INPUTS_FILE).read_text(encoding="utf-8")) == {"golden": "g.csv"}


def test_the_same_inputs_reuse_the_folder_and_other_inputs_are_refused(tmp_path):
    first = report_folder("r", {"golden": "/a/golden.csv", "corpus": "/a/corpus"}, output_dir=tmp_path)
    assert report_folder("r", {"golden": "/a/golden.csv", "corpus": "/a/corpus"}, output_dir=tmp_path) == first
    with pytest.raises(ReportNameError, match=r"output/r holds the report of other inputs \(golden /a/golden.csv"):
        report_folder("r", {"golden": "/b/golden.csv", "corpus": "/a/corpus"}, output_dir=tmp_path)


def test_a_folder_of_other_files_is_not_taken_over(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep me")
    with pytest.raises(ReportNameError, match="holds files of no report"):
        report_folder("notes", {"golden": "g.csv"}, output_dir=tmp_path)
    assert (tmp_path / "notes" / "mine.txt").read_text() == "keep me"


def test_a_link_out_of_output_is_refused(tmp_path):
    (tmp_path / "output").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "output" / "r").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ReportNameError, match="link that leaves output"):
        report_folder("r", {"golden": "g.csv"}, output_dir=tmp_path / "output")
