"""A model as judge, offline: every judge is a function ``judge(question, chunk_text) -> grade`` (0 not relevant,
1 partly, 2 answers fully). Built in, needing no network: the embedding model's cosine of question and chunk, and the
sentence re-scorer's best-sentence cosine, each graded by thresholds on its score; and a judge around any chat model
with an UMBRELA-style 0–3 prompt (TREC RAG 2024). A judge's labels are measured against people's (or the evidence
rule's) with :func:`.agreement.agreement` before they are used; :meth:`ScoreJudge.calibrate` picks its threshold on
labelled questions, to be measured on others."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..core.checks import check_list, check_qrels, finite_number
from ..core.paths import DATA_DIR
from ..inputs.chunks import CHUNK_SIZE
from ..retrieval.rerank import SentenceReranker
from .agreement import DEPTH

UMBRELA = """Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the following meanings:
0 = represent that the passage has nothing to do with the query,
1 = represents that the passage seems related to the query but does not answer it,
2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or hidden amongst extraneous information and
3 = represents that the passage is dedicated to the query and contains the exact answer.
Important Instruction: Assign category 1 if the passage is somewhat related to the topic but not completely, category 2 if passage presents something very important related to the entire topic but also has some extra information and category 3 if the passage only and entirely refers to the topic. If none of the above satisfies give it category 0.
Query: {question}
Passage: {passage}
Split this problem into steps: Consider the underlying intent of the search. Measure how well the content matches a likely intent of the query (M). Measure how trustworthy the passage is (T). Consider the aspects above and the relative importance of each, and decide on a final score (O). Final score must be an integer value only.
Do not provide any code in result. Provide each score in the format of: ##final score: score without providing any reasoning."""
UMBRELA_TO_GRADE = {0: 0, 1: 0, 2: 1, 3: 2}  # "related but does not answer" is not relevant here; 3 answers fully
SCORES_PATH = DATA_DIR / "judge_scores.csv"  # the built-in judges' scores on the pools of the teaching set and its
# unanswerable questions (write_scores with abstention.unanswerable_setup; tests check them)


def pair_key(question: str, text: str) -> str:
    """The key of a (question, chunk text) pair in :data:`SCORES_PATH`: changed text, new key."""
    return hashlib.sha256(f"{question}\n{text}".encode()).hexdigest()[:16]


class _Committed:
    """A scorer reading committed scores where the pair is in :data:`SCORES_PATH`, the model elsewhere."""

    def __init__(self, scorer, name: str):
        table = pd.read_csv(SCORES_PATH, dtype={"pair": str}) if SCORES_PATH.exists() else pd.DataFrame(columns=["judge", "pair", "score"])
        self.scorer, self.known = scorer, dict(table.loc[table["judge"] == name, ["pair", "score"]].itertuples(index=False))

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        todo = [t for t in texts if pair_key(question, t) not in self.known]
        computed = dict(zip(todo, self.scorer.score(question, todo))) if todo else {}
        return [computed[t] if t in computed else self.known[pair_key(question, t)] for t in texts]


class _ChunkCosine(SentenceReranker):
    """The cosine of the question with the whole chunk, read up to vector search's window (``CHUNK_SIZE``, past the 128
    word pieces the model was trained on): the score vector search ranks by."""

    name, window = "cosine", CHUNK_SIZE

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        return [float(s) for s in self._encode(list(texts)) @ self._encode([question])[0]]


@dataclass(frozen=True)
class ScoreJudge:
    """A judge from a scorer (``score(question, texts) -> scores``): the grade is how many of the ``thresholds``
    (ascending) the score reaches."""

    name: str
    scorer: object
    thresholds: tuple = (0.5,)

    def __call__(self, question: str, chunk_text: str) -> int:
        return self.grades(question, [chunk_text])[0]

    def grades(self, question: str, texts: Sequence[str]) -> list[int]:
        return [int(np.searchsorted(self.thresholds, s, side="right")) for s in self.scorer.score(question, list(texts))]

    def calibrate(self, labels: Mapping[str, Mapping[str, float]], setup, depth: int = DEPTH) -> ScoreJudge:
        """The same judge with the one threshold that gives it the highest kappa (relevant or not) against ``labels``
        on their questions' pool (:func:`pool`); the lowest such threshold when several tie."""
        from sklearn.metrics import cohen_kappa_score
        labels, questions, texts = check_qrels(labels, scorable=False), _questions(setup), _texts(setup)
        pairs = pool(setup, depth, list(labels))
        scores = np.array([s for q, ids in pairs.items() for s in self.scorer.score(questions[q], [texts[c] for c in ids])])
        relevant = np.array([labels[q].get(c, 0) > 0 for q, ids in pairs.items() for c in ids])
        kappas = {t: cohen_kappa_score(relevant, scores >= t, labels=[False, True]) for t in np.unique(scores)}
        return replace(self, thresholds=(float(max(kappas, key=lambda t: (kappas[t], -t))),))


@dataclass(frozen=True)
class ChatJudge:
    """A judge around any chat model: ``chat(prompt) -> reply`` gets the UMBRELA prompt; the reply's final score
    0–3 becomes a grade by :data:`UMBRELA_TO_GRADE`. A reply without a score is an error quoting it."""

    chat: Callable[[str], str]
    name: str = "chat model"

    def __call__(self, question: str, chunk_text: str) -> int:
        reply = self.chat(UMBRELA.format(question=question, passage=chunk_text))
        found = re.findall(r"final score:\s*([0-3])", str(reply), flags=re.IGNORECASE) or re.findall(r"\b[0-3]\b", str(reply))
        if not found:
            raise ValueError(f"the {self.name}'s reply holds no score 0–3: {reply!r:.120}")
        return UMBRELA_TO_GRADE[int(found[-1])]

    def grades(self, question: str, texts: Sequence[str]) -> list[int]:
        return [self(question, t) for t in texts]


def model_judge(kind: str | Callable[[str], str] = "cosine", thresholds: Sequence[float] = (0.5,),
                fresh: bool = False) -> ScoreJudge | ChatJudge:
    """A judge ``judge(question, chunk_text) -> grade``: ``"cosine"`` (the embedding model, question against the whole
    chunk), ``"sentence"`` (its best-sentence cosine, the built-in re-scorer), each graded by ``thresholds``; or a
    function ``chat(prompt) -> reply`` calling any chat model, asked the UMBRELA prompt. ``judge.label(setup)`` labels
    the setup's pool. The teaching set's scores are committed (:data:`SCORES_PATH`); ``fresh`` computes every one."""
    if callable(kind):
        return ChatJudge(kind)
    scorers = {"cosine": _ChunkCosine, "sentence": SentenceReranker}
    if kind not in scorers:
        raise ValueError(f"kind must be one of {list(scorers)} or a function chat(prompt) -> reply, got {kind!r}")
    values = check_list(thresholds, "thresholds", "scores in ascending order")
    if not values or not all(finite_number(t) for t in values) or values != sorted(values):
        raise ValueError(f"thresholds must be one or more scores in ascending order, got {thresholds!r}")
    scorer = scorers[kind]() if fresh else _Committed(scorers[kind](), kind)
    return ScoreJudge(kind, scorer, tuple(float(t) for t in values))


def pool(setup, depth: int = DEPTH, questions: Sequence[str] | None = None) -> dict:
    """``{question: chunk ids}``: every run's top ``depth`` with every labelled chunk, sorted by id (the run hidden)."""
    asked = setup.qrels if questions is None else check_list(questions, "questions", "question ids")
    unknown = [q for q in asked if q not in setup.qrels]
    if unknown:
        raise ValueError(f"questions names question(s) {unknown[:5]} the setup does not hold")
    return {q: sorted({*setup.qrels[q], *(c for run in setup.runs.values() for c in run[q][:depth])}) for q in asked}


def label(judge, setup, depth: int = DEPTH, questions: Sequence[str] | None = None) -> dict:
    """The judge's qrels ``{question: {chunk: grade}}`` over the setup's :func:`pool` (grade-0 pairs kept)."""
    texts, asked = _texts(setup), _questions(setup)
    grades = getattr(judge, "grades", None) or (lambda question, chunks: [judge(question, t) for t in chunks])
    return {q: dict(zip(ids, grades(asked[q], [texts[c] for c in ids]))) for q, ids in pool(setup, depth, questions).items()}


ScoreJudge.label = ChatJudge.label = label


def write_scores(*setups, depth: int = DEPTH) -> pd.DataFrame:
    """Compute the built-in judges' scores on the setups' pools and write them to :data:`SCORES_PATH`."""
    scorers = {kind: model_judge(kind, fresh=True).scorer for kind in ("cosine", "sentence")}
    rows = [(kind, pair_key(asked[q], texts[c]), score) for setup in setups
            for texts, asked in [(_texts(setup), _questions(setup))] for kind, scorer in scorers.items()
            for q, ids in pool(setup, depth).items() for c, score in zip(ids, scorer.score(asked[q], [texts[c] for c in ids]))]
    table = pd.DataFrame(rows, columns=["judge", "pair", "score"]).round({"score": 6})
    table.to_csv(SCORES_PATH, index=False)
    return table


def _texts(setup) -> dict:
    return {c["id"]: c["text"] for c in setup.chunks}


def _questions(setup) -> dict:
    return dict(zip(setup.golden["id"], setup.golden["question"]))
