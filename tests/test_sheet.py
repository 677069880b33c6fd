"""retrieval_eval/course/sheet.py: ``make sheet`` writes one A4 page whose numbers, read back from the PDF, are the evaluation's."""

import json
import re

import pytest
from pypdf import PdfReader

import helpers as h
from retrieval_eval.core.paths import ROOT, RUNS_DIR
from retrieval_eval.core.registry import shown_metrics
from retrieval_eval.course.sheet import ALSO, CODE, DEFINITIONS, MISTAKES, Page, recap_lines, write_sheet
from retrieval_eval.course.teaching import interview_lines
from retrieval_eval.inputs.trec import read_run
from retrieval_eval.retrieval.setup import RETRIEVERS

K = 3


@pytest.fixture(scope="module")
def sheet_setup(setup):
    """The teaching setup with the committed reranked run, as ``make sheet`` reads it (no embedding model)."""
    return setup._replace(runs=setup.runs | {"hybrid + rerank": read_run(RUNS_DIR / "hybrid_rerank.trec").rankings})


@pytest.fixture(scope="module")
def pdf(sheet_setup, tmp_path_factory):
    return PdfReader(write_sheet(sheet_setup, tmp_path_factory.mktemp("sheet") / "sheet.pdf"))


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_one_a4_page_no_type_under_8_pt(pdf):
    assert len(pdf.pages) == 1
    box = pdf.pages[0].mediabox
    assert (float(box.width), float(box.height)) == pytest.approx((595.3, 841.9), abs=1)  # A4 in points
    sizes = []
    pdf.pages[0].extract_text(visitor_text=lambda text, cm, tm, font, size: sizes.append(size * abs(tm[3] * cm[3])) if text.strip() else None)
    assert min(sizes) >= 8


def test_the_numbers_are_the_evaluations(pdf, sheet_setup):
    text = pdf.pages[0].extract_text()
    lines = {line.split(" ")[0]: line for line in text.splitlines()}
    runs = {name: sheet_setup.runs[name] for name in RETRIEVERS if name in sheet_setup.runs}
    table = h.evaluate(runs, sheet_setup.qrels, ks=[K, 10])
    found = h.first_relevant_ranks(runs, sheet_setup.qrels)[list(runs)].fillna(K + 1).le(K).sum()
    for name in runs:
        expected = [table.loc[name, (m, K)] for m in shown_metrics()] + [table.loc[name, ("recall", 10)]]
        assert lines[name] == f"{name} " + " ".join(f"{v:.3f}" for v in expected) + f" {found[name]}"
    chance = h.random_baseline(sheet_setup.qrels, len(sheet_setup.chunk_ids), K)
    assert "random order " + " ".join(f"{chance[m]:.3f}" for m in shown_metrics()) in text
    single = sum(len(g) == 1 for g in sheet_setup.qrels.values())
    assert (f"Here {single} of {len(sheet_setup.qrels)} questions have one relevant chunk: the precision@{K} ceiling is "
            f"{h.precision_ceiling(sheet_setup.qrels, K):.3f}") in flat(text)
    assert f"{len(sheet_setup.golden)} questions, {len(sheet_setup.chunk_ids)} chunks" in text
    assert all(flat(line) in flat(text) for line in recap_lines(sheet_setup, K))
    assert all(line in text for line in CODE.splitlines())
    assert "nDCG here reads the binary labels" in flat(text)  # beside the interview's graded nDCG, said which is which
    assert all(flat(f"{name}: {meaning}") in flat(text) for name, meaning in ALSO) and "Holm" in text
    assert flat("Five mistakes (07): " + "; ".join(MISTAKES)) in flat(text)
    shares = h.answer_by_retrieval()["share"]  # rule 2, measured: the cookbook's answers with and without evidence
    assert flat(f"{shares.iloc[0]:.2f} right with evidence in the top 3, {shares.iloc[1]:.2f} without.") in flat(text)


def test_the_recap_holds_the_four_definitions_ten_lines_of_code_and_five_short_lines(sheet_setup):
    text = h.recap(sheet_setup, k=K).data
    assert all(f"| {name} |" in text for name, _, _ in DEFINITIONS)
    lines = recap_lines(sheet_setup, K)
    assert len(lines) == 5 and all(len(line.split()) <= 20 for line in lines) and all(line in text for line in lines)
    found = h.first_relevant_ranks(sheet_setup.runs, sheet_setup.qrels)["hybrid"].fillna(K + 1).le(K).sum()
    assert f"for {found} of {len(sheet_setup.qrels)} questions" in lines[0]
    interview = h.interview_lines(sheet_setup, K)
    assert lines[3].split(", ")[1] in interview["When do you use nDCG?"]  # one nDCG: graded
    family = h.paired_comparisons({n: sheet_setup.runs[n] for n in ("BM25", "vector", "hybrid")}, sheet_setup.qrels, k=K)
    assert f"({len(family)} tests judged together)" in interview["Is your improvement real?"]  # the verdict's family size
    assert f"{h.precision_ceiling(sheet_setup.qrels, K):.3f}" in text
    assert all(f"*{name}*: {meaning}" in text for name, meaning in ALSO) and all(m in text for m in MISTAKES)


def test_the_ten_lines_of_code_give_the_librarys_values(sheet_setup):
    code = {}
    exec(CODE, code)
    assert len(CODE.splitlines()) == 10
    run, qrels = sheet_setup.runs["hybrid"], sheet_setup.qrels
    for k in (1, 3, 10):
        table = h.batch_scores(run, qrels, ks=[k])
        for name, metric in (("recall", "recall_at_k"), ("precision", "precision_at_k"), ("MRR", "rr_at_k")):
            assert [code[metric](run[q], h.relevant_ids(qrels[q]), k) for q in qrels] == pytest.approx(table[(name, k)].tolist())
        assert [code["ndcg_at_k"](run[q], qrels[q], k) for q in qrels] == pytest.approx(table[("nDCG", k)].tolist())


def test_notebook_07_ends_with_the_recap():
    cells = json.loads((ROOT / "notebooks" / "07_mistakes_and_interview.ipynb").read_text())["cells"]
    assert "".join(cells[-2]["source"]).startswith("## The one-screen recap")
    assert "".join(cells[-1]["source"]) == "h.recap(polder, k=K)"
    assert all(cell["metadata"].get("slideshow", {}).get("slide_type") == "skip" for cell in cells[-2:])


def test_a_sheet_that_would_not_fit_is_refused():
    page = Page()
    with pytest.raises(ValueError, match="does not fit one A4 page"):
        for _ in range(200):
            page.text("one more line of the sheet")


def test_interview_lines_name_the_runs_they_need(sheet_setup):
    with pytest.raises(ValueError, match=r"needs the runs BM25, vector and hybrid.*\['vector'\]"):
        interview_lines(sheet_setup._replace(runs={n: r for n, r in sheet_setup.runs.items() if n != "vector"}))


@pytest.mark.slow
def test_the_committed_reranked_run_gives_the_lines_a_fresh_reranking_gives(setup, sheet_setup):
    """Notebook 07 reranks afresh (its setup has no "hybrid + rerank"); the sheet reads data/runs/: the same lines."""
    assert interview_lines(setup, K) == interview_lines(sheet_setup, K)
