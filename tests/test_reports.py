"""Report folders: only under output/, never replacing the report of other inputs."""

import json

import pytest

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.reports import (
    INPUTS_FILE, ReportNameError, check_report_folder, default_report_name, finish_report, report_folder,
)


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
    assert not (folder / INPUTS_FILE).exists()  # written with the report, not before
    finish_report(folder, {"golden": "g.csv"})
    assert json.loads((folder / INPUTS_FILE).read_text(encoding="utf-8")) == {"golden": "g.csv"}
    assert sorted(p.name for p in folder.iterdir()) == [INPUTS_FILE]


def test_the_same_inputs_reuse_the_folder_and_other_inputs_are_refused(tmp_path):
    first = report_folder("r", {"golden": "/a/golden.csv", "corpus": "/a/corpus"}, output_dir=tmp_path)
    finish_report(first, {"golden": "/a/golden.csv", "corpus": "/a/corpus"})
    assert report_folder("r", {"golden": "/a/golden.csv", "corpus": "/a/corpus"}, output_dir=tmp_path) == first
    finish_report(first, {"golden": "/a/golden.csv", "corpus": "/a/corpus"})
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


def test_a_run_that_stopped_leaves_no_report_and_the_folder_free(tmp_path):
    """The tester's case: a failed `make evaluate ... REPORT=x` left output/x/inputs.json, so a later run
    with fixed inputs was refused "holds the report of other inputs" although there was no report."""
    folder = report_folder("x", {"golden": "/a/broken.csv"}, output_dir=tmp_path)
    (folder / "report.ipynb").write_text("half written")  # the run stops here
    assert not (folder / INPUTS_FILE).exists()
    again = report_folder("x", {"golden": "/a/fixed.csv"}, output_dir=tmp_path)
    finish_report(again, {"golden": "/a/fixed.csv"})
    with pytest.raises(ReportNameError, match="holds the report of other inputs"):
        report_folder("x", {"golden": "/a/third.csv"}, output_dir=tmp_path)  # a finished report is kept
    # a re-run of the same inputs that stops leaves the folder free too: its old report is gone
    report_folder("x", {"golden": "/a/fixed.csv"}, output_dir=tmp_path)
    assert report_folder("x", {"golden": "/a/third.csv"}, output_dir=tmp_path) == again


@pytest.mark.parametrize("content", ["{not json", "\xff\xfe", "[1, 2]"])
def test_a_damaged_inputs_file_is_one_line_naming_it(tmp_path, content):
    """The tester's case: a corrupt output/t/inputs.json gave a JSONDecodeError traceback."""
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / INPUTS_FILE).write_bytes(content.encode("latin-1"))
    with pytest.raises(ReportNameError, match=r"output/t/inputs.json cannot be read|holds the report of other inputs"):
        report_folder("t", {"golden": "g.csv"}, output_dir=tmp_path)


def test_names_are_read_in_nfc(tmp_path):
    """The tester's case: "cafe\u0301" (as macOS pastes) was refused with the generic message."""
    folder = report_folder("cafe\u0301", {"golden": "g.csv"}, output_dir=tmp_path)
    assert folder.name == "caf\u00e9"
    finish_report(folder, {"golden": "g.csv"})
    assert report_folder("caf\u00e9", {"golden": "g.csv"}, output_dir=tmp_path) == folder


def test_check_report_folder_changes_nothing(tmp_path):
    assert check_report_folder("new", {"golden": "g.csv"}, output_dir=tmp_path) == tmp_path.resolve() / "new"
    assert not any(tmp_path.iterdir())


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=0, max_size=150), st.sampled_from(["", "runs-"]))
def test_the_default_name_of_any_folder_is_a_valid_report_name(tmp_path_factory, folder_name, prefix):
    """The tester's case: a golden file in "-dash/" gave the default report name "-dash", refused."""
    name = default_report_name(f"/data/{folder_name.replace('/', '_')}/golden.csv", prefix)
    output = tmp_path_factory.mktemp("output")
    assert report_folder(name, {"golden": "g.csv"}, output_dir=output).parent == output.resolve()
    assert unicodedata.is_normalized("NFC", name)


def test_default_names():
    assert default_report_name("-dash/golden.csv") == "dash"
    assert default_report_name("/data/my set: v2/golden.csv", "runs-") == "runs-my set_ v2"
    assert default_report_name("golden.csv") == "report"
