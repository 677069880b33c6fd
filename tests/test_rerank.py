"""retrieval_eval/retrieval/rerank.py: a second stage only reorders the first stage's top N; the oracle reaches the
ceiling; the built-in re-scorer and a CrossEncoder against trec_eval; the two-stage table by hand."""

import math

import pandas as pd
import pytest
import pytrec_eval
from cases import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers as h
from retrieval_eval.inputs.trec import write_trec_run
from retrieval_eval.retrieval.rerank import CrossEncoderReranker, seconds_per_question, sentences


class Scores:
    """A reranker of the test's own: the scores given per chunk id (texts are the ids here); 0 for the rest."""

    def __init__(self, by_id: dict | None = None):
        self.by_id = by_id or {}

    def score(self, question, texts):
        return [self.by_id.get(t, 0.0) for t in texts]

    def key(self):
        return {"reranker": "scores", "by id": sorted(self.by_id.items())}


# --- rerank: the same top N, in a new order; ties keep the first stage's order ------------------------

IDS = [f"c{i}" for i in range(12)]


@settings(max_examples=examples(200), deadline=None)
@given(st.permutations(IDS).flatmap(lambda p: st.integers(0, len(IDS)).map(lambda n: p[:n])),
       st.lists(st.sampled_from([0.0, 0.5, 1.0, -2.0]), min_size=len(IDS), max_size=len(IDS)), st.integers(1, 14))
def test_rerank_keeps_the_set_of_the_top_n_and_orders_ties_as_the_first_stage(ranked, scores, depth):
    reranker = Scores(dict(zip(IDS, scores)))
    texts = {c: c for c in IDS}
    out = h.rerank({"q": ranked}, reranker, texts, {"q": "?"}, depth)["q"]
    top = ranked[:depth]
    assert sorted(out) == sorted(top)  # the same chunks, nothing from below N, nothing dropped
    expected = sorted(top, key=lambda c: (-reranker.by_id[c], top.index(c)))  # score, then first-stage order
    assert out == expected


def test_rerank_by_hand():
    run = {"q1": ["a", "b", "c", "d"], "q2": []}
    texts = {c: c for c in "abcd"}
    reranker = Scores({"c": 2.0, "b": 1.0, "a": 1.0, "d": 9.0})
    assert h.rerank(run, reranker, texts, {"q1": "?", "q2": "?"}, depth=3) == {"q1": ["c", "a", "b"], "q2": []}
    noisy = Scores({"a": 0.5 + 4e-8, "b": 0.5})  # float noise of a model's scores: a tie, first-stage order kept
    assert h.rerank({"q": ["b", "a"]}, noisy, {"a": "a", "b": "b"}, {"q": "?"}) == {"q": ["b", "a"]}
    assert h.oracle_rerank(run, {"q1": {"c": 1, "b": 2, "z": 1}, "q2": {"a": 1}}, depth=3) == {"q1": ["b", "c", "a"], "q2": []}


@pytest.mark.parametrize("scores, message", [
    (lambda texts: [1.0] * (len(texts) - 1), "question 'q1': the reranker must give one finite score per chunk, 3 in all"),
    (lambda texts: [1.0, math.nan, 0.0], "question 'q1': the reranker must give one finite score per chunk"),
    (lambda texts: ["high", "low", "low"], "question 'q1': the reranker must give one finite score per chunk"),
])
def test_a_reranker_that_gives_bad_scores_is_refused_naming_the_question(scores, message):
    """Fewer scores than chunks silently dropped chunks from the top N; NaN sorted them at random."""
    reranker = type("Bad", (), {"score": lambda self, q, texts: scores(texts), "key": lambda self: {}})()
    with pytest.raises(ValueError, match=message):
        h.rerank({"q1": ["a", "b", "c"]}, reranker, {c: c for c in "abc"}, {"q1": "?"}, 3)


def test_sentences_split_at_ends_and_line_breaks():
    assert sentences("One. Two? Three!\n| a | b |\n\n- item\nEnd") == ["One.", "Two?", "Three!", "| a | b |", "- item", "End"]
    assert sentences("  \n ") == []


# --- the oracle reaches the ceiling: the first stage's recall@N --------------------------------------


def test_the_oracle_reaches_the_first_stages_recall_at_n(runs, qrels):
    """For every first stage and every N >= k: the oracle's success@k is the first stage's success@N, and its
    recall@k is min(hits@N, k) / |R| — the first stage's recall@N whenever k >= |R| (here k >= 2)."""
    most = max(len(h.relevant_ids(g)) for g in qrels.values())
    for name, run in runs.items():
        for k in (1, 2, 3, 5, 10):
            for n in (k, 5, 10, 20, 50):
                if n < k:
                    continue
                oracle = h.oracle_rerank(run, qrels, n)
                before = h.batch_scores(run, qrels, [n], ["recall"])[("recall", n)]
                after = h.batch_scores(oracle, qrels, [k], ["recall"])[("recall", k)]
                hits = {q: len(h.relevant_ids(g) & set(run[q][:n])) for q, g in qrels.items()}
                assert after.tolist() == [min(hits[q], k) / len(h.relevant_ids(g)) for q, g in qrels.items()]
                assert (after <= before).all()
                if k >= most:
                    assert after.tolist() == before.tolist(), (name, k, n)
                found = [float(bool(hits[q])) for q in qrels]
                assert [h.success_at_k(oracle[q], h.relevant_ids(g), k) for q, g in qrels.items()] == found


# --- the two-stage table, by hand ---------------------------------------------------------------------


def test_two_stage_table_counts_what_a_reranker_could_and_cannot_fix():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"d": 1, "e": 1}}
    run = {"q1": ["a", "x", "y", "z"],  # found at 1: nothing to fix
           "q2": ["x", "y", "b", "z"],  # at 3: in the top N = 3, not in the top k = 1: could fix
           "q3": ["x", "y", "z", "c"],  # at 4: below N = 3: cannot fix; with N = 4 could fix
           "q4": ["x", "y", "z", "w"]}  # never found: cannot fix at any N
    reranked = {("R", 3): {"q1": ["x", "a", "y"], "q2": ["b", "x", "y"], "q3": ["x", "y", "z"], "q4": ["x", "y", "z"]}}
    table = h.two_stage_table({"R": run}, qrels, reranked, depths=[3, 4], k=1)
    assert list(table.index) == [("R", 3), ("R", 4)]
    assert table["could fix"].tolist() == [1, 2] and table["cannot fix"].tolist() == [2, 1]
    assert table["recall@N (ceiling)"].tolist() == [2 / 4, 3 / 4]
    row = table.loc[("R", 3)]
    assert row["recall@1, first stage"] == 1 / 4 and row["recall@1, oracle"] == 2 / 4 and row["recall@1, reranker"] == 1 / 4
    assert row["MRR@1, reranker"] == 1 / 4  # it fixed q2 and broke q1: recall@1 the same, a different question
    assert pd.isna(table.loc[("R", 4), "recall@1, reranker"])  # no reranked run for N = 4


def test_two_stage_table_on_the_teaching_set_and_its_door(runs, qrels):
    table = h.two_stage_table(runs, qrels)
    assert list(table.index) == [(name, n) for name in runs for n in h.DEPTHS]
    n = len(qrels)
    assert ((table["could fix"] + table["cannot fix"]) <= n).all()
    ceiling = table["recall@N (ceiling)"]
    assert (table["recall@3, oracle"] <= ceiling + 1e-12).all() and (table["recall@3, first stage"] <= table["recall@3, oracle"]).all()
    with pytest.raises(ValueError, match=r"BM25 has no ranking for question\(s\) \['q01'\]"):
        h.two_stage_table({"BM25": {q: r for q, r in runs["BM25"].items() if q != "q01"}}, qrels)
    with pytest.raises(ValueError, match="depths must be a list of cut-offs, got 3"):
        h.two_stage_table(runs, qrels, depths=3)
    with pytest.raises(ValueError, match="k must be >= 1"):
        h.two_stage_table(runs, qrels, k=0)


# --- the Rerank stage in the registry -------------------------------------------------------------------


def test_a_rerank_stage_and_the_reranker_argument(tmp_path, chunks):
    favour = Scores({c["text"]: float(len(c["text"])) for c in chunks})  # the longest chunk first
    texts = {c["id"]: c["text"] for c in chunks}
    setup = h.evaluation_setup(reranker=favour, retrievers={"BM25, top 5 reranked": h.Rerank("BM25", favour, depth=5)},
                               cache_dir=tmp_path)
    assert list(setup.runs) == [*h.default_retrievers(), "BM25, top 5 reranked", "hybrid + rerank"]
    questions = dict(zip(setup.golden["id"], setup.golden["question"]))
    assert setup.runs["hybrid + rerank"] == h.rerank(setup.runs["hybrid"], favour, texts, questions, 10)
    assert setup.runs["BM25, top 5 reranked"] == h.rerank(setup.runs["BM25"], favour, texts, questions, 5)
    assert setup.runs["hybrid + rerank"] != {q: r[:10] for q, r in setup.runs["hybrid"].items()}
    assert len(list((tmp_path / "rankings").glob("*.json"))) == 2  # reranked runs are cached
    again = h.evaluation_setup(reranker=favour, cache_dir=tmp_path)
    assert again.runs["hybrid + rerank"] == setup.runs["hybrid + rerank"]


@pytest.mark.parametrize("call, message", [
    (lambda: h.load_reranker("not-installed/model"),
     r"^reranker 'not-installed/model': not installed here: no such folder, and not in the local Hugging Face cache"),
    (lambda: h.load_reranker(3), r"a reranker needs the methods score\(question, texts\) and key\(\)"),
    (lambda: h.load_reranker(type("NoKey", (), {"score": lambda s, q, t: []})()), r"has no \['key'\]"),
    (lambda: h.Rerank("hybrid"), r"None has no \['score', 'key'\]"),
    (lambda: h.rerank({"q": ["a"]}, Scores(), {"a": "a"}, {"q": "?"}, depth=0), "depth must be >= 1"),
    (lambda: h.oracle_rerank({"q": ["a"]}, {"q": {"a": 1}}, depth=2.5), "depth must be an integer"),
])
def test_a_reranker_that_cannot_be_used_is_refused_in_one_line(call, message, tmp_path):
    with pytest.raises(ValueError, match=message) as error:
        call()
    assert "\n" not in str(error.value)


def test_a_folder_that_is_not_a_model_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match=rf"reranker '{tmp_path}': {tmp_path} holds no config.json"):
        h.load_reranker(str(tmp_path))


def test_the_committed_rerank_is_the_bundled_models_only():
    """The committed key leaves out the model's fingerprint; a SentenceReranker of another model got the
    bundled model's committed run."""
    from retrieval_eval.core.paths import RUNS_DIR
    from retrieval_eval.retrieval.rerank import SentenceReranker
    from retrieval_eval.retrieval.stages import committed_run

    bundled, other = object.__new__(SentenceReranker), object.__new__(SentenceReranker)  # no model loaded
    bundled.model_name, other.model_name = None, "/some/other/model"
    assert committed_run("hybrid + rerank", h.Rerank("hybrid", bundled), RUNS_DIR) is not None
    assert committed_run("hybrid + rerank", h.Rerank("hybrid", other), RUNS_DIR) is None
    assert committed_run("hybrid + rerank", h.Rerank("hybrid", bundled, depth=5), RUNS_DIR) is None
    assert committed_run("hybrid + rerank", h.Rerank("vector", bundled), RUNS_DIR) is None


def test_seconds_per_question_times_every_question():
    times = seconds_per_question(Scores(), {"q1": ["a", "b"], "q2": []}, {"a": "a", "b": "b"}, {"q1": "?", "q2": "?"}, 2)
    assert list(times.index) == ["q1", "q2"] and (times >= 0).all() and times.name == "seconds to rerank 2"


# --- real second stages: the built-in re-scorer and a CrossEncoder ----------------------------------------


def trec_eval_means(path, qrels, measures):
    with open(path) as f:
        run = pytrec_eval.parse_run(f)
    out = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    return {m: sum(out.get(q, {}).get(m, 0.0) for q in qrels) / len(qrels) for m in next(iter(out.values()))}


def test_the_sentence_rerankers_run_file_scored_by_trec_eval_equals_evaluate(setup, tmp_path):
    """The committed reranked run (a fresh reranking equals it: test_pipeline) reorders hybrid's top 10 only."""
    run = h.evaluation_setup(reranker="sentence", cache_dir=tmp_path / "cache").runs["hybrid + rerank"]
    assert all(sorted(run[q]) == sorted(setup.runs["hybrid"][q][:10]) for q in run)
    path = write_trec_run(run, tmp_path / "rerank.trec", "rerank")
    trec = trec_eval_means(path, setup.qrels, {"recall.3", "P.3", "ndcg_cut.3"})
    ours = h.evaluate({"rerank": run}, setup.qrels, [3]).loc["rerank"]
    assert ours[("recall", 3)] == pytest.approx(trec["recall_3"], abs=1e-12)
    assert ours[("precision", 3)] == pytest.approx(trec["P_3"], abs=1e-12)
    assert ours[("nDCG", 3)] == pytest.approx(trec["ndcg_cut_3"], abs=1e-4)


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory):
    """A CrossEncoder built here: one BERT layer of width 32 on the bundled model's tokenizer, saved as a folder."""
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from retrieval_eval.inputs.models import model_path

    tokenizer = AutoTokenizer.from_pretrained(model_path(None))
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512, num_labels=1)
    import torch

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("cross-encoder")
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.mark.slow
def test_a_cross_encoder_installed_locally_reranks(tiny_cross_encoder, setup, tmp_path):
    from sentence_transformers import CrossEncoder

    reranker = h.load_reranker(str(tiny_cross_encoder))
    assert isinstance(reranker, CrossEncoderReranker)
    texts = ["The bike is delivered in a week.", "Cancel one month ahead."]
    direct = CrossEncoder(str(tiny_cross_encoder), device="cpu").predict([("When is delivery?", t) for t in texts])
    assert reranker.score("When is delivery?", texts) == pytest.approx([float(s) for s in direct], abs=1e-6)
    rerun = h.evaluation_setup(reranker=str(tiny_cross_encoder), cache_dir=tmp_path).runs
    chunk_texts = {c["id"]: c["text"] for c in setup.chunks}
    questions = dict(zip(setup.golden["id"], setup.golden["question"]))
    assert rerun["hybrid + rerank"] == h.rerank(setup.runs["hybrid"], reranker, chunk_texts, questions, 10)
    assert reranker.key()["reranker"] == "cross-encoder"
