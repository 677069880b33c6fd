"""No hand-typed claim about which retriever wins: every such sentence in the notebooks and the README is computed.

Notebook 05 onwards compares BM25, vector and hybrid search on 47 questions, where most differences cannot be
told from chance; a sentence typed by hand ("hybrid is below vector") goes stale, or wrong, as soon as the data
or the code moves the numbers. The rule: a statement of which retriever wins, or whether a difference is real,
is produced by code from the numbers with their uncertainty (``h.tested_verdict``, ``h.comparison_sentences``,
``h.pair_sentence``) in a computed-prose cell. So this test reads the *hand-written* text — every Markdown cell
of every notebook and README.md — and fails on any sentence that makes such a claim, naming the file, the
cell and the sentence. Computed prose lives in code cells and their outputs, which it does not read.

How a claim is recognised, to keep false alarms few (each rule removes a kind of false alarm seen in the text):

- A *retriever* is one of ours by name: BM25, vector (search), hybrid (search), dense. Generic words
  ("a retriever", "retrievers A and B" of a toy, "fusion" in a paper title) are no claim about our results.
- A *claim* is either a relation between two retrievers — "X beats / outperforms / is better than / worse than
  / higher than / lower than / above / below / ahead of / behind Y" with a retriever name right after the
  relation word — or a verdict on one — "X wins / loses / is best / is worst / the winner / significantly" —
  with a retriever name in the same sentence.
- Not claims: questions to the reader (the sentence ends with "?"), text in code spans, both verdicts at once
  ("wins or loses": says nothing about which), and the few sentences in ``NOT_CLAIMS`` below, each with the
  reason it is no claim about our numbers. A sentence listed there that no longer exists fails the test too,
  so the list cannot go stale.

The computed prose has its own guard: ``h.verdict`` names a leader by the means alone, so a code cell may call it
only on what is not a comparison of our retrievers (``UNTESTED_VERDICTS``, each with its reason); a leader among
the retrievers comes from ``h.tested_verdict``.
"""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = r"(?:BM25|vector(?: search)?|hybrid(?: search)?|dense(?: retrieval)?)"
RELATION = re.compile(
    rf"\b(?:beats?|beating|outperforms?|outperformed|better than|worse than|higher than|lower than|more often than"
    rf"|less often than|above|below|ahead of|behind|superior to|inferior to)\s+(?:the\s+|that of\s+)?{NAME}\b",
    re.IGNORECASE,
)
VERDICT = re.compile(
    r"\b(?:wins?|won|winner|loses?|lost|best|worst|significant(?:ly)?|outperforms?|leads?|leader|leading|highest|lowest"
    r"|strongest|weakest|distinguishable|told apart|tell (?:them|it) apart)\b",
    re.IGNORECASE,
)
BOTH_WAYS = re.compile(r"\b(?:wins? or loses?|loses? or wins?|won or lost|better or worse|worse or better)\b", re.IGNORECASE)
RETRIEVER = re.compile(rf"\b{NAME}\b", re.IGNORECASE)

# Sentences the rules flag that claim nothing about our retrievers' numbers: (file, start of the sentence, why).
NOT_CLAIMS = [
    ("01_recall_at_k.ipynb", "One question where the retrievers disagree most",
     "introduces one question the code picks (vector's rank 1, BM25's lowest rank), not a mean"),
    ("05_three_retrievers.ipynb", "1/61 + 1/64 is less than 2/62",
     "the RRF formula on a toy: why fusion can lose a question one input had at rank 1, not a result"),
]


def sentences(text: str):
    """The sentences of Markdown text: code spans blanked, split at blank lines, list items and sentence ends."""
    text = re.sub(r"`[^`]*`", "CODE", text)
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*]|\d+\.)\s)|\n(?=#)|\s*\|\s*", text):  # a table cell is a block
        for sentence in re.split(r"(?<=[.!])\s+(?=[A-Z*\"(\[])", " ".join(block.split())):
            if sentence.strip():
                yield sentence.strip()


def is_claim(sentence: str) -> bool:
    if sentence.endswith("?") or not RETRIEVER.search(sentence):
        return False
    if RELATION.search(sentence):
        return True
    return bool(VERDICT.search(sentence)) and not BOTH_WAYS.search(sentence)


def hand_written_texts():
    """(file, cell, text) for every Markdown cell of every notebook and for the README, without the README's
    computed parts (between ``<!-- name: start -->`` and ``<!-- name: end -->``, each checked by its own test)."""
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            if cell["cell_type"] == "markdown":
                yield path.name, i, "".join(cell["source"])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    yield "README.md", None, re.sub(r"<!-- ([\w ']+): start -->.*?<!-- \1: end -->", "", readme, flags=re.S)


def test_the_detector_on_sentences_it_must_and_must_not_flag():
    for claim in ("Hybrid is below vector search on recall@3.", "BM25 loses on paraphrases.",
                  "Hybrid leads on MRR@3.", "**hybrid** has the highest recall@3 (0.798).",
                  "BM25 and vector are distinguishable on recall@3.",
                  "Vector search beats BM25.", "The difference between BM25 and vector is significant.",
                  "Hybrid search outperforms both.", "- **BM25** is the worst retriever here."):
        assert is_claim(claim), claim
    for no_claim in ("Which retriever wins on recall@3?", "Retriever A beats B on 3 questions.",
                     "why hybrid wins or loses on a question", "the table below lists BM25's idf",
                     "*Reciprocal Rank Fusion Outperforms Condorcet and Individual Rank Learning Methods*",
                     "A chunk below rank 3 in BM25's list gets nothing from it."):
        assert not is_claim(no_claim), no_claim


def test_no_hand_written_sentence_claims_which_retriever_wins():
    found, allowed = [], {(name, start) for name, start, _ in NOT_CLAIMS}
    seen = set()
    for name, cell, text in hand_written_texts():
        for sentence in sentences(text):
            if not is_claim(sentence):
                continue
            exempt = next(((n, s) for n, s in allowed if n == name and sentence.startswith(s)), None)
            if exempt:
                seen.add(exempt)
            else:
                found.append(f"{name}{'' if cell is None else f', cell {cell}'}: {sentence}")
    assert found == [], "hand-typed claims about the retrievers (compute them with h.paired_comparisons and h.plain_summary):\n" + "\n".join(found)
    assert allowed - seen == set(), f"NOT_CLAIMS lists sentences that are gone: {allowed - seen}"


def test_no_notebook_names_a_leader_by_the_means_alone():
    """A leader among the retrievers comes from paired tests (h.paired_comparisons and its plain words), never
    from the means: no code cell sorts the runs by a mean to name a winner (idxmax/max over runs of a table)."""
    found = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            source = "".join(cell["source"]) if cell["cell_type"] == "code" else ""
            if re.search(r"\b(?:winner|leader|best_retriever)\s*=", source):
                found.append(f"{path.name}, cell {i}")
    assert found == [], found
