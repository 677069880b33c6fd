"""Questions the corpus cannot answer (``answerable=no`` in a golden set), scored by abstention: recall has no relevant
chunk to count. A RAG system abstains ("I don't know") when the score of its top chunk is below a threshold; per run
and threshold, the share of unanswerable questions it abstains on against the share of answerable questions whose evidence, in its top k, it
loses by abstaining. The score is a judge's (:func:`.judges.model_judge`) of the question and the
run's top chunk: one scale for every run (BM25's scores have no fixed range, and RRF's follow the ranks alone)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..core.checks import check_k
from ..core.metrics import relevant_ids
from ..core.paths import CACHE_DIR, DATA_DIR
from ..inputs.golden import read_golden_csv
from ..retrieval.setup import default_retrievers
from ..retrieval.stages import run_registry
from .judges import model_judge
from .statistics import wilson_ci

UNANSWERABLE_PATH = DATA_DIR / "unanswerable.csv"  # Polder's questions its corpus cannot answer, apart from the 47
COLUMNS = ["run", "threshold", "unanswerable abstained", "answerable lost", "unanswerable", "answerable"]


def unanswerable_runs(setup, path: str | Path | None = None, cache_dir: str | Path = CACHE_DIR) -> tuple[dict, dict]:
    """``({id: question}, {run: {id: ranking}})`` for the questions marked ``answerable=no``: the setup's own, or those
    of the golden file ``path`` ranked by the setup's built-in retrievers over its chunks (committed for Polder's)."""
    if path is None:
        golden = setup.golden[~setup.golden["answerable"]] if "answerable" in setup.golden else setup.golden[:0]
        asked = dict(zip(golden["id"], golden["question"]))
        return asked, {name: {q: run[q] for q in asked} for name, run in setup.runs.items()}
    golden = read_golden_csv(path)
    marked = golden["answerable"] if "answerable" in golden else pd.Series(True, index=golden.index)
    if marked.any():
        raise ValueError(f"{Path(path).name}: question(s) {list(golden['id'][marked])[:5]} are not marked answerable=no")
    asked = dict(zip(golden["id"], golden["question"]))
    registry = {name: stage for name, stage in default_retrievers().items() if name in setup.runs}
    return asked, run_registry(registry, setup.chunks, asked, cache_dir)


def unanswerable_setup(setup, path: str | Path | None = None, cache_dir: str | Path = CACHE_DIR):
    """The setup of the unanswerable questions alone (no labels, their runs): ``judges.write_scores(polder,
    unanswerable_setup(polder, UNANSWERABLE_PATH))`` writes the committed judge scores."""
    asked, runs = unanswerable_runs(setup, path, cache_dir)
    return setup._replace(golden=pd.DataFrame({"id": list(asked), "question": list(asked.values())}),
                          qrels={q: {} for q in asked}, runs=runs)


def top_scores(setup, asked: dict, runs: dict, judge: str = "cosine") -> pd.DataFrame:
    """The judge's score of each run's top chunk, per question (rows) and run (columns); -inf for an empty ranking."""
    scorer, texts = model_judge(judge).scorer, {c["id"]: c["text"] for c in setup.chunks}
    rows = {}
    for q, question in asked.items():
        tops = [run[q][0] for run in runs.values() if run[q]]
        score = dict(zip(tops, scorer.score(question, [texts[c] for c in tops]))) if tops else {}
        rows[q] = {name: score[run[q][0]] if run[q] else -np.inf for name, run in runs.items()}
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(runs))


class Abstention(NamedTuple):
    """The abstention curve (:func:`abstention`), its table and its figure."""

    curve: pd.DataFrame  #: run, threshold, the two shares, and how many questions of each kind

    def table(self, lost: float = 0.1) -> pd.DataFrame:
        return abstention_table(self.curve, lost)

    def plot(self):
        return plot_abstention(self.curve)


def abstention(setup, unanswerable: str | Path | None = None, judge: str = "cosine", k: int = 3,
               cache_dir: str | Path = CACHE_DIR) -> Abstention:
    """The abstention curve: per run and threshold (every top score seen, and +inf), the share of unanswerable
    questions whose top chunk scores below it (abstained, rightly) and the share of the answerable ones abstained on
    with a relevant chunk in the run's top ``k`` (evidence lost: without one there was none to lose). The
    unanswerable questions are the setup's or ``unanswerable``'s (:func:`unanswerable_runs`)."""
    asked, runs, k = *unanswerable_runs(setup, unanswerable, cache_dir), check_k(k)
    if not asked:
        raise ValueError("no question is marked answerable=no: there is nothing to abstain on")
    answerable = dict(zip(setup.golden["id"], setup.golden["question"]))
    none = top_scores(setup, asked, runs, judge)
    some = top_scores(setup, {q: answerable[q] for q in setup.qrels}, {n: setup.runs[n] for n in runs}, judge)
    thresholds = np.unique(np.r_[none.to_numpy().ravel(), some.to_numpy().ravel(), np.inf])
    found = pd.DataFrame({n: {q: bool(set(setup.runs[n][q][:k]) & relevant_ids(setup.qrels[q])) for q in some.index}
                          for n in runs})
    rows = [(name, t, float((none[name] < t).mean()), float(((some[name] < t) & found[name]).mean()), len(none), len(some))
            for name in runs for t in thresholds[thresholds > -np.inf]]
    return Abstention(pd.DataFrame(rows, columns=COLUMNS))


def abstention_table(curve: pd.DataFrame, lost: float = 0.1) -> pd.DataFrame:
    """Per run, the highest threshold that loses at most ``lost`` of the answerable questions, and the unanswerable
    questions it abstains on there, with a 95% Wilson interval (a handful of questions leaves it wide)."""
    rows = {}
    for name, part in curve.groupby("run", sort=False):
        best = part[part["answerable lost"] <= lost].iloc[-1]
        n = int(best["unanswerable"])
        share, low, high = wilson_ci(round(best["unanswerable abstained"] * n), n)
        rows[name] = {"threshold": best["threshold"], "answerable lost": best["answerable lost"],
                      "unanswerable abstained": share, "95% low": low, "95% high": high}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(f"losing at most {lost:.0%}")


def plot_abstention(curve: pd.DataFrame):
    """The curve: unanswerable questions abstained on (up) against answerable questions lost (right), per run."""
    import matplotlib.pyplot as plt  # here, not on import: the gate never draws

    with plt.rc_context({"text.parse_math": False}):  # run names drawn as typed
        fig, ax = plt.subplots(figsize=(5.5, 4))
        for name, part in curve.groupby("run", sort=False):
            line, = ax.step(part["answerable lost"], part["unanswerable abstained"], where="post", label=name)
            # abstaining at random: the evidence is lost on the run's share of questions found in the top k
            ax.plot([0, part["answerable lost"].max()], [0, 1], color=line.get_color(), linestyle=":", linewidth=1)
        ax.plot([], [], color="grey", linestyle=":", label="abstaining at random")
        ax.set(xlabel="answerable questions losing evidence found in the top k", ylabel="unanswerable questions abstained on",
               xlim=(-0.02, 1.02), ylim=(-0.02, 1.05), title="Abstaining below a threshold on the top chunk's score")
        ax.legend(loc="lower right")
        fig.tight_layout()
    return fig
