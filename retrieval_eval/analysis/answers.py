"""Does the retrieval number predict the answer? Per-question rows of a RAG pipeline (retrieval precision, recall and
reciprocal rank at the k it passed to the LLM, and whether its answer was judged correct), as the Anthropic
cookbook publishes them in ``evaluation_results_detailed*.csv``, read against each other."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.checks import check_k, check_ks
from ..core.metrics import recall_at_k, relevant_ids
from ..core.paths import DATA_DIR
from ..inputs.formats import FormatError, read_table
from ..inputs.models import token_counter
from .statistics import SEED, bootstrap_ci, two_slices, wilson_ci

FIELDS = {"question": ("question",), "precision": ("retrieval_precision",), "recall": ("retrieval_recall",),
          "reciprocal rank": ("retrieval_mrr",), "correct": ("e2e_correct",)}
COOKBOOK_BASIC = DATA_DIR / "cookbook" / "published" / "evaluation_results_detailed.csv"  # Basic RAG, k = 3
SCORES = ("hit", "recall", "reciprocal rank", "precision")  # the per-question metrics the rows give (no nDCG: no ranks)


def _rows(path: str | Path) -> pd.DataFrame:
    """The rows with ``hit`` (any evidence in the top k) added; a cell that is no number or no True/False names its line."""
    fields, rows = read_table(path, FIELDS, [[f] for f in FIELDS], what="question")
    table = []
    for line, row in rows:
        correct = row["correct"].strip().lower()
        if correct not in ("true", "false"):
            raise FormatError(path, line, f"e2e_correct must be True or False, got {row['correct']!r}")
        try:
            values = {f: float(row[f]) for f in ("precision", "recall", "reciprocal rank")}
        except ValueError:
            raise FormatError(path, line, "retrieval_precision, retrieval_recall and retrieval_mrr must be numbers") from None
        if not all(0 <= v <= 1 for v in values.values()):
            raise FormatError(path, line, f"retrieval scores must lie in [0, 1], got {values}")
        table.append({"question": row["question"], **values, "hit": float(values["recall"] > 0), "correct": correct == "true"})
    return pd.DataFrame(table)


def answer_by_retrieval(path: str | Path = COOKBOOK_BASIC, view: str = "shares") -> pd.DataFrame:
    """``"shares"``: the share of correct answers with and without evidence in the top k, and with all against part
    of it: counts, Wilson intervals, and Fisher's exact test of each pair of rows (``p`` on both rows of the pair).
    ``"separation"``: :func:`separation`. ``"surprises"``: the rows to read, the questions answered right with no
    evidence in the top k and wrong with all of it."""
    views = ("shares", "separation", "surprises")
    if view not in views:
        raise ValueError(f"view must be one of {views}, got {view!r}")
    if view == "separation":
        return separation(path)
    rows = _rows(path)
    full = rows["recall"] == 1
    if view == "surprises":
        odd = ((rows["hit"] == 0) & rows["correct"]) | (full & ~rows["correct"])
        return rows[odd].assign(case=np.where(rows.loc[odd, "correct"], "right without evidence", "wrong with all of it"))
    groups = {"evidence in the top k": rows["hit"] == 1, "no evidence in the top k": rows["hit"] == 0,
              "all the evidence": full, "part of the evidence": (rows["hit"] == 1) & ~full}
    table = {}
    for name, mask in groups.items():
        n, right = int(mask.sum()), int(rows.loc[mask, "correct"].sum())
        share, low, high = wilson_ci(right, n) if n else (np.nan,) * 3
        table[name] = {"questions": n, "correct": right, "share": share, "low": low, "high": high}
    table = pd.DataFrame.from_dict(table, orient="index")
    for a, b in (table.index[:2], table.index[2:]):
        counts = table.loc[[a, b], ["correct", "questions"]].to_numpy().ravel().tolist()
        table.loc[[a, b], "p"] = two_slices(*counts) if min(counts[1], counts[3]) else np.nan
    return table


def separation(path: str | Path, n_resamples: int = 2000, seed: int = SEED) -> pd.DataFrame:
    """How well each per-question metric tells a correct answer from a wrong one: the area under the ROC curve
    (scikit-learn; 0.5 is chance, ties count half) with a percentile-bootstrap interval over questions (fixed seed), and
    the interval of its AUC minus the best metric's on the same resamples (``gap low``, ``gap high``)."""
    from sklearn.metrics import roc_auc_score
    rows = _rows(path)
    correct = rows["correct"].to_numpy()
    if correct.all() or not correct.any():
        raise ValueError(f"{path}: an ROC curve needs correct and wrong answers; all {len(rows)} are {bool(correct[0])}")
    weights = np.random.default_rng(seed).multinomial(len(rows), np.full(len(rows), 1 / len(rows)), check_k(n_resamples, "n_resamples"))
    w_right, w_wrong = weights[:, correct], weights[:, ~correct]
    keep = (w_right.sum(1) > 0) & (w_wrong.sum(1) > 0)  # a resample with one kind of answer has no curve
    table, boot = {}, {}
    for name in SCORES:
        s = rows[name].to_numpy()
        beats = np.sign(s[correct][:, None] - s[~correct][None, :]) / 2 + 0.5  # 1 above, 0.5 tied, 0 below
        aucs = np.einsum("bi,ij,bj->b", w_right[keep], beats, w_wrong[keep]) / (w_right[keep].sum(1) * w_wrong[keep].sum(1))
        boot[name], (low, high) = aucs, np.percentile(aucs, [2.5, 97.5])
        table[name] = {"AUC": float(roc_auc_score(correct, s)), "low": float(low), "high": float(high)}
    table = pd.DataFrame.from_dict(table, orient="index").sort_values("AUC", ascending=False)
    gaps = np.array([np.percentile(boot[n] - boot[table.index[0]], [2.5, 97.5]) for n in table.index])  # paired
    return table.assign(**{"gap low": gaps[:, 0], "gap high": gaps[:, 1]})


def budget_table(settings: Mapping[str, object], ks: Sequence[int] = range(1, 11)) -> pd.DataFrame:
    """Recall against the tokens the LLM reads. Per setting (anything with ``chunks``, ``qrels`` and ``runs``: a set-up,
    a chunking of deep dive 09), run and k, over the run's questions: the mean word pieces of the top k chunks (the
    chunks' ``n_tokens``, else counted with the embedding model's tokenizer), their median, and mean recall@k with its 95% bootstrap
    interval. A question with no relevant chunk in a setting (a boundary cut its evidence) counts 0, as in deep dive 09."""
    if not isinstance(settings, Mapping) or not settings:
        raise ValueError(f"settings must be a non-empty mapping {{name: set-up}}, got {settings!r:.60}")
    ks, count, rows = check_ks(ks), None, []
    for setting, s in settings.items():
        if not all(hasattr(s, part) for part in ("chunks", "qrels", "runs")):
            raise ValueError(f"setting {setting!r} needs chunks, qrels and runs (a set-up, a chunking), got {type(s).__name__}")
        if any("n_tokens" not in c for c in s.chunks):
            count = count or token_counter()
        size = {c["id"]: c["n_tokens"] if "n_tokens" in c else count(c["text"]) for c in s.chunks}
        for name, run in s.runs.items():
            for k in ks:
                recall = [recall_at_k(r, relevant_ids(s.qrels[q]), k) if q in s.qrels else 0.0 for q, r in run.items()]
                mean, low, high = bootstrap_ci(recall)
                rows.append({"setting": setting, "run": name, "k": k, "recall": mean, "low": low, "high": high,
                             **{f"{'median ' * m}tokens": float(f([sum(size[c] for c in r[:k]) for r in run.values()]))
                                for m, f in ((0, np.mean), (1, np.median))}})
    return pd.DataFrame(rows)
