"""retrieval_eval/chunking.py: settings chunked, labelled and ranked anew; cut evidence counted 0; one comparison."""

import math

import numpy as np
import pandas as pd
import pytest

import helpers as h
from retrieval_eval.statistics import bootstrap_ci

# A one-paragraph toy: at 32 word pieces without overlap a chunk boundary cuts the evidence string,
# with 8 word pieces of overlap the second chunk holds it whole (the toy of notebook 09).
TOY_TEXT = ("Your subscription renews every month. You can pause it for up to two months a year. "
            "To cancel, give notice one month before the next billing date. "
            "We collect the bike within ten working days after the last month ends.")
TOY_GOLDEN = pd.DataFrame({"id": ["t1", "t2"], "question": ["How do I cancel?", "Can I pause it?"],
                           "evidence": ["give notice one month before the next billing date",
                                        "You can pause it for up to two months a year"], "slice": ["toy", "toy"]})


def toy(chunk_size, chunk_overlap=0):
    return h.chunk_and_rank({"toy": TOY_TEXT}, TOY_GOLDEN, chunk_size, chunk_overlap, corpus="toy", rank=False)


# --- chunk_and_rank: chunks and labels per setting ---------------------------------------------


def test_evidence_cut_by_a_boundary_is_kept_apart_with_the_chunks_it_straddles():
    cut = toy(32)
    assert list(cut.qrels) == ["t2"] and list(cut.cut) == ["t1"]
    assert "cut by a chunk boundary between chunks ['toy#00', 'toy#01']" in cut.cut["t1"]
    whole = toy(32, 8)
    assert whole.cut == {} and whole.qrels == {"t1": {"toy#01": 1}, "t2": {"toy#00": 1}}
    assert (cut.label, whole.label) == ("32, no overlap", "32, overlap 8")


def test_overlap_can_make_several_chunks_relevant():
    setting = toy(32, 20)
    assert setting.qrels["t1"] == {"toy#01": 1, "toy#02": 1}


def test_evidence_not_in_the_corpus_is_a_golden_set_error_not_a_cut():
    bad = TOY_GOLDEN.assign(evidence=["this sentence is nowhere in the toy corpus", TOY_GOLDEN["evidence"][1]])
    with pytest.raises(h.GoldenSetError, match="question 't1'.*not in the corpus"):
        h.chunk_and_rank({"toy": TOY_TEXT}, bad, 32, corpus="toy", rank=False)


def test_bad_sizes_and_overlaps_are_refused_before_anything_is_ranked():
    with pytest.raises(ValueError, match="larger than the model's window"):
        toy(513)
    with pytest.raises(ValueError, match="chunk_overlap must be an integer from 0 to 29"):
        toy(32, 30)


def test_the_stored_chunks_are_the_setting_at_512_without_overlap(docs, golden, chunks, qrels):
    setting = h.chunk_and_rank(docs, golden, 512, rank=False)
    assert setting.chunks == chunks and setting.qrels == qrels and setting.cut == {} and setting.runs == {}


# --- shared_word_pieces: the overlap as the splitter made it --------------------------------------


def test_shared_word_pieces_count_what_neighbours_share_at_most_the_overlap():
    tokens = h.token_counter()
    for overlap in (0, 8, 20):
        setting = toy(32, overlap)
        shared = h.shared_word_pieces(setting, {"toy": TOY_TEXT})
        assert len(shared) == len(setting.chunks) - 1
        assert all(0 <= n <= overlap for n in shared)
        for first, second, n in zip(setting.chunks, setting.chunks[1:], shared):
            tail = next((first["text"][-i:] for i in range(len(first["text"]), 0, -1)
                         if second["text"].startswith(first["text"][-i:])), "")
            assert n == (tokens(tail) - tokens("") if overlap else 0)


# --- setting_scores: cut evidence counted 0 ------------------------------------------------------


def test_a_question_with_cut_evidence_scores_0_on_every_metric_and_others_as_evaluate():
    setting = toy(32)._replace(runs={"BM25": {"t1": ["toy#00", "toy#01"], "t2": ["toy#01", "toy#00"]}})
    scores = h.setting_scores(setting, ks=[1, 2])
    cut = scores[scores["question"] == "t1"]
    assert set(cut["metric"]) == {*h.METRICS, "success", "word pieces"}
    assert (cut.loc[cut["metric"] != "word pieces", "value"] == 0).all()
    t2 = scores[scores["question"] == "t2"].set_index(["metric", "k"])["value"]
    assert t2[("recall", 1)] == 0 and t2[("recall", 2)] == 1 and t2[("MRR", 2)] == 0.5 and t2[("success", 2)] == 1
    sizes = {c["id"]: c["n_tokens"] for c in setting.chunks}
    assert t2[("word pieces", 1)] == sizes["toy#01"] and t2[("word pieces", 2)] == sum(sizes.values())
    expected = h.evaluate({"BM25": {"t2": setting.runs["BM25"]["t2"]}}, setting.qrels, ks=[1, 2])
    for metric in h.METRICS:
        for k in (1, 2):
            mean = scores[(scores["metric"] == metric) & (scores["k"] == k)]["value"].mean()
            assert mean == pytest.approx(expected.loc["BM25", (metric, k)] / 2)  # t1 counts 0 in the mean


def test_a_setting_that_cuts_every_evidence_string_scores_0_everywhere():
    setting = h.chunk_and_rank({"toy": TOY_TEXT}, TOY_GOLDEN.head(1), 32, corpus="toy", rank=False)
    assert setting.qrels == {} and list(setting.cut) == ["t1"]
    scores = h.setting_scores(setting._replace(runs={"BM25": {"t1": ["toy#01"]}}), ks=[1])
    assert len(scores) == len(h.METRICS) + 2 and (scores.loc[scores["metric"] != "word pieces", "value"] == 0).all()


# --- compare_settings: the one comparison ---------------------------------------------------------


def paired(a, b, name="A"):
    return pd.DataFrame({("R", "base"): b, ("R", name): a}, index=[f"q{i}" for i in range(len(a))])


def test_compare_settings_uses_the_paired_tests_and_holm_of_the_series():
    rng = np.random.default_rng(0)
    base = rng.integers(0, 2, 40).astype(float)
    better = np.where(np.arange(40) < 12, 1.0, base)  # wins wherever base misses among the first 12
    same = base.copy()
    values = pd.DataFrame({("R", "base"): base, ("R", "better"): better, ("R", "same"): same,
                           ("S", "base"): base, ("S", "better"): same, ("S", "same"): better})
    table = h.compare_settings(values, "base")
    assert list(table.index) == [("R (better) − R (base)", "recall"), ("R (same) − R (base)", "recall"),
                                 ("S (better) − S (base)", "recall"), ("S (same) − S (base)", "recall")]
    assert table[["retriever", "setting"]].values.tolist() == [["R", "better"], ["R", "same"], ["S", "better"], ["S", "same"]]
    row = table.loc[("R (better) − R (base)", "recall")]
    test = h.paired_test(better, base)  # binary values: McNemar's exact test
    assert row["test"] == "McNemar's exact test" and row["p"] == test["p"]
    assert (row["wins"], row["losses"], row["ties"]) == (test["wins"], test["losses"], test["ties"])
    assert (row["difference"], row["low"], row["high"]) == pytest.approx(bootstrap_ci(better - base))
    assert table["p (Holm)"].to_numpy() == pytest.approx(h.holm(table["p"].to_numpy()))
    assert table.attrs["family"] == "4 tests: 2 retrievers × 2 settings against base, on recall"
    assert table.loc[("R (same) − R (base)", "recall"), "verdict"] == "not distinguishable"
    assert table.loc[("R (same) − R (base)", "recall"), "p"] == 1.0
    # the sentences of the series read it, with the metric's own name and no "@k"
    assert h.comparison_sentences(table)[1].startswith("R (better) − R (base) recall: +")
    graded = h.compare_settings(pd.DataFrame({("R", "base"): base / 2, ("R", "better"): better / 2}), "base")
    assert graded["test"].tolist() == ["paired permutation test"]  # not 0 or 1: the permutation test


def test_the_verdict_follows_the_holm_adjusted_p_only():
    a, b = [1.0] * 9 + [0.0] * 11, [0.0] * 20  # nine wins, no loss: McNemar p = 2 / 2^9 alone
    alone = h.compare_settings(paired(a, b), "base")
    assert alone["verdict"].tolist() == ["R (A) higher"] and alone["p (Holm)"].item() < 0.05
    worse = h.compare_settings(paired(b, a), "base")
    assert worse["verdict"].tolist() == ["R (base) higher"]
    family = pd.DataFrame({("R", "base"): b, **{("R", f"A{i}"): a for i in range(20)}})  # 20 tests of one family
    many = h.compare_settings(family, "base")
    assert len(many) == 20 and (many["p (Holm)"] > 0.05).all() and set(many["verdict"]) == {"not distinguishable"}


def test_compare_settings_refuses_what_it_cannot_compare():
    values = paired([1.0, 0.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="the baseline 'other' is not one of the settings"):
        h.compare_settings(values, "other")
    with pytest.raises(ValueError, match="compare at least two settings"):
        h.compare_settings(values[[("R", "base")]], "base")
    with pytest.raises(ValueError, match="alpha"):
        h.compare_settings(values, "base", alpha=5)
    with pytest.raises(ValueError, match=r"\('R', 'A'\) against the baseline: no value for question\(s\) \['q1'\]"):
        h.compare_settings(paired([1.0, math.nan], [0.0, 0.0]), "base")


# --- chunking_experiment --------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, message", [
    ({"chunk_sizes": [128]}, "two or more different sizes"),
    ({"chunk_sizes": [128, 128]}, "two or more different sizes"),
    ({"chunk_sizes": [128, 0]}, "every chunk size must be >= 1"),
    ({"overlap_share": 0}, "overlap_share must be a number between 0 and 1"),
    ({"overlap_share": 1.5}, "overlap_share must be a number between 0 and 1"),
    ({"budget": 1000}, "budget 1000 is not a multiple of every chunk size"),
    ({"max_budget": 1000}, "max_budget 1000 is not a multiple"),
    ({"max_budget": 1024}, "max_budget 1024 is smaller than budget 1536"),
    ({"k": 0}, "k must be"),
])
def test_chunking_experiment_checks_its_arguments_first(kwargs, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        h.chunking_experiment(cache_dir=tmp_path, **kwargs)
    assert not any(tmp_path.iterdir())  # nothing was ranked


def test_a_size_past_the_model_window_is_a_parameter_error(tmp_path):
    with pytest.raises(h.ParameterError, match="1024"):
        h.chunking_experiment(chunk_sizes=[512, 1024], budget=2048, cache_dir=tmp_path)


@pytest.fixture(scope="module")
def experiment(example_dir, tmp_path_factory):
    """The example set at 32 and 64 word pieces (at 32 two evidence strings are cut), k = 2, budget 128."""
    return h.chunking_experiment(example_dir / "corpus", example_dir / "golden.csv", chunk_sizes=[64, 32], k=2,
                                 budget=128, cache_dir=tmp_path_factory.mktemp("cache"))


def test_the_experiment_holds_every_setting_in_order_with_its_cut_evidence(experiment):
    labels = ["32, no overlap", "32, overlap 5", "64, no overlap", "64, overlap 10"]
    assert [s.label for s in experiment.settings] == labels and list(experiment.sizes.index) == labels
    assert experiment.baseline == "64, no overlap" and (experiment.k, experiment.budget_tokens) == (2, 128)
    sizes = experiment.sizes
    assert sizes["chunks"].tolist() == [len(s.chunks) for s in experiment.settings]
    assert sizes["evidence cut"].tolist() == [len(s.cut) for s in experiment.settings]
    assert sizes.loc["32, no overlap", "evidence cut"] > 0 and sizes.loc["64, no overlap", "evidence cut"] == 0
    assert sizes.loc["32, no overlap", "questions cut"] == ", ".join(experiment.settings[0].cut)


def test_the_tables_are_means_over_every_question_with_cut_evidence_counted_0(experiment):
    for setting in experiment.settings:
        n = len(setting.runs["BM25"])
        scorable = {name: {q: run[q] for q in setting.qrels} for name, run in setting.runs.items()}
        expected = h.evaluate(scorable, setting.qrels, ks=[2]) * len(setting.qrels) / n
        for metric in h.METRICS:
            assert experiment.at_k.loc[setting.label, metric].tolist() == pytest.approx(expected[(metric, 2)].tolist())
        ceiling = experiment.sizes.loc[setting.label, "precision@2 ceiling"]
        assert ceiling == pytest.approx(h.precision_ceiling(setting.qrels, 2) * len(setting.qrels) / n)


def test_the_budget_gives_every_setting_the_same_word_pieces(experiment):
    budget = experiment.budget
    assert budget["k"].tolist() == [4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2, 2]
    curves = experiment.curves
    at_budget = curves[curves["budget"] == 128].set_index(["setting", "retriever"])["recall"]
    assert budget["recall"].tolist() == pytest.approx(at_budget.reindex(budget.index).tolist())
    assert (curves["budget"] == curves["k"] * curves["chunk size"]).all() and curves["budget"].max() <= 128 * 4 // 3
    assert (budget["success"] >= budget["recall"] - 1e-12).all()


def test_the_comparisons_test_recall_at_the_budget_against_the_largest_size_without_overlap(experiment):
    table = experiment.comparisons
    assert table[["retriever", "setting"]].values.tolist() == [[r, s] for r in ("BM25", "vector", "hybrid")
                                                              for s in ("32, no overlap", "32, overlap 5", "64, overlap 10")]
    assert set(table.index.get_level_values("metric")) == {"recall at 128 word pieces"}
    scores = experiment.scores
    recall = scores[(scores["metric"] == "recall") & (scores["k"] == scores["setting"].map({
        "32, no overlap": 4, "32, overlap 5": 4, "64, no overlap": 2, "64, overlap 10": 2}))]
    wide = recall.pivot_table(index="question", columns=["retriever", "setting"], values="value")
    base, other = wide[("vector", "64, no overlap")], wide[("vector", "32, no overlap")]
    row = table[(table["retriever"] == "vector") & (table["setting"] == "32, no overlap")]
    assert row["difference"].item() == pytest.approx((other - base).mean())
    assert table.attrs["family"].startswith("9 tests: 3 retrievers × 3 settings against 64, no overlap")
