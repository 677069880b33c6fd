"""retrieval_eval/course/plots.py: the evaluation plots draw the numbers they are given."""

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import helpers as h  # noqa: E402
from retrieval_eval.analysis.abstention import plot_abstention  # noqa: E402
from retrieval_eval.course.plots import plot_metrics, plot_precision_ceiling  # noqa: E402

pytestmark = pytest.mark.usefixtures("close_figures")


# --- plot_first_relevant_ranks ----------------------------------------------------------------


RANKS = pd.DataFrame({"question": ["?"] * 4, "n_relevant": [1] * 4,
                      "A": pd.array([1, 1, 12, pd.NA], dtype="Int64"), "B": pd.array([2, 3, 3, 1], dtype="Int64")})


def test_first_relevant_rank_bars_count_questions_and_keep_misses_apart():
    fig = h.plot_first_relevant_ranks(RANKS, k=3, max_rank=10, title="where the first hit lands")
    ax = fig.axes[0]
    heights = [[p.get_height() for p in container] for container in ax.containers]
    assert heights[0] == [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]  # A: two at rank 1; rank 12 in ">10", a miss in "none"
    assert heights[1] == [1, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    assert [t.get_text() for t in ax.get_xticklabels()][-2:] == [">10", "none"]
    assert ax.get_title() == "where the first hit lands" and ax.get_ylabel() == "questions (of 4)"


def test_first_relevant_rank_bars_as_mrr_add_up_to_mrr_and_mrr_at_k():
    fig = h.plot_first_relevant_ranks(RANKS, k=3, max_rank=10, as_mrr=True)
    ax = fig.axes[0]
    for name, container in zip(["A", "B"], ax.containers):
        heights = [p.get_height() for p in container]
        rankings = [["x0"] if rank is pd.NA else [f"x{i}" for i in range(1, int(rank))] + ["r"] for rank in RANKS[name]]
        relevant = [{"r"}] * len(rankings)
        assert sum(heights) == pytest.approx(h.mrr(rankings, relevant))
        assert sum(heights[:3]) == pytest.approx(h.mrr(rankings, relevant, k=3))
    assert heights[:3] == pytest.approx([1 / 4, 1 / 2 / 4, 2 / 3 / 4])  # B: count × 1/rank / n
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[1:] == [f"A: MRR = {(2 + 1 / 12) / 4:.3f}", f"B: MRR = {(1 + 1 / 2 + 2 / 3) / 4:.3f}"]


def test_first_relevant_rank_text_is_at_least_16_px_as_a_notebook_shows_it(smallest_displayed_px):
    for as_mrr in (False, True):
        fig = h.plot_first_relevant_ranks(RANKS, k=3, as_mrr=as_mrr, title="What each rank adds to MRR")
        assert smallest_displayed_px(fig) >= 16


def test_first_relevant_ranks_needs_a_retriever_column():
    with pytest.raises(ValueError, match="ranks has no run column"):
        h.plot_first_relevant_ranks(pd.DataFrame({"question": ["?"], "n_relevant": [1]}))


# --- plot_precision_ceiling -------------------------------------------------------------------


def test_precision_ceiling_curve_comes_from_the_labels():
    qrels = {"q1": {"a": 1}, "q2": {"a": 1, "b": 1}}
    table = pd.DataFrame({("precision", 1): [0.5], ("precision", 2): [0.25]}, index=["run"])
    fig = plot_precision_ceiling(qrels, ks=[1, 2], table=table, k=2)
    ceiling, one_over_k, run = fig.axes[0].lines
    assert [t.get_text() for t in fig.axes[0].texts] == ["ceiling at k = 2: 0.750"]
    assert list(ceiling.get_ydata()) == [1.0, h.precision_ceiling(qrels, 2)] == [1.0, 0.75]
    assert list(one_over_k.get_ydata()) == [1.0, 0.5]
    assert one_over_k.get_zorder() > ceiling.get_zorder()  # drawn on top: the two nearly coincide on our labels
    assert list(run.get_ydata()) == [0.5, 0.25]
    with pytest.raises(ValueError, match=r"the table has no precision at k = \[3\]"):
        plot_precision_ceiling(qrels, ks=[1, 3], table=table)
    with pytest.raises(ValueError, match="k = 5 is not one of the ks"):
        plot_precision_ceiling(qrels, ks=[1, 2], k=5)


def test_precision_ceiling_picture_has_its_title_and_readable_text(smallest_displayed_px):
    qrels = {"q1": {"a": 1}, "q2": {"a": 1, "b": 1}}
    ks = range(1, 11)
    table = pd.DataFrame({("precision", k): [0.5 / k, 0.4 / k, 0.3 / k] for k in ks}, index=["BM25", "vector", "hybrid"])
    fig = plot_precision_ceiling(qrels, ks=ks, table=table, k=3, title="The precision@k ceiling of these labels")
    assert fig.axes[0].get_title() == "The precision@k ceiling of these labels"
    assert smallest_displayed_px(fig) >= 16


# --- plot_metrics, plot_intervals, plot_two_stage ---------------------------------------------------


def test_plot_metrics_draws_one_panel_per_metric_and_the_ceiling(runs, qrels):
    table = h.evaluate(runs, qrels, ks=range(1, 11))
    fig = plot_metrics(table, qrels, k_llm=3)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["recall@k", "precision@k", "MRR@k", "nDCG@k"]
    recall = panels[0].lines[0]
    assert list(recall.get_xdata()) == list(range(1, 11)) and list(recall.get_ydata()) == table.loc["BM25", "recall"].tolist()
    ceiling = next(line for line in panels[1].lines if line.get_label() == "ceiling")
    assert list(ceiling.get_ydata()) == [h.precision_ceiling(qrels, k) for k in range(1, 11)]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[:3] == list(runs) and "k the LLM reads (3)" in labels
    two = plot_metrics(table[["MRR", "nDCG"]])
    assert [ax.get_title() for ax in two.axes if ax.get_visible()] == ["MRR@k", "nDCG@k"]
    with pytest.raises(ValueError, match="table must be a table of evaluate"):
        plot_metrics(table.xs(3, axis=1, level="k"))


def test_plot_intervals_draws_each_runs_interval(runs, qrels):
    intervals = h.interval_table(runs, qrels, k=3)
    fig = h.plot_intervals(intervals, title="95% intervals")
    assert [ax.get_title() for ax in fig.axes] == ["success", *(m for m, metric in h.METRICS.items() if metric.shown and metric.tested)] and fig._suptitle.get_text() == "95% intervals"
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == list(runs)
    means = fig.axes[0].lines[0].get_xdata()
    assert list(means) == intervals.xs("success", level="metric")["mean"].tolist()
    with pytest.raises(ValueError, match="intervals must be a table of interval_table"):
        h.plot_intervals(intervals.reset_index())


def test_plot_two_stage_draws_the_ceiling_and_the_oracle(runs, qrels):
    table = h.two_stage_table(runs, qrels)
    fig = h.plot_two_stage(table, "hybrid", k=3)
    ax = fig.axes[0]
    part = table.xs("hybrid", level="first stage")
    by_label = {line.get_label(): line for line in ax.lines}
    assert list(by_label["ceiling: recall@N of the first stage"].get_ydata()) == part["recall@N (ceiling)"].tolist()
    assert list(by_label["oracle reranker (reads the labels)"].get_ydata()) == part["recall@3, oracle"].tolist()
    assert ax.get_title() == "hybrid: top N reranked, top 3 to the LLM"
    with pytest.raises(ValueError, match=r"the table holds no first stage 'BM 25'; it holds \['BM25', 'vector', 'hybrid'\]"):
        h.plot_two_stage(table, "BM 25")


# --- every plot function: its text at 16 px or more as a notebook shows it ---------------------


# Every plot function of the package, called as a notebook calls it on the Polder set.
PLOTS = {
    "plot_metrics": lambda p: plot_metrics(h.evaluate(p.runs, p.qrels, ks=range(1, 11)), p.qrels, k_llm=3),
    "plot_first_relevant_ranks": lambda p: h.plot_first_relevant_ranks(
        h.first_relevant_ranks(p.runs, p.qrels, p.golden), k=3, as_mrr=True, title="What each rank adds"),
    "plot_precision_ceiling": lambda p: plot_precision_ceiling(
        p.qrels, ks=range(1, 11), table=h.evaluate(p.runs, p.qrels, ks=range(1, 11)), k=3, title="The ceiling"),
    "plot_intervals": lambda p: h.plot_intervals(h.interval_table(p.runs, p.qrels, k=3), title="Intervals"),
    "plot_two_stage": lambda p: h.plot_two_stage(h.two_stage_table(p.runs, p.qrels), "hybrid"),
    "plot_rankings": lambda p: h.plot_rankings({name: run["q01"] for name, run in p.runs.items()}, p.qrels["q01"], k=3,
                                               show=("recall",), title="q01: the three rankings"),
    "plot_discount": lambda p: h.plot_discount(max_rank=10, k=3, title="The discount"),
    "plot_precision_recall": lambda p: h.plot_precision_recall(p.runs, p.qrels, title="Precision and recall"),
}


@pytest.fixture(scope="module")
def polder(runs, qrels, golden):
    return type("Polder", (), {"runs": runs, "qrels": qrels, "golden": golden})


def test_the_list_holds_every_plot_function():
    from retrieval_eval.course import plots

    assert set(PLOTS) == {name for name in [*h.__all__, *vars(plots)] if name.startswith("plot_")}


@pytest.mark.parametrize("name", list(PLOTS))
def test_every_plot_shows_its_text_at_16_px_or_more(name, polder, smallest_displayed_px):
    fig = PLOTS[name](polder)
    assert smallest_displayed_px(fig) >= 16, f"{name}: text shown below 16 px in a 9-inch notebook column"


def test_plot_precision_recall_draws_the_trade_off_and_the_interpolated_curve(runs, qrels):
    fig = h.plot_precision_recall(runs, qrels, max_k=5)
    left, right = fig.axes
    table = h.evaluate(runs, qrels, ks=range(1, 6))
    for line, name in zip(left.get_lines(), runs):
        assert list(line.get_xdata()) == pytest.approx(table.loc[name, "recall"].tolist())
        assert list(line.get_ydata()) == pytest.approx(table.loc[name, "precision"].tolist())
    for line, run in zip(right.get_lines(), runs.values()):
        mean = pd.DataFrame([h.iprec_at_recall(run[q], g) for q, g in qrels.items()]).mean()
        assert list(line.get_ydata()) == pytest.approx(mean.tolist()) and len(line.get_xdata()) == 11


# --- a user's text (run names, labels) is drawn as typed, never as mathtext ------------------------

PAYLOADS = ("cost $5 and $6", r"PR 12 $\frac{1}{$ broken")  # mathtext drops the first's dollars, fails on the second


def drawn_as_typed(fig) -> set:
    """The texts of a figure, after drawing it (a mathtext parse error would raise here); each "$" one as typed."""
    from matplotlib.text import Text

    fig.canvas.draw()
    texts = [t for t in fig.findobj(Text) if "$" in t.get_text()]
    assert not [t.get_text() for t in texts if t.get_parse_math()], "drawn as mathtext"
    return {t.get_text() for t in fig.findobj(Text)}


def named_polder(polder):
    runs = {PAYLOADS[0]: polder.runs["BM25"], PAYLOADS[1]: polder.runs["vector"], "hybrid": polder.runs["hybrid"]}
    return type("Polder", (), {"runs": runs, "qrels": polder.qrels, "golden": polder.golden})


def history_figure(polder, tmp_path):
    import matplotlib.image
    from matplotlib.figure import Figure

    from retrieval_eval.tool import history

    rows = [{"time": f"2026-12-0{i}T00:00:00+00:00", "label": label, "run": "r", "gate": None,
             "metrics": {"recall@3": {"mean": 0.5, "low": 0.4, "high": 0.6}}} for i, label in enumerate(PAYLOADS, 1)]
    captured = []
    original = Figure.savefig
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Figure, "savefig", lambda self, *a, **k: (captured.append(self), original(self, *a, **k))[1])
        history.plot_history(rows, tmp_path / "h.png")
    assert matplotlib.image.imread(tmp_path / "h.png").size
    return captured[0]


USER_TEXT_FIGURES = {  # every drawing a user's text reaches beside PLOTS: (its figure, whether it shows a run's name)
    "plot_abstention": (lambda p, tmp: plot_abstention(pd.DataFrame(
        {"run": [PAYLOADS[0]] * 2 + [PAYLOADS[1]] * 2, "answerable lost": [0.0, 1.0] * 2,
         "unanswerable abstained": [0.0, 1.0] * 2})), True),
    "history": (history_figure, True),
    "ceiling widget": (lambda p, tmp: h.ceiling_widget(p.qrels, named_polder(p).runs).figure.fig, False),
    "depth widget": (lambda p, tmp: h.depth_widget(named_polder(p).runs, p.qrels).figure(PAYLOADS[0]).fig, False),
}


@pytest.mark.parametrize("name", [*PLOTS, *USER_TEXT_FIGURES])
def test_a_run_name_or_a_label_is_drawn_as_typed(name, polder, tmp_path):
    if name in PLOTS:
        fig, named = PLOTS[name](named_polder(polder)), name not in ("plot_discount", "plot_two_stage")
    else:
        draw, named = USER_TEXT_FIGURES[name]
        fig = draw(polder, tmp_path)
    texts = drawn_as_typed(fig)
    assert not named or any(PAYLOADS[0] in t for t in texts), (name, sorted(texts)[:8])
