"""The interview drill (notebook 15): the questions of ``data/interview_drill.json`` (compute by hand, explain in a
sentence, diagnose a scenario), each with a model answer of at most 40 words. A toy's value is computed here by the
registry's metric, never typed; a figure an answer cites (``{hybrid recall@3:.2f}``) comes from the run."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from ..analysis.comparisons import paired_comparisons
from ..analysis.conventions import precision_of_returned
from ..core.checks import check_k
from ..core.evaluation import KS, evaluate, precision_ceiling
from ..core.metrics import iprec_at_recall, relevant_ids
from ..core.paths import DATA_DIR
from ..core.registry import METRICS
from .checker import Answer

DRILL_PATH = DATA_DIR / "interview_drill.json"
K = 3  # the k the answers cite: the k passed to the LLM in the series


def toy_value(question: dict) -> float:
    """A compute question's value: its metric on each toy ranking ("." not relevant, a digit its gain; ``missed``: the
    gains of relevant chunks never retrieved), the mean when there are several rankings."""
    values = []
    for pattern in question.get("rankings") or [question["ranking"]]:
        ranked = [f"c{rank}" for rank in range(1, len(pattern) + 1)]
        gains = {d: int(g) for d, g in zip(ranked, pattern) if g != "."}
        gains |= {f"missed{i}": g for i, g in enumerate(question.get("missed", []))}
        metric, k = question["metric"], check_k(question["k"])
        if metric == "set precision":
            values.append(precision_of_returned(ranked, gains, k))
        elif metric.startswith("iprec@"):
            values.append(iprec_at_recall(ranked, gains)[float(metric.removeprefix("iprec@"))])
        else:
            values.append(METRICS[metric].score(ranked, gains, k))
    return sum(values) / len(values)


def run_figures(setup) -> dict:
    """What answers cite: ``"<run> <metric@k>"`` for every run and shown metric at the tables' cut-offs, the golden
    set's size, :data:`K`, the precision ceiling at K, and hybrid's paired record against BM25 on recall@K."""
    table = evaluate(setup.runs, setup.qrels, ks=KS)
    figures = {f"{run} {METRICS[m].at(j)}": table.loc[run, (m, j)] for run in table.index for m, j in table.columns}
    pair = paired_comparisons({"BM25": setup.runs["BM25"], "hybrid": setup.runs["hybrid"]}, setup.qrels, k=K).loc[
        ("BM25 − hybrid", "recall")]
    return figures | {"questions": len(setup.qrels), "k": K, f"ceiling@{K}": precision_ceiling(setup.qrels, K),
                      "one relevant": sum(len(relevant_ids(g)) == 1 for g in setup.qrels.values()),
                      "hybrid wins": pair["losses"], "hybrid losses": pair["wins"], "hybrid verdict": pair["verdict"]}


@dataclass(frozen=True)
class Interview:
    """Questions drawn from the drill, their model answers (figures filled in), and ``solutions`` for
    :func:`~retrieval_eval.course.checker.check_answers`: the compute questions' values, by question id."""

    questions: list
    answers: dict
    solutions: dict

    def _repr_markdown_(self) -> str:
        return "\n\n".join(f"**{q['id']}** ({q['kind']}) {q['question']}\n\n<details><summary>model answer</summary>\n\n"
                           f"{self.answers[q['id']]}\n\n</details>" for q in self.questions)


def mock_interview(setup, seed: int | None = 0, n: int | None = 10) -> Interview:
    """``n`` questions of the drill drawn at random with ``seed`` (``n=None``: all, in file order); a toy's value and
    the run's figures computed from ``setup``. Check the compute ones with ``h.check_answers(answers, drill.solutions)``."""
    questions = json.loads(DRILL_PATH.read_text(encoding="utf-8"))
    if n is not None:
        questions = random.Random(seed).sample(questions, min(check_k(n), len(questions)))
    figures = run_figures(setup)
    values = {q["id"]: toy_value(q) for q in questions if q["kind"] == "compute"}
    answers = {q["id"]: q["answer"].format_map({**figures, "value": values.get(q["id"])}) for q in questions}
    return Interview(questions, answers, {i: Answer(v) for i, v in values.items()})
