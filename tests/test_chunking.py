"""retrieval_eval/analysis/chunking.py: every setting chunked, labelled and ranked anew; cut evidence counted as not
found; settings compared at an equal budget of word pieces, one family (Holm). The experiment itself loads
the embedding model (slow); its arguments are checked before anything is read (fast)."""

import pandas as pd
import pytest

import helpers as h
from retrieval_eval.analysis.chunking import Chunking
from retrieval_eval.analysis.comparisons import SUCCESS, TOO_CLOSE
from retrieval_eval.analysis.statistics import ALPHA, paired_test


@pytest.mark.parametrize("kwargs, message", [
    ({"chunk_sizes": [128]}, "give two or more chunk sizes that each divide the budget 1536"),
    ({"chunk_sizes": [128, 128]}, "give two or more chunk sizes"),
    ({"chunk_sizes": [128, 0]}, "every chunk size must be >= 1"),
    ({"chunk_sizes": 128}, "chunk_sizes must be a list of chunk sizes"),
    ({"overlap_share": 0}, "overlap_share must be a number between 0 and 1"),
    ({"overlap_share": 1.5}, "overlap_share must be a number between 0 and 1"),
    ({"overlap_share": "0.1"}, "overlap_share must be a number between 0 and 1"),
    ({"budget": 1000}, "each divide the budget 1000"),
    ({"budget": 0}, "budget must be >= 1"),
    ({"chunk_sizes": [512, 1024], "budget": 2048}, "chunk size 1024 is larger than the model's window of 512"),
])
def test_the_experiment_checks_its_arguments_before_anything_is_ranked(kwargs, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        h.chunking_experiment(cache_dir=tmp_path, **kwargs)
    assert not any(tmp_path.iterdir())  # nothing was ranked or cached


def test_found_counts_cut_evidence_as_not_found():
    setting = Chunking(32, 0, [], {"t2": {"c1": 1}}, ["t1"], {"R": {"t1": ["c0", "c1"], "t2": ["c0", "c1"]}})
    assert setting.label == "32, no overlap" and setting._replace(chunk_overlap=5).label == "32, overlap 5"
    assert setting.found(1).to_dict() == {"R": {"t1": 0.0, "t2": 0.0}}
    assert setting.found(2).to_dict() == {"R": {"t1": 0.0, "t2": 1.0}}  # t1: no relevant chunk in this setting


@pytest.fixture(scope="session")
def experiment(example_dir, tmp_path_factory):
    """The example set at 32 and 64 word pieces (at 32 some evidence strings are cut), budget 128."""
    return h.chunking_experiment(example_dir / "corpus", example_dir / "golden.csv", chunk_sizes=[64, 32], budget=128,
                                 cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.mark.slow
def test_the_experiment_holds_every_setting_in_order_with_its_cut_evidence(experiment, example_dir):
    labels = ["32, no overlap", "32, overlap 5", "64, no overlap", "64, overlap 10"]
    assert [s.label for s in experiment.settings] == labels and list(experiment.sizes.index) == labels
    assert experiment.baseline == "64, no overlap" and experiment.budget_tokens == 128
    golden = h.read_golden_csv(example_dir / "golden.csv")
    docs = h.load_corpus(example_dir / "corpus")
    for setting in experiment.settings:
        problems = []
        assert setting.qrels == h.label_chunks(golden, setting.chunks, docs, problems=problems)  # labelled anew
        assert setting.cut == [q for q in golden["id"] if q not in setting.qrels]
        assert list(setting.runs) == list(h.default_retrievers())
        assert all(list(run) == list(golden["id"]) for run in setting.runs.values())
        assert max(c["n_tokens"] for c in setting.chunks) <= setting.chunk_size
        row = experiment.sizes.loc[setting.label]
        assert row["chunks"] == len(setting.chunks) and row["evidence cut"] == len(setting.cut)
        assert row["mean word pieces"] == pytest.approx(sum(c["n_tokens"] for c in setting.chunks) / len(setting.chunks))
        assert row["several relevant chunks"] == sum(len(g) > 1 for g in setting.qrels.values())
    assert experiment.sizes.loc["32, no overlap", "evidence cut"] >= experiment.sizes.loc["64, no overlap", "evidence cut"]


@pytest.mark.slow
def test_the_budget_gives_every_setting_the_same_word_pieces(experiment):
    budget = experiment.budget
    assert list(budget.index.names) == ["setting", "run"]
    for setting in experiment.settings:
        k = 128 // setting.chunk_size
        found = setting.found(k)
        sizes = {c["id"]: c["n_tokens"] for c in setting.chunks}
        for name, run in setting.runs.items():
            row = budget.loc[(setting.label, name)]
            assert row["k"] == k and row[SUCCESS] == pytest.approx(found[name].mean())
            assert row["word pieces read"] == pytest.approx(sum(sum(sizes[c] for c in r[:k]) for r in run.values()) / len(run))
            assert row["word pieces read"] <= 128


@pytest.mark.slow
def test_every_setting_is_tested_against_the_baseline_in_one_family(experiment):
    table = experiment.comparisons
    others = [s for s in experiment.settings if s.label != experiment.baseline]
    assert list(table.index) == [(name, s.label) for s in others for name in s.runs]
    base = next(s for s in experiment.settings if s.label == experiment.baseline)
    for s in others:
        for name in s.runs:
            test = paired_test(s.found(128 // s.chunk_size)[name], base.found(128 // base.chunk_size)[name])
            row = table.loc[(name, s.label)]
            assert (row["wins"], row["losses"], row["p"]) == (test["wins"], test["losses"], test["p"])
    assert table["Holm p"].tolist() == pytest.approx(h.holm(table["p"].to_numpy()).tolist())
    for _, row in table.iterrows():
        expected = ("higher" if row["difference"] > 0 else "lower") if row["Holm p"] < ALPHA else TOO_CLOSE
        assert row["verdict"] == expected
    assert isinstance(table, pd.DataFrame)
