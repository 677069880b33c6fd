"""retrieval_eval/analysis/conventions.py: every variant equals trec_eval (pytrec_eval) where trec_eval has it.

Variants with a trec_eval measure are compared with it directly, on notebook 10's toy and on random
rankings; variants without one are compared with the trec_eval numbers they are built from (named
in each test) or with scikit-learn.
"""

import itertools
import math

import pytest
import pytrec_eval
from cases import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers as h
from retrieval_eval.analysis.conventions import context_precision, exponential_gains, f1_at_k, r_precision, variants

K = 4
# Notebook 10's toy: four questions, each showing one trap.
QRELS = {
    "q1": {"c1": 2, "c2": 2, "c3": 2, "c4": 1, "c5": 1},  # five relevant chunks: more than k
    "q2": {"d1": 2, "d2": 1},  # the ranking is shorter than k
    "q3": {"f1": 1},  # the only relevant chunk is ranked below k
    "q4": {"h1": 2},  # the retriever returned nothing
}
RUN = {
    "q1": ["cx1", "c1", "c4", "c5", "cx2"],
    "q2": ["dx1", "d1", "d2"],
    "q3": ["fx1", "fx2", "fx3", "fx4", "f1"],
    "q4": [],
}
VARIANTS = variants()
BY_NAME = {v.name: v for v in VARIANTS}


def as_run(rankings):
    """Rankings (lists, best first) as a pytrec_eval run with scores strictly decreasing with rank."""
    return {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in rankings.items()}


def trec(qrels, rankings, measure):
    """Per-question values of one trec_eval measure."""
    out = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(as_run(rankings))
    return {q: next(iter(values.values())) for q, values in out.items()}


def cut(rankings, k):
    """The rankings cut at k: what ``trec_eval -M k`` reads."""
    return {q: r[:k] for q, r in rankings.items()}


def expected(variant, qrels, rankings, k):
    """What trec_eval says for a variant that has a measure, per question."""
    judged = {q: {d: int(x) for d, x in exponential_gains(g).items()} for q, g in qrels.items()} if variant.exponential else qrels
    return trec(judged, cut(rankings, k) if variant.cut_run else rankings, variant.measure.format(k=k))


WITH_MEASURE = [v for v in VARIANTS if v.measure]


@pytest.mark.parametrize("variant", WITH_MEASURE, ids=lambda v: v.name)
def test_toy_values_equal_trec_eval(variant):
    ours = {q: variant.score(RUN[q], QRELS[q], K) for q in QRELS}
    assert ours == pytest.approx(expected(variant, QRELS, RUN, K), abs=1e-12)


def test_the_toy_table_and_its_trec_eval_column():
    table, trec_means = h.switchboard(RUN, QRELS, K), h.trec_eval_means(RUN, QRELS, K)
    assert list(table.index) == list(trec_means.index)
    compared = trec_means.dropna()
    assert len(compared) == len(WITH_MEASURE) + 2  # every variant with a measure, the dropped and the micro row
    assert table.loc[compared.index, "mean"].tolist() == pytest.approx(compared.tolist(), abs=1e-12)
    assert table.loc["recall@k", "trec_eval"] == "recall.4" and table.loc["MRR@k", "trec_eval"] == "recip_rank -M 4"
    assert table.loc["F1@k", "trec_eval"] == "none"
    # The values the notebook's prose relies on, from the definitions by hand.
    assert table.loc["hit rate (success@k)", ["q1", "q2", "q3", "q4"]].tolist() == [1, 1, 0, 0]
    assert table.loc["recall@k", "q1"] == pytest.approx(3 / 5) and table.loc["capped recall@k", "q1"] == pytest.approx(3 / 4)
    assert table.loc["precision of returned", "q2"] == pytest.approx(2 / 3) and table.loc["precision@k", "q2"] == 0.5
    assert table.loc["RR (no cut-off)", "q3"] == pytest.approx(1 / 5) and table.loc["MRR@k", "q3"] == 0
    # AP without a cut-off reads rank 5 of q3 (1/5); AP@4 does not
    assert table.loc["AP (no cut-off)", "q3"] == pytest.approx(1 / 5) and table.loc["AP@k", "q3"] == 0
    assert table.loc["recall@k, empty rankings dropped", "mean"] == pytest.approx((3 / 5 + 1 + 0) / 3)


def test_every_two_toy_means_differ_at_three_decimals():
    means = h.switchboard(RUN, QRELS, K)["mean"]
    for (a, x), (b, y) in itertools.combinations(means.items(), 2):
        assert abs(x - y) >= 0.004, (a, b, x, y)


def test_f1_from_trec_eval_precision_and_recall():
    p, r = trec(QRELS, RUN, f"P.{K}"), trec(QRELS, RUN, f"recall.{K}")
    for q in QRELS:
        want = 2 * p[q] * r[q] / (p[q] + r[q]) if p[q] + r[q] else 0.0
        assert f1_at_k(RUN[q], QRELS[q], K) == pytest.approx(want)


def test_context_precision_from_trec_eval_map_cut():
    """context precision@k = map_cut.k · num_rel / num_rel_ret (on the run cut at k)."""
    ap, n_rel, hits = trec(QRELS, RUN, f"map_cut.{K}"), trec(QRELS, RUN, "num_rel"), trec(QRELS, cut(RUN, K), "num_rel_ret")
    for q in QRELS:
        want = ap[q] * n_rel[q] / hits[q] if hits[q] else 0.0
        assert context_precision(RUN[q], QRELS[q], K) == pytest.approx(want)


def test_retrieved_ideal_equals_sklearn_and_trec_eval_shown_only_the_retrieved():
    from sklearn.metrics import ndcg_score

    top = cut(RUN, K)
    shown = {q: {d: QRELS[q].get(d, 0) for d in top[q]} for q in QRELS}
    via_trec = trec({q: g for q, g in shown.items() if any(g.values())}, top, f"ndcg_cut.{K}")
    for q in QRELS:
        ours = h.ndcg_retrieved_ideal(RUN[q], QRELS[q], K)
        assert ours == pytest.approx(via_trec.get(q, 0.0))
        if len(top[q]) >= 2:  # scikit-learn needs two items or more
            gains, scores = [[QRELS[q].get(d, 0) for d in top[q]]], [list(range(len(top[q]), 0, -1))]
            assert ours == pytest.approx(ndcg_score(gains, scores, k=K))


def test_exponential_gain_equals_trec_eval_gain_map():
    """trec_eval's own gain map ``ndcg.1=1,2=3`` (m_ndcg.c, no cut-off) through the C extension.

    pytrec_eval's Python wrapper truncates that measure name, and its C extension then aborts the
    interpreter; the extension class itself takes the name as trec_eval does.
    """
    import pytrec_eval_ext

    out = pytrec_eval_ext.RelevanceEvaluator(QRELS, {"ndcg.1=1,2=3"}).evaluate(as_run(RUN))
    for q in QRELS:
        assert h.ndcg_at_k(RUN[q], exponential_gains(QRELS[q]), 1000) == pytest.approx(out[q]["ndcg"])


def test_micro_recall_and_share_of_ceiling_from_trec_eval_counts():
    hits, n_rel, p = trec(QRELS, cut(RUN, K), "num_rel_ret"), trec(QRELS, RUN, "num_rel"), trec(QRELS, RUN, f"P.{K}")
    assert h.micro_recall(RUN, QRELS, K) == pytest.approx(sum(hits.values()) / sum(n_rel.values()))
    want = sum(p[q] * K for q in QRELS) / sum(min(n_rel[q], K) for q in QRELS)
    assert h.share_of_ceiling(RUN, QRELS, K) == pytest.approx(want)


def test_share_of_ceiling_is_mean_precision_over_the_ceiling():
    mean_p = h.macro_mean(BY_NAME["precision@k"].score, RUN, QRELS, K)
    assert h.share_of_ceiling(RUN, QRELS, K) == pytest.approx(mean_p / h.precision_ceiling(QRELS, K))


def test_empty_ranking_counted_or_dropped_as_trec_eval_with_or_without_c():
    """pytrec_eval has no -c: a question left out of the run is left out of the mean (as trec_eval up
    to 9.0 without -c; 10.0 stops with an error); a question given an empty ranking is scored 0 (what -c does)."""
    recall = BY_NAME["recall@k"].score
    dropped = trec(QRELS, {q: r for q, r in RUN.items() if r}, f"recall.{K}")
    counted = trec(QRELS, RUN, f"recall.{K}")
    assert "q4" not in dropped and counted["q4"] == 0.0
    assert h.macro_mean(recall, RUN, QRELS, K, drop_empty=True) == pytest.approx(sum(dropped.values()) / len(dropped))
    assert h.macro_mean(recall, RUN, QRELS, K) == pytest.approx(sum(counted.values()) / len(counted))


def test_trec_eval_facts_the_notebook_states():
    # recip_rank has no cut-off: pytrec_eval accepts "recip_rank.2" and silently ignores the ".2".
    out = pytrec_eval.RelevanceEvaluator({"q": {"b": 1}}, {"recip_rank.2"}).evaluate(as_run({"q": ["a", "x", "b"]}))
    assert out["q"] == {"recip_rank": pytest.approx(1 / 3)}
    # Ties are broken by document id descending (form_res_rels.c): c, b, a.
    tied = pytrec_eval.RelevanceEvaluator({"q": {"a": 1}}, {"recip_rank"}).evaluate({"q": {"a": 1.0, "b": 1.0, "c": 1.0}})
    assert tied["q"]["recip_rank"] == pytest.approx(1 / 3)


# --- random rankings ----------------------------------------------------------------------------

IDS = [f"k{i}" for i in range(8)]


@st.composite
def question(draw):
    judged = draw(st.dictionaries(st.sampled_from(IDS), st.integers(0, 2), min_size=1, max_size=8))
    if not any(judged.values()):
        judged[draw(st.sampled_from(IDS))] = draw(st.integers(1, 2))
    ranking = draw(st.lists(st.sampled_from(IDS + ["u1", "u2"]), unique=True, max_size=10))  # u*: never judged
    return judged, ranking


@settings(max_examples=examples(150), deadline=None)
@given(question(), st.integers(1, 7))
def test_random_rankings_equal_trec_eval(q, k):
    gains, ranking = q
    for variant in WITH_MEASURE:
        want = expected(variant, {"q": gains}, {"q": ranking}, k)["q"]
        assert variant.score(ranking, gains, k) == pytest.approx(want, abs=1e-12), variant.name


@settings(max_examples=examples(200), deadline=None)
@given(question(), st.integers(1, 7))
def test_random_rankings_keep_the_orderings_the_notebook_teaches(q, k):
    gains, ranking = q
    value = {v.name: v.score(ranking, gains, k) for v in VARIANTS}
    assert all(0.0 <= x <= 1.0 + 1e-12 and not math.isnan(x) for x in value.values())
    assert value["recall@k"] <= value["capped recall@k"] + 1e-12 <= value["hit rate (success@k)"] + 2e-12
    assert value["precision@k"] <= value["precision of returned"] + 1e-12
    assert value["MRR@k"] <= value["RR (no cut-off)"] + 1e-12 and value["MRR@k"] <= value["hit rate (success@k)"]
    assert value["AP@k"] <= value["AP (no cut-off)"] + 1e-12
    assert value["AP@k"] <= value["context precision (RAG tools)"] + 1e-12
    assert value["nDCG@k"] <= value["nDCG@k, ideal from retrieved"] + 1e-12
    if len(h.relevant_ids(gains)) == 1:  # one relevant id: AP is RR, R-precision is precision@1
        assert value["AP (no cut-off)"] == pytest.approx(value["RR (no cut-off)"])
        assert value["R-precision"] == h.precision_at_k(ranking, h.relevant_ids(gains), 1)


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: h.hit_rate(["a", "a"], {"a": 1}, 3), "duplicate id 'a'"),
    (lambda: h.capped_recall(["a"], {"a": 0}, 3), "relevant is empty"),
    (lambda: h.precision_of_returned(["a"], {"a": 1}, 0), "k must be >= 1"),
    (lambda: h.average_precision(["a"], {"a": 1}, k=0), "k must be >= 1"),
    (lambda: r_precision(["a", "a"], {"a": 1}), "duplicate id 'a'"),
    (lambda: context_precision({"a"}, {"a": 1}, 3), "must be a list or tuple of ids"),
    (lambda: h.switchboard({"q1": ["a"]}, {"q1": {"a": 1}, "q2": {"b": 1}}, 3), r"run has no ranking for question\(s\) \['q2'\]"),
    (lambda: h.switchboard({"q1": ["a", "a"]}, {"q1": {"a": 1}}, 3), "run, question 'q1': duplicate id 'a'"),
    (lambda: h.switchboard(["a"], {"q1": {"a": 1}}, 3), "run must be a mapping"),
    (lambda: h.trec_eval_means({"q1": ["a"]}, {"q1": {"a": 1}, "q2": {"b": 1}}, 3), r"run has no ranking for question\(s\) \['q2'\]"),
    (lambda: h.trec_eval_means({"q1": ["a", "a"]}, {"q1": {"a": 1}}, 3), "run, question 'q1': duplicate id 'a'"),
    (lambda: h.trec_eval_means({"q1": ["a"]}, {"q1": {"a": 1.5}}, 3), r"whole-number gains; question\(s\) \['q1'\]"),
    (lambda: h.micro_recall({"q1": ["a"]}, {"q1": {"a": 1}, "q2": {"b": 1}}, 3), r"run has no ranking for question\(s\) \['q2'\]"),
    (lambda: h.macro_mean(h.hit_rate, {"q1": []}, {"q1": {"a": 1}}, 3, drop_empty=True), "every ranking is empty"),
    (lambda: h.macro_mean(h.hit_rate, {}, {"q1": {"a": 1}}, 3), r"no ranking for question\(s\) \['q1'\]"),
    (lambda: h.share_of_ceiling({"q1": ["a"]}, {"q1": {"b": -1}}, 3), r"\['q1'\] have no relevant chunk"),
])
def test_bad_input_is_refused_with_a_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_the_switchboard_reads_the_registry(restore_metrics):
    """A metric registered at run time is a row of the switchboard, with its trec_eval measure."""
    from retrieval_eval.core.registry import Metric

    assert [v.name for v in VARIANTS[:4]] == ["recall@k", "precision@k", "MRR@k", "nDCG@k"]
    h.register_metric(Metric("AP", "AP@{k}", "map_cut.{k}", h.average_precision, lambda judged, k: None))
    table, trec_means = h.switchboard(RUN, QRELS, K), h.trec_eval_means(RUN, QRELS, K)
    assert table.loc["AP@k", "trec_eval"] == f"map_cut.{K}" and list(table.index).index("AP@k") == 4
    assert trec_means["AP@k"].tolist() == pytest.approx(table.loc["AP@k", "mean"].tolist())
