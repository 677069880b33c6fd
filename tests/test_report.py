"""retrieval_eval/tool/report.py: the report's sections (escaped, true at the extremes, any runs, any registered
metric), the bundle the template reads, and report files written only where they may be; the payloads of
issue 25 through both make targets' reports in headless Chromium."""

import html
import math
import re
import shlex
import shutil
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_cli import run_make

from retrieval_eval.core.metrics import relevant_ids, success_at_k
from retrieval_eval.core.registry import METRICS, Metric, register_metric, shown_metrics
from retrieval_eval.inputs.text import escape
from retrieval_eval.tool import report

ROOT = Path(__file__).resolve().parent.parent

# User text that must never run, and must read as typed (issue 25), in every report.
PAYLOADS = [
    "<img src=x onerror=\"document.title='pwned'\">",
    "[click me](javascript:document.title='pwned')",
    "What does the <details> element do?",
    "<script>document.title='pwned'</script>",
    "<style>body{display:none}</style>",
    "$x^2$ and &amp; *not bold* `not code`",
]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def payload_evaluation(n_questions=8, runs=("BM25", PAYLOADS[0], "hybrid + rerank"), folder=None) -> report.Evaluation:
    """A small evaluation by hand: questions, slices, ids, chunk ids and run names hold the payloads."""
    chunks = [{"id": f"{PAYLOADS[i % 3]} #{i:02d}", "doc": f"doc{i}", "text": f"Chunk {i} says {PAYLOADS[i % 6]} "
               f"and the answer number {i} is here in plain words.", "n_tokens": 20} for i in range(max(20, n_questions))]
    golden = pd.DataFrame({"id": [f"{PAYLOADS[q % 2]} q{q}" for q in range(n_questions)],
                           "question": [f"{PAYLOADS[q % 6]} number {q}?" for q in range(n_questions)],
                           "evidence": [f"the answer number {q} is here" for q in range(n_questions)],
                           "slice": [PAYLOADS[2 + q % 2] for q in range(n_questions)]})
    qrels = {qid: {chunks[q]["id"]: 1} for q, qid in enumerate(golden["id"])}
    ids = [c["id"] for c in chunks]
    built = {name: {qid: ids[(q * (r + 1)) % 3 + r:][:12] + ([ids[q]] if r == 0 and q % 2 else [])
                    for q, qid in enumerate(golden["id"])} for r, name in enumerate(runs)}
    built = {name: {q: list(dict.fromkeys(ranking)) for q, ranking in run.items()} for name, run in built.items()}
    left = pd.DataFrame([("left out when reading", f"{PAYLOADS[1]}.pdf", "a .pdf file")], columns=report.LEFT_OUT_COLUMNS)
    return report.Evaluation(built, qrels, 3, [1, 3, 5, 10], golden, chunks, {"corpus": PAYLOADS[0]}, left, folder)


def rendered(ev) -> str:
    return "\n".join(section(ev)._repr_html_() for section in report.SECTIONS)


@pytest.mark.slow
def test_every_section_escapes_user_text_for_any_number_of_runs_with_any_names(tmp_path):
    names = [f"run {i} {PAYLOADS[i % 6]} $5 ü" for i in range(11)]
    ev = payload_evaluation(runs=names)
    page = rendered(ev)
    for raw in ("<img", "<details", "<script", "<style>"):  # Markdown such as [x](javascript:...) is inert in HTML
        assert raw not in page.replace('<img alt="figure" src="data:image/png', "")
    assert all(escape(name) in page for name in names) and escape(PAYLOADS[0]) in page
    assert page.count('class="report-section tex2jax_ignore mathjax_ignore"') == len(report.SECTIONS)  # MathJax keeps out
    assert list(report.means_table(ev).index) == names
    (tmp_path / "r").mkdir()
    written = report.write_bundle(tmp_path / "r", ev)
    assert len([p for p in written if p.suffix == ".trec"]) == 11


@pytest.mark.slow  # nbconvert's import
@pytest.mark.parametrize("text", PAYLOADS + ["http://example.com/a_b and www.example.com", "<https://x.org>",
                                             "a \\<b> c", "# not a heading", "1. not a list", "| not | a table |"])
def test_escaped_markdown_reads_as_typed_in_nbconvert(text):
    """The Markdown side of text.escape, for notebooks that show user text in Markdown: nbconvert's renderer
    (raw HTML allowed, URLs linked) must give back the text as typed, with no element but the paragraph."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    out = markdown2html_mistune(escape(text, markdown=True)).strip()
    assert re.fullmatch(r"<p>[^<]*</p>", out), out
    assert html.unescape(out[3:-4]) == text


@pytest.mark.slow  # nbconvert's import
def test_the_audit_summary_escapes_slice_names_in_its_markdown():
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    from retrieval_eval.analysis.audit import golden_set_audit

    ev = payload_evaluation()
    out = markdown2html_mistune(golden_set_audit(ev.golden, ev.chunks, ev.qrels, ev.runs, k=3).summary())
    assert "<details" not in out and "<script" not in out and html.escape(PAYLOADS[2], quote=False) in out


@pytest.mark.parametrize("value, shown", [(0.0004, "< 0.001"), (0.9996, "> 0.999"), (-0.0004, "> -0.001"), (0.5, "0.500"),
                                          (1.0, "1.000"), (0.0, "0.000"), (2.9997, "> 2.999"), (math.nan, "–"), (1 / 3, "0.333")])
def test_numbers_never_look_whole_by_rounding_alone(value, shown):
    assert report.number(value) == shown


@given(st.floats(-5, 5, allow_nan=False))
def test_a_number_that_is_not_whole_never_prints_as_one(value):
    text = report.number(value)
    if value != round(value):
        assert not re.fullmatch(r"-?\d+\.000", text), (value, text)


# --- any runs, any registered metric -----------------------------------------------------------------


@pytest.mark.slow
def test_a_fifth_registered_metric_reaches_scores_and_tables(tmp_path):
    metric = register_metric(Metric("success", "success@{k}", "success.{k}",
                                    lambda ranked, gains, k: success_at_k(ranked, relevant_ids(gains), k),
                                    lambda judged, k: (judged.hits(k) > 0).astype(float)))
    try:
        ev = payload_evaluation()
        assert set(ev.scores["metric"]) == set(shown_metrics()) and "success" in ev.scores["metric"].values
        assert ("success", 3) in report.means_table(ev).columns
        assert "success@3" in report.scores_section(ev)._repr_html_()
        (tmp_path / "r").mkdir()
        report.write_bundle(tmp_path / "r", ev)
        assert "success" in set(pd.read_csv(tmp_path / "r" / "scores.csv")["metric"])
    finally:
        METRICS.pop(metric.name)


# --- the bundle ---------------------------------------------------------------------------------------


def test_the_bundle_gives_back_what_was_written(tmp_path):
    ev = payload_evaluation()
    ev.runs[next(iter(ev.runs))][next(iter(ev.qrels))] = []  # an empty ranking: no TREC line, read back as []
    ev = report.Evaluation(ev.runs, ev.qrels, ev.k, ev.ks, ev.golden, ev.chunks, ev.about, ev.left_out)
    folder = tmp_path / "r"
    folder.mkdir()
    written = {p.name for p in report.write_bundle(folder, ev)}
    assert {"bundle.json", "scores.csv", "qrels.txt", "chunks.jsonl", "questions.csv", "left_out.csv"} <= written
    back = report.load_bundle(folder)
    assert back.runs == ev.runs and back.qrels == ev.qrels and back.chunks == ev.chunks and back.about == ev.about
    assert back.golden.equals(ev.golden) and back.left_out.equals(ev.left_out) and (back.k, back.ks) == (ev.k, ev.ks)
    pd.testing.assert_frame_equal(back.scores, ev.scores.astype({"k": "int64"}), check_dtype=False)
    # ids with whitespace or "%" are percent-encoded in the TREC files, so trec_eval reads them
    assert all(len(line.split()) == 4 for line in (folder / "qrels.txt").read_text().splitlines())


# --- report files: never over a file or a link, never outside the output folder -------------------------


def test_write_file_never_writes_over_a_file_or_through_a_link(tmp_path):
    output, mine = tmp_path / "output", tmp_path / "my file.txt"
    (output / "r").mkdir(parents=True)
    mine.write_text("keep me")
    (output / "r" / "report.html").symlink_to(mine)  # a link placed in a finished report folder
    (output / "r" / "scores.csv").write_text("old")
    for name in ("report.html", "scores.csv"):
        with pytest.raises(report.ReportError, match="exists already: a report never writes over a file or a link"):
            report.write_file(output / "r", name, b"new", output)
    assert mine.read_text() == "keep me" and (output / "r" / "scores.csv").read_text() == "old"
    report.write_file(output / "r", "scores.csv", b"old", output)  # the same bytes again: left as it is


@pytest.mark.parametrize("name", ["../x.csv", "a/b.csv", "", ".hidden", "..", "x\n.csv"])
def test_write_file_takes_plain_names_only(tmp_path, name):
    (tmp_path / "r").mkdir()
    with pytest.raises(report.ReportError, match="not a plain file name"):
        report.write_file(tmp_path / "r", name, b"x")
    assert not any((tmp_path / "r").iterdir())


def test_write_file_refuses_a_folder_that_is_a_link_or_outside_the_output(tmp_path):
    output, elsewhere = tmp_path / "output", tmp_path / "elsewhere"
    output.mkdir()
    (elsewhere / "deep").mkdir(parents=True)
    (output / "r").symlink_to(elsewhere)
    for folder in (output / "r", elsewhere / "deep"):
        with pytest.raises(report.ReportError, match="is a link or not a folder directly inside"):
            report.write_file(folder, "x.csv", b"x", output)
    assert not (elsewhere / "x.csv").exists() and not (elsewhere / "deep" / "x.csv").exists()


# --- small sets, long lists, cut-offs past the rankings -------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("n, intervals, tests", [(1, False, False), (5, True, False), (6, True, True)])
def test_parts_a_golden_set_is_too_small_for_are_left_out_and_said_so(n, intervals, tests):
    ev = payload_evaluation(n_questions=n)
    for section in report.SECTIONS:  # every section is made, whatever the size
        section(ev)._repr_html_()
    said = report.intervals_section(ev).html
    assert ("Left out: an interval needs at least 2 questions" in said) != intervals
    said = report.tests_section(ev).html
    assert ("Left out: no paired test can reach p &lt; 0.05 unless at least 6 questions differ" in said) != tests


def test_long_lists_are_counted_shown_in_part_and_written_whole(tmp_path):
    output = tmp_path / "output"
    (output / "r").mkdir(parents=True)
    ev = payload_evaluation(n_questions=40, folder=output / "r")
    ev.left_out = pd.DataFrame([("left out when reading", f"f{i}.pdf", "a .pdf file") for i in range(2851)],
                               columns=report.LEFT_OUT_COLUMNS)
    report.write_bundle(output / "r", ev)
    said = report.left_out_section(ev).html
    assert "2,851 × left out when reading" in said and "and 2,841 more" in said and "f10.pdf" not in said
    assert len(pd.read_csv(output / "r" / "left_out.csv")) == 2851
    ranks = report.ranks_section(ev).html
    assert "ranks.csv" in ranks and len(pd.read_csv(output / "r" / "ranks.csv")) == 40


def test_the_left_out_table_and_the_setup_notes_list_the_same_kinds():
    """A chunk past the embedding model's window was listed as "cu the embedding model reads as unknown tokens only"."""
    from retrieval_eval.retrieval.setup import Setup

    chunks = [{"id": "c1", "doc": "d", "text": "hello world"}, {"id": "c2", "doc": "d", "text": "???"}]
    unreadable = {"chunks": ["c1"], "questions": ["q2"], "cut": ["c1", "c2", "c3", "c4"]}
    setup = Setup({}, chunks, None, {}, {"A": {"q1": [], "q2": ["c1"]}, "B": {"q1": [], "q2": []}},
                  [("x.pdf", "a .pdf file")], unreadable)
    table = report.left_out_table(setup)
    assert table["what"].value_counts(sort=False).tolist() == [1, 1, 3, 1, 1, 4]
    assert table["what"].iloc[-1] == ("chunk longer than the embedding model's window: vector search reads only "
                                      "its start")
    assert table.iloc[2:5, 1:].values.tolist() == [["q1", "A"], ["q1", "B"], ["q2", "B"]]
    assert setup.notes == [
        "left out when reading x.pdf: a .pdf file",
        "chunk 'c2' has no word BM25 can index: BM25 can never find it",
        "A ranked no chunk for 1 question(s): q1 (they score 0)",
        "B ranked no chunk for 2 question(s): q1, q2 (they score 0)",
        "the embedding model reads 1 chunks as unknown tokens only (c1): vector search places them by accident",
        "the embedding model reads 1 questions as unknown tokens only (q2): vector search ranks for them by accident",
        "4 chunks are longer than the embedding model's window: vector search reads only their start "
        "(c1, c2, c3 and 1 more)",
    ]


def test_cut_offs_deeper_than_every_ranking_are_said_plainly():
    ev = payload_evaluation()
    ev = report.Evaluation(ev.runs, ev.qrels, 3, [1, 3, 50], unit="document")
    said = report.scores_section(ev).html
    deepest = max(len(r) for run in ev.runs.values() for r in run.values())
    assert deepest < 50 and f"No run ranks more than {deepest} documents, so at k = 50 every run is scored on what it returned" in said


# --- the reports of both make targets in a real browser --------------------------------------------------

CHECK = """payloads => ({
  title: document.title,
  injected: document.querySelectorAll('img[src="x"], details, a[href^="javascript"], .report-section script, .report-section style').length,
  text: document.body.innerText,
})"""


def check_page(page, payloads):
    """Nothing of the payloads ran or became markup, and each reads as typed."""
    page.wait_for_timeout(300)
    seen = page.evaluate(CHECK, payloads)
    assert seen["title"] != "pwned" and seen["injected"] == 0, seen["injected"]
    text = " ".join(seen["text"].split())
    missing = [p for p in payloads if " ".join(p.split()) not in text]
    assert not missing, missing


PAGES = ["make evaluate's report", "make evaluate-runs' report"]
# The one place to add the widgets: a name here, and in payload_pages an entry for it, the address of
# its static view (an nbconvert HTML export of a notebook that shows the widget on payload data) or of its
# live view (a JupyterLab page from tests/lab.py, after Run All), with the payloads it must show as typed.


@pytest.fixture(scope="session")
def payload_pages(tmp_path_factory):
    """{name in PAGES: (address, payloads it shows)}: both make targets on a corpus, golden set, qrels and
    runs whose names and text hold the payloads."""
    tmp = tmp_path_factory.mktemp("payloads")
    folder = tmp / "set <b>x</b> $HOME 'q'"
    corpus = folder / "corpus <details>"
    corpus.mkdir(parents=True)
    text = ("Our help pages answer questions about markup. " + " ".join(p.replace("/", " ") for p in PAYLOADS) + "\n\n"
            "What does the <details> element do? It shows a disclosure widget that opens and closes.\n")
    (corpus / f"{PAYLOADS[0]}.md").write_text(text)
    (corpus / "plain.md").write_text("A plain page about opening hours: we open at nine every weekday morning.\n")
    (corpus / f"{PAYLOADS[1]}.pdf").write_bytes(b"%PDF")
    golden = pd.DataFrame({"id": [PAYLOADS[0], "q2 [x](javascript:1)"],
                           "question": [PAYLOADS[2], PAYLOADS[3]],
                           "evidence": ["It shows a disclosure widget that opens and closes", "we open at nine every weekday"],
                           "slice": [PAYLOADS[5], PAYLOADS[4]]})
    golden.to_csv(folder / "golden.csv", index=False)
    done = run_make("evaluate", f"CORPUS={corpus}", f"GOLDEN={folder / 'golden.csv'}", "CHUNK_SIZE=128", "K=1", tmp=tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    first = Path(done.stdout.split("Report: ")[1].split("\n")[0])
    runs = folder / "runs"
    runs.mkdir()
    for name in PAYLOADS[:3]:  # qrels and run files named with the payloads (no "/" in a file name)
        shutil.copy(first.parent / "run.vector.trec", runs / f"{name}.trec")
    qrels = shutil.copy(first.parent / "qrels.txt", folder / f"{PAYLOADS[2]}.qrels")
    done = run_make("evaluate-runs", f"QRELS={qrels}", "K=1", "RUNS=" + shlex.join(str(p) for p in sorted(runs.iterdir())),
                    tmp=tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    second = Path(done.stdout.split("Report: ")[1].split("\n")[0])
    return {PAGES[0]: (first.as_uri(), PAYLOADS[:3] + [str(corpus), "q2 [x](javascript:1)", f"{PAYLOADS[1]}.pdf"]),
            PAGES[1]: (second.as_uri(), [f"{p}.trec" for p in PAYLOADS[:3]] + [str(qrels)])}


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.xdist_group("payloads")  # both pages from one pair of reports
@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium at /usr/bin/chromium")
@pytest.mark.parametrize("name", PAGES)
def test_no_payload_runs_and_each_reads_as_typed(payload_pages, name):
    from lab import chromium

    address, payloads = payload_pages[name]
    with chromium() as browser:
        page = browser.new_page()
        page.goto(address)
        check_page(page, payloads)
        page.close()


def test_a_run_named_after_its_file_is_copied_under_one_extension(tmp_path):
    qrels = {"q1": {"a": 1}}
    runs = {name: {"q1": ["a", "b"]} for name in ("base.trec", "new.TXT", "x.trec", "x.run", "results.test")}
    written = {p.name for p in report.write_bundle(tmp_path, report.Evaluation(runs, qrels, 3, [3]))}
    assert {"run.base.trec", "run.new.trec", "run.x.trec", "run.x-2.trec", "run.results.test.trec"} <= written
    assert list(report.load_bundle(tmp_path).runs) == list(runs)  # read back under their names


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "'="])
def test_a_cell_a_spreadsheet_would_run_is_escaped_and_read_back_as_it_was(tmp_path, start):
    """OWASP's CSV injection: every CSV the report and the gate write (one writer, csv_text) escapes a text cell that
    starts a formula with a "'"; the values stay numbers, and the bundle reads the ids back unchanged."""
    qid = f"{start}cmd|' /C calc'!A0"
    qrels, runs = {qid: {"a": 1}, "q2": {"b": 1}}, {"run": {qid: ["a"], "q2": ["x", "b"]}}
    report.write_bundle(tmp_path, report.Evaluation(runs, qrels, 3, [3]))
    lines = (tmp_path / "scores.csv").read_text(encoding="utf-8").splitlines()
    assert all(not line.split(",")[1].startswith(start) for line in lines[1:]) and any(",'" in line for line in lines)
    scores = pd.read_csv(tmp_path / "scores.csv")
    assert pd.api.types.is_numeric_dtype(scores["value"])
    back = report.load_bundle(tmp_path)
    assert list(back.qrels) == [qid, "q2"] and back.runs["run"][qid] == ["a"]
    assert back.scores.equals(report.Evaluation(runs, qrels, 3, [3]).scores)
