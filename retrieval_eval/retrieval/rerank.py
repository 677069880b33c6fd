"""Two-stage retrieval: a second stage reorders the first stage's top N; the LLM reads the top k of that. The first
stage's recall@N bounds recall@k after reranking, its success@N bounds MRR@k and nDCG@k; :func:`oracle_rerank`, which
reads the labels, is the best a second stage can do. :class:`SentenceReranker` runs offline with the bundled embedding
model; a sentence-transformers ``CrossEncoder`` installed locally works too (:func:`load_reranker`)."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.checks import Qrels, Run, check_k, check_ks, check_runs, finite_number
from ..core.evaluation import evaluate
from ..core.metrics import relevant_ids
from ..inputs.models import (
    installed_model_problem,
    load_model,
    model_fingerprint,
    model_path,
    needs_model_libraries,
)
from .stages import SCORE_DECIMALS, Context, Stage

DEPTHS = (3, 5, 10, 20)  # the candidate pools N of the two-stage lesson

# A sentence ends at . ! or ? before a space, or at a line break (a table row, a list item, a heading).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The sentences (and table rows, list items, headings) of a chunk, in order, blanks left out."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


class SentenceReranker:
    """Scores a chunk by its best-matching sentence: the highest cosine of the question with one sentence, with the
    bundled embedding model. A stand-in for a cross-encoder (which reads question and chunk together): one sentence
    that answers is not diluted by the rest of the chunk, but a sentence sharing the question's words without
    answering wins, and an answer spanning sentences (a table row and its header) loses."""

    name, window = "sentence", None  # window: word pieces read; None, the model's own

    def __init__(self, model_name: str | None = None):
        self.model_name, self._model = model_name, None
        self._vectors: dict[str, np.ndarray] = {}

    @property
    def model(self):
        """The embedding model, loaded when first used (a committed run needs none)."""
        if self._model is None:
            self._model = load_model(self.model_name)
        return self._model

    def key(self) -> dict:
        named = {"model_name": self.model_name} if self.model_name else {}  # the committed run's key has none
        return {"reranker": self.name, **named, "model": model_fingerprint(self.model_name)}

    def forget(self) -> None:
        """Drop the sentence vectors kept so far (a fresh start, for timing)."""
        self._vectors.clear()

    def _encode(self, texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if new:
            self.model.max_seq_length = self.window or self.model.native_window  # the model is shared: set it each time
            for t, v in zip(new, self.model.encode(new, normalize_embeddings=True, show_progress_bar=False, batch_size=64)):
                self._vectors[t] = v
        return np.stack([self._vectors[t] for t in texts])

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        """One score per chunk text: the best cosine of the question with one of its sentences."""
        q = self._encode([question])[0]
        return [float((self._encode(sentences(t) or [t]) @ q).max()) for t in texts]


class CrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` installed locally (a folder, or a name in the local cache)."""

    def __init__(self, model_name: str):
        needs_model_libraries()
        from sentence_transformers import CrossEncoder
        self.model_name = model_name
        self.model = CrossEncoder(model_path(model_name), device="cpu")

    def key(self) -> dict:
        return {"reranker": "cross-encoder", "model": model_fingerprint(self.model_name)}

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        return [float(s) for s in self.model.predict([(question, t) for t in texts], show_progress_bar=False)]


def _check_reranker(reranker):
    missing = [method for method in ("score", "key") if not callable(getattr(reranker, method, None))]
    if missing:
        raise ValueError(f"a reranker needs the methods score(question, texts) and key() (its cache key), "
                         f"{reranker!r:.60} has no {missing}")
    return reranker


def load_reranker(spec):
    """``"sentence"`` (the built-in re-scorer), the name or folder of a CrossEncoder installed locally,
    or an object with ``score(question, texts) -> scores`` and ``key()``. Nothing is downloaded."""
    if not isinstance(spec, str):
        return _check_reranker(spec)
    if spec == SentenceReranker.name:
        return SentenceReranker()
    problem = installed_model_problem(spec)
    if problem:
        raise ValueError(f"reranker {spec!r}: {problem}; or use 'sentence', the built-in re-scorer")
    return CrossEncoderReranker(spec)


def rerank(run: Run, reranker, texts: Mapping[str, str], questions: Mapping[str, str], depth: int = 10) -> Run:
    """Each question's top ``depth`` chunks reordered by the reranker's score, highest first (equal
    scores, to :data:`~.stages.SCORE_DECIMALS` places, keep the first stage's order); what lies below ``depth`` is never read."""
    depth = check_k(depth, "depth")
    out = {}
    for q, ranked in run.items():
        top = ranked[:depth]
        scores = list(reranker.score(questions[q], [texts[c] for c in top])) if top else []
        if len(scores) != len(top) or not all(finite_number(s) for s in scores):
            raise ValueError(f"question {q!r}: the reranker must give one finite score per chunk, {len(top)} in all; "
                             f"it gave {scores!r:.80}")
        out[q] = [c for _, _, c in sorted(zip((-round(s, SCORE_DECIMALS) for s in scores), range(len(top)), top))]
    return out


def oracle_rerank(run: Run, qrels: Qrels, depth: int = 10) -> Run:
    """The perfect second stage: each question's top ``depth`` sorted by gain, highest first (it reads the labels)."""
    depth = check_k(depth, "depth")
    return {q: sorted(ranked[:depth], key=lambda c: -qrels[q].get(c, 0)) for q, ranked in run.items()}


@dataclass(frozen=True)
class Rerank(Stage):
    """A second stage in the registry: the top ``depth`` of the run ``first_stage``, reranked."""

    first_stage: str = "hybrid"
    reranker: object = None
    depth: int = 10

    def __post_init__(self):
        _check_reranker(self.reranker)

    @property
    def reads(self) -> tuple:
        return (self.first_stage,)

    def key(self) -> dict:
        return {"stage": "Rerank", "first_stage": self.first_stage, "depth": self.depth, "reranker": self.reranker.key()}

    def run(self, context: Context) -> Run:
        texts = {c["id"]: c["text"] for c in context.chunks}
        return rerank(context.runs[self.first_stage], self.reranker, texts, context.questions, self.depth)


def two_stage_table(runs: Mapping[str, Run], qrels: Qrels, reranked: Mapping[tuple, Run] | None = None,
                    depths: Sequence[int] = DEPTHS, k: int = 3) -> pd.DataFrame:
    """Per first stage and pool N: the ceilings recall@N and success@N, recall@k and MRR@k before reranking, with
    the oracle and with a real reranker (``reranked[(first stage, N)]``, when given); and how many questions a
    reranker could bring into the top k (relevant in the top N, not the top k) or cannot (none in the top N)."""
    k, depths, (runs, qrels) = check_k(k), check_ks(depths, "depths"), check_runs(runs, qrels)
    rows = []
    for name, run in runs.items():
        for n in depths:
            found = {q: [c in relevant_ids(qrels[q]) for c in run[q][:n]] for q in qrels}
            row = {"first stage": name, "N": n, "recall@N (ceiling)": evaluate({name: run}, qrels, [n], ["recall"]).iat[0, 0],
                   "success@N": sum(map(any, found.values())) / len(found)}
            for label, r in (("first stage", run), ("oracle", oracle_rerank(run, qrels, n)),
                             ("reranker", (reranked or {}).get((name, n)))):
                if r is not None:
                    table = evaluate({label: r}, qrels, [k], ["recall", "MRR"]).iloc[0]
                    row[f"recall@{k}, {label}"], row[f"MRR@{k}, {label}"] = table[("recall", k)], table[("MRR", k)]
            row["could fix"] = sum(any(f) and not any(f[:k]) for f in found.values())
            row["cannot fix"] = sum(not any(f) for f in found.values())
            rows.append(row)
    return pd.DataFrame(rows).astype({"could fix": int, "cannot fix": int}).set_index(["first stage", "N"])


def seconds_per_question(reranker, run: Run, texts: Mapping[str, str], questions: Mapping[str, str], depth: int = 10,
                         fresh: bool = True, repeat: int = 3) -> pd.Series:
    """Seconds per question to score its top ``depth``: the median of ``repeat`` timings after one warm-up. With
    ``fresh`` a reranker that keeps what it read (sentence vectors) forgets it before each call, as a
    cross-encoder reads every pair anew."""
    def score(q: str) -> None:
        reranker.score(questions[q], [texts[c] for c in run[q][:depth]])

    forget = getattr(reranker, "forget", lambda: None) if fresh else lambda: None
    return seconds_per_call(score, run, repeat, forget).rename(f"seconds to rerank {depth}")


def seconds_per_call(function, arguments, repeat: int = 3, before=lambda: None) -> pd.Series:
    """The median wall-clock time of ``function(argument)`` over ``repeat`` calls, per argument, after one warm-up
    call with the first (it pays for loading); ``before()`` runs untimed before each call."""
    def once(argument) -> float:
        before()
        start = time.perf_counter()
        function(argument)
        return time.perf_counter() - start

    arguments = list(arguments)
    once(arguments[0])
    return pd.Series({a: float(np.median([once(a) for _ in range(check_k(repeat, "repeat"))])) for a in arguments},
                     name="seconds")
