"""The registries hold: a fifth metric and a fourth built-in retriever, registered here and nowhere else, reach every
table, plot, widget, paired test, interval, sheet and report (make evaluate's too); the RRF widget still fuses hybrid's
inputs when the new retriever sits between them in the registry."""

from dataclasses import dataclass

import pandas as pd
import pytest

import helpers as h
from retrieval_eval.core import registry
from retrieval_eval.core.metrics import relevant_ids, success_at_k
from retrieval_eval.course.plots import plot_metrics
from retrieval_eval.course.sheet import numbers_table
from retrieval_eval.retrieval import setup as built_in
from retrieval_eval.retrieval.retrievers import IdOrder
from retrieval_eval.retrieval.stages import DEPTH, Stage
from retrieval_eval.tool import cli, report

HIT = registry.Metric("hit rate", "hit rate@{k}", "success.{k}", lambda r, g, k: success_at_k(r, relevant_ids(g), k),
                      lambda judged, k: (judged.hits(k) > 0).astype(float))


@dataclass(frozen=True)
class TfIdf(Stage):
    """TF-IDF with scikit-learn: the cosine of a question's and each chunk's tf-idf vectors, ties by id."""

    def run(self, context):
        from sklearn.feature_extraction.text import TfidfVectorizer

        vectorizer = TfidfVectorizer()
        chunks = vectorizer.fit_transform([c["text"] for c in context.chunks])
        scores = (vectorizer.transform(list(context.questions.values())) @ chunks.T).toarray()
        order = IdOrder([c["id"] for c in context.chunks])
        return {q: order.top(s, DEPTH, matched=True) for q, s in zip(context.questions, scores)}


@pytest.fixture(scope="module")
def grown(tmp_path_factory):
    """The teaching set with both registered; TF-IDF registered between BM25 and vector (hybrid reads those two)."""
    metrics, retrievers = dict(registry.METRICS), dict(built_in.RETRIEVERS)
    registry.register_metric(HIT)
    stages = list(retrievers.items())
    built_in.RETRIEVERS.clear()
    built_in.RETRIEVERS.update([stages[0], ("TF-IDF", TfIdf()), *stages[1:]])
    try:
        yield h.evaluation_setup(cache_dir=tmp_path_factory.mktemp("cache"))
    finally:
        registry.METRICS.clear()
        registry.METRICS.update(metrics)
        built_in.RETRIEVERS.clear()
        built_in.RETRIEVERS.update(retrievers)


def test_the_new_retriever_is_ranked_and_the_new_metric_is_in_every_table(grown):
    assert list(grown.runs) == ["BM25", "TF-IDF", "vector", "hybrid"]
    table = h.evaluate(grown.runs, grown.qrels, ks=[1, 3])
    assert list(table.index) == list(grown.runs) and ("hit rate", 3) in table.columns
    ranks = h.first_relevant_ranks(grown.runs, grown.qrels)
    assert table.loc["TF-IDF", ("hit rate", 3)] == pytest.approx((ranks["TF-IDF"].fillna(99) <= 3).mean())
    long = h.per_question_scores(grown.runs, grown.qrels, ks=[3])
    assert set(long["run"]) == set(grown.runs) and "hit rate" in set(long["metric"])
    sheet = numbers_table(grown)
    assert "TF-IDF" in sheet.index and "hit rate@3" in sheet.columns


def test_both_reach_the_plots_the_paired_tests_and_the_intervals(grown, close_figures):
    fig = plot_metrics(h.evaluate(grown.runs, grown.qrels, ks=[1, 3]))
    assert "hit rate@k" in [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert "TF-IDF" in [t.get_text() for t in fig.legends[0].get_texts()]
    pairs = h.paired_comparisons(grown.runs, grown.qrels, k=3)
    assert "hit rate" in pairs.index.get_level_values("metric")
    assert {"BM25 − TF-IDF", "TF-IDF − hybrid"} <= set(pairs.index.get_level_values("pair"))
    intervals = h.interval_table(grown.runs, grown.qrels, k=3)
    assert ("TF-IDF", "hit rate") in intervals.index
    assert h.switchboard(grown.runs["TF-IDF"], grown.qrels, 3).index.tolist().count("hit rate@k") == 1


def test_both_reach_every_widget_and_rrf_fuses_hybrids_inputs(grown):
    runs, qrels, golden, chunks = grown.runs, grown.qrels, grown.golden, grown.chunks
    assert "TF-IDF" in h.ceiling_widget(qrels, runs).retriever.options
    assert "TF-IDF" in h.ranks_widget(runs, qrels, golden, chunks).static_html()
    assert "TF-IDF" in h.depth_widget(runs, qrels).static_html()
    assert "hit rate" in h.playground_widget().state["values"]
    rrf = h.rrf_widget(runs, qrels, golden)
    assert rrf.inputs == ["BM25", "vector"]
    assert rrf.state["fused"] == h.reciprocal_rank_fusion([runs["BM25"][rrf.question.value], runs["vector"][rrf.question.value]])
    assert "hit rate@3" in rrf.state["metrics"].columns


def test_both_reach_every_section_of_the_report(grown):
    ev = report.from_setup(grown)
    html = report.render(ev)
    for section in (report.scores_section, report.intervals_section):
        part = section(ev).html
        assert "TF-IDF" in part and "hit rate" in part, section.__name__
    tests = report.tests_section(ev).tables["tests"]  # the first rows shown, all of them in paired_tests.csv
    assert {"TF-IDF", "hit rate"} <= {*tests["A"], *tests["B"], *tests.index.get_level_values("metric")}
    assert html.count("<h2>") == len(report.SECTIONS)


def test_make_evaluate_reports_both(grown, tmp_path, capsys):
    environ = {"RETRIEVAL_EVAL_OUTPUT": str(tmp_path / "out"), "RETRIEVAL_EVAL_CACHE": str(tmp_path / "cache"),
               "REPORT": "grown"}
    assert cli.main(["evaluate"], environ) == 0, capsys.readouterr().err
    scores = pd.read_csv(tmp_path / "out" / "grown" / "scores.csv")
    assert list(scores["run"].unique()) == list(grown.runs) and "hit rate" in set(scores["metric"])
    text = (tmp_path / "out" / "grown" / "report.html").read_text()
    assert "TF-IDF" in text and "hit rate@3" in text
