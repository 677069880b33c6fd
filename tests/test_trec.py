"""retrieval_eval/inputs/trec.py: the TREC files read back by trec_eval reproduce the evaluation table; bad input."""

import math

import pytest
import pytrec_eval

import helpers as h
from retrieval_eval.analysis.conventions import r_precision
from retrieval_eval.core.errors import FormatError, TrecFormatError
from retrieval_eval.core.paths import ROOT
from retrieval_eval.inputs.trec import (
    Coverage,
    align_run,
    find_line,
    judgements,
    read_qrels,
    read_run,
    write_trec_qrels,
    write_trec_run,
)


def test_trec_files_reproduce_the_evaluation_table(runs, qrels, tmp_path):
    paths = h.export_trec(runs, qrels, tmp_path)
    assert [p.name for p in paths] == ["qrels.txt", "run.BM25.txt", "run.vector.txt", "run.hybrid.txt"]
    with open(paths[0]) as f:
        trec_qrels = pytrec_eval.parse_qrel(f)
    table = h.evaluate(runs, qrels)
    for path, name in zip(paths[1:], runs):
        with open(path) as f:
            trec_run = pytrec_eval.parse_run(f)
        measures = {f"{m}.{k}" for m in ("P", "recall", "ndcg_cut") for k in h.KS}
        per_q = pytrec_eval.RelevanceEvaluator(trec_qrels, measures).evaluate(trec_run)
        assert len(per_q) == len(qrels)  # no question dropped
        for k in h.KS:
            for metric, measure in [("precision", f"P_{k}"), ("recall", f"recall_{k}"), ("nDCG", f"ndcg_cut_{k}")]:
                value = sum(v[measure] for v in per_q.values()) / len(qrels)
                assert table.loc[name, (metric, k)] == pytest.approx(value, abs=1e-12), (name, metric, k)
        full_rr = pytrec_eval.RelevanceEvaluator(trec_qrels, {"recip_rank"}).evaluate(trec_run)
        ours = h.mrr([runs[name][q] for q in qrels], [set(g) for g in qrels.values()])
        assert ours == pytest.approx(sum(v["recip_rank"] for v in full_rr.values()) / len(qrels), abs=1e-12)


def test_the_default_bm25_reaches_0_70_recall_at_3_by_trec_eval(runs, qrels, tmp_path):
    """Issue 12's bar for a fair baseline, measured as `make trec` writes the files and trec_eval reads them."""
    qrels_path, bm25_path = h.export_trec(runs, qrels, tmp_path)[:2]
    with open(qrels_path) as f, open(bm25_path) as g:
        per_q = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(f), {"recall.3"}).evaluate(pytrec_eval.parse_run(g))
    assert bm25_path.name == "run.BM25.txt" and len(per_q) == len(qrels)
    assert sum(v["recall_3"] for v in per_q.values()) / len(qrels) >= 0.70


def test_run_file_scores_strictly_decrease(tmp_path):
    path = write_trec_run({"q1": ["c", "a", "b"]}, tmp_path / "run.txt", "t")
    lines = [line.split() for line in path.read_text().splitlines()]
    assert [line[2] for line in lines] == ["c", "a", "b"]
    scores = [float(line[4]) for line in lines]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda p: write_trec_run({"q1": ["a", "a"]}, p, "t"), "duplicate id 'a'"),
        (lambda p: write_trec_run({"q 1": ["a"]}, p, "t"), "'q 1' cannot be written"),
        (lambda p: write_trec_qrels({"q1": {"a": 0.5}}, p), "chunk 'a': gain 0.5 is not a whole number"),
        (lambda p: write_trec_run({"q1": ["a", 2]}, p, "t"), r"question 'q1': the ranking holds 2 \(int\) at rank 2"),
        (lambda p: write_trec_run({1: ["a"]}, p, "t"), r"the run holds question id 1 \(int\)"),
        (lambda p: write_trec_qrels({"q1": {None: 1}}, p), r"question 'q1': the gains hold id None \(NoneType\)"),
        (lambda p: write_trec_qrels({("q", 1): {"a": 1}}, p), r"the qrels hold question id \('q', 1\) \(tuple\)"),
    ],
)
def test_bad_trec_input_is_refused(call, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        call(tmp_path / "out.txt")


# --- reading: trec_eval's own test files, at full precision against pytrec_eval ----------------

DATA = ROOT / "tests" / "data" / "trec_eval"  # copied from trec_eval 10.0, see its README.md


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def our_measures(ranked, gains, ks=(1, 5, 10, 15, 20, 30, 100, 200, 500, 1000)):
    """trec_eval's names for the values of our metric functions (0 for a question without a relevant document)."""
    relevant = h.relevant_ids(gains)
    out = {"recip_rank": h.reciprocal_rank(ranked, relevant), "Rprec": r_precision(ranked, gains),
           "map": h.average_precision(ranked, gains)}
    for k in ks:
        out |= {f"P_{k}": h.precision_at_k(ranked, relevant, k), f"recall_{k}": h.recall_at_k(ranked, relevant, k),
                f"ndcg_cut_{k}": h.ndcg_at_k(ranked, gains, k), f"success_{k}": h.success_at_k(ranked, relevant, k)}
    return out


@pytest.mark.parametrize("qrels_file, run_file", [
    ("qrels.test", "results.test"), ("qrels.rel_level", "results.test"), ("qrels.test", "results.trunc"),
    ("qrels.test.with-comments", "results.test")])
def test_what_the_readers_return_scores_as_trec_eval(qrels_file, run_file):
    qrels, run = read_qrels(DATA / qrels_file), read_run(DATA / run_file)
    # pytrec_eval is given each document's score and sorts by itself (score, then docid descending)
    scored = {q: dict(zip(run.rankings[q], run.scores[q])) for q in run.rankings}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"P", "recall", "ndcg_cut", "success", "recip_rank", "Rprec", "map"}
                                            ).evaluate(scored)
    assert set(theirs) == set(qrels) & set(run.rankings)
    compared = 0
    for qid, values in theirs.items():
        ours = our_measures(run.rankings[qid], qrels[qid])
        for name in ours.keys() & values.keys():
            assert ours[name] == pytest.approx(values[name], abs=1e-12), (qid, name)
            compared += 1
    assert compared == len(theirs) * (3 * 9 + 3 + 3)  # P, recall, ndcg_cut at 9 ks; success at 1, 5, 10; RR, Rprec, map


def test_the_files_as_read():
    qrels, run = read_qrels(DATA / "qrels.test"), read_run(DATA / "results.test")
    lines = (DATA / "qrels.test").read_text().splitlines()
    assert sum(map(len, qrels.values())) == len(lines) and list(qrels) == ["301", "302", "303"]
    assert {g for gains in qrels.values() for g in gains.values()} == {0, 1}
    graded = read_qrels(DATA / "qrels.rel_level")
    assert sorted(g for gains in graded.values() for g in gains.values()).count(-1) == 304
    assert {g for gains in graded.values() for g in gains.values()} == {-1, 0, 1, 2, 3, 4}
    assert run.tag == "STANDARD" and run.reordered == ("301", "302", "303")
    assert sum(map(len, run.rankings.values())) == 1500  # (question, document) lines
    for _qid, scores in run.scores.items():
        assert scores.tolist() == sorted(scores, reverse=True)
    trunc = read_run(DATA / "results.trunc")  # junk columns after the tag; no question 302
    assert list(trunc.rankings) == ["301", "303"] and trunc.tag == "STANDARD"


def test_comment_lines_and_a_docid_with_a_hash():
    # qrels.test.with-comments adds three '#' lines and renames one docno to "CR#93E-1860"
    plain, with_comments = read_qrels(DATA / "qrels.test"), read_qrels(DATA / "qrels.test.with-comments")
    differ = {(q, d) for q in plain for d in plain[q].keys() ^ with_comments[q].keys()}
    assert differ == {("301", "CR93E-1860"), ("301", "CR#93E-1860")}
    assert with_comments["301"]["CR#93E-1860"] == plain["301"]["CR93E-1860"] == 0


def test_our_run_files_read_back_in_our_order(runs, tmp_path):
    for name, run in runs.items():
        path = write_trec_run(run, tmp_path / f"{name}.txt", name)
        read = read_run(path)
        assert read.rankings == {q: r for q, r in run.items() if r} and read.reordered == () and read.tag == name


def test_ties_by_docid_descending_as_trec_eval(tmp_path):
    qrels = read_qrels(write(tmp_path, "qrels", "q 0 a 1\nq 0 b 0\nq 0 c 2\nq 0 d 0\n"))
    run = read_run(write(tmp_path, "run", "q Q0 a 1 1.0 t\nq Q0 b 2 1.0 t\nq Q0 c 3 1.0 t\nq Q0 d 4 1.0 t\n"))
    assert run.rankings["q"] == ["d", "c", "b", "a"] and run.reordered == ("q",)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "ndcg_cut"}).evaluate(
        {"q": dict(zip(run.rankings["q"], run.scores["q"]))})["q"]
    assert theirs["recip_rank"] == h.reciprocal_rank(run.rankings["q"], h.relevant_ids(qrels["q"])) == 0.5
    assert theirs["ndcg_cut_5"] == pytest.approx(h.ndcg_at_k(run.rankings["q"], qrels["q"], 5), abs=1e-12)


# --- reading what engines write -------------------------------------------------------------------


def test_engine_formats(tmp_path):
    # Pyserini/Anserini: spaces; Elasticsearch exports: tabs; Windows: CRLF and a BOM; bm25s: long floats
    lines = ("q1\tQ0\td1\t1\t12.5\tes\r\n"
             "q1 Q0  d2 2 1.25e+01  es  \r\n"       # tie with d1: d2 first (docid descending)
             "q1 Q0 d3 3 -3.5E-2 es\n"
             "  q1 Q0 d4 4 -inf es extra columns\n"  # leading blanks, -inf, junk after the tag
             "\n# a comment\n   # an indented comment\n"
             "q2 Q0 d9 1 0.30000000000000004 es")     # no final newline
    run = read_run(write(tmp_path, "run", "\ufeff" + lines))
    assert run.rankings == {"q1": ["d2", "d1", "d3", "d4"], "q2": ["d9"]}
    assert run.scores["q1"].tolist() == [12.5, 12.5, -0.035, -math.inf]
    assert run.tag == "es" and run.tags == ("es",) and run.reordered == ("q1",)
    qrels = read_qrels(write(tmp_path, "qrels", "\ufeffq1\t0\td1\t1\r\n  q1 0 d2 -1  \n\n# note\nq2 0 d9 +2\n"))
    assert qrels == {"q1": {"d1": 1, "d2": -1}, "q2": {"d9": 2}}


def test_cr_only_line_ends(tmp_path):
    # old Mac line ends: trec_eval would read one line and keep only its first result
    assert read_run(write(tmp_path, "run", "q Q0 a 1 2 t\rq Q0 b 2 1 t\r")).rankings == {"q": ["a", "b"]}


def test_non_ascii_ids_tie_as_utf8_bytes(tmp_path):
    # strcmp on UTF-8 bytes orders as Python orders strings (code points)
    ids = ["a", "é", "z", "日本", "Z", "éa"]
    run = read_run(write(tmp_path, "run", "".join(f"q Q0 {d} 1 0 t\n" for d in ids)))
    assert run.rankings["q"] == sorted(ids, reverse=True) == sorted(ids, key=lambda s: s.encode(), reverse=True)


def test_only_c_whitespace_separates_fields(tmp_path):
    from retrieval_eval.inputs.trec import _NOT_C_SPACE

    assert read_run(write(tmp_path, "run", "q Q0 a\u00a0b 1 0 t\n")).rankings["q"] == ["a\u00a0b"]
    python_only = {c for c in map(chr, range(0x110000)) if c.isspace() and c not in " \t\n\r\x0b\x0c"}
    assert python_only == {c for c in map(chr, range(0x110000)) if _NOT_C_SPACE.match(c)}


def test_the_tag_is_the_last_lines_and_the_rank_column_is_ignored(tmp_path):
    run = read_run(write(tmp_path, "run", "q Q0 a 1 0.1 first\nq Q0 b 2 0.9 second\nq Q0 c 3 0.5 second\n"))
    assert run.tag == "second" and run.tags == ("first", "second")
    assert run.rankings["q"] == ["b", "c", "a"] and run.reordered == ("q",)


# --- bad files: errors name the file and the line -------------------------------------------------


@pytest.mark.parametrize("text, line, words", [
    ("q 0 a\n", 1, "needs 4 fields"),
    ("q 0 a 1\nq 0 b 1 extra\n", 2, "found 5"),
    ("# c\n\nq 0 a 1.5\n", 3, "'1.5' is not an integer"),
    ("q 0 a one\n", 1, "'one' is not an integer"),
    ("q 0 a 1_0\n", 1, "is not an integer"),
    ("q 0 a ٣\n", 1, "is not an integer"),  # an Arabic-Indic digit: int() would take it
    ("q 0 a 1\nq 0 b 0\nq 0 a 0\n", 3, "judged twice for question 'q' (first on line 1)"),
    ("q Q0 a 1 2.5 run\n", 1, "found 6 (it looks like a run line: is this a run file?)"),
])
def test_bad_qrels_lines(tmp_path, text, line, words):
    path = write(tmp_path, "my qrels é.txt", text)
    with pytest.raises(TrecFormatError) as info:
        read_qrels(path)
    assert info.value.line == line and info.value.path == str(path)
    assert str(info.value).startswith(f"{path}:{line}: ") and words in str(info.value)


@pytest.mark.parametrize("text, line, words", [
    ("q Q0 a 1 0.5\n", 1, "needs 6 fields"),
    ("q 0 a 1\n", 1, "found 4 (it looks like a qrels line: is this the qrels file?)"),
    ("q Q0 a 1 high t\n", 1, "score 'high' is not a number"),
    ("q Q0 a 1 nan t\n", 1, "score 'nan' is not a number"),
    ("q Q0 a 1 1_0 t\n", 1, "score '1_0' is not a number"),
    ("q Q0 a 1 0x1p3 t\n", 1, "is not a number"),
    ("q Q0 a 1 2 t\nr Q0 a 1 2 t\n\nq Q0 a 2 1 t\n", 4, "listed twice for question 'q' (first on line 1)"),
])
def test_bad_run_lines(tmp_path, text, line, words):
    path = write(tmp_path, "run.txt", text)
    with pytest.raises(TrecFormatError) as info:
        read_run(path)
    assert info.value.line == line and str(info.value).startswith(f"{path}:{line}: ") and words in str(info.value)


@pytest.mark.parametrize("reader", [read_qrels, read_run])
@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_empty_files(tmp_path, reader, text):
    with pytest.raises(TrecFormatError, match="holds no"):
        reader(write(tmp_path, "f.txt", text))


def test_missing_file_bad_utf8_and_a_long_line(tmp_path):
    with pytest.raises(TrecFormatError, match="nope.txt: cannot be read"):
        read_run(tmp_path / "nope.txt")
    with pytest.raises(TrecFormatError, match=r"q:2: is not valid UTF-8 \(byte 0xff\)"):
        read_qrels(write(tmp_path, "q", b"q 0 a 1\nq 0 \xff 1\n"))
    with pytest.raises(TrecFormatError) as info:
        read_run(write(tmp_path, "r", "q " + "x" * 500 + "\n"))
    assert "…" in str(info.value) and len(str(info.value)) < 400


def test_find_line(tmp_path):
    path = write(tmp_path, "run", "# header\nq1 Q0 a 1 2 t\n\nq2 Q0 a 1 2 t\n")
    assert find_line(path, "q2", "a") == 4 and find_line(path, "q1", "a") == 2 and find_line(path, "q3", "a") is None


# --- which questions meet ---------------------------------------------------------------------------


def test_align_run_as_trec_eval_c():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0, "d": -1}}
    rankings, coverage = align_run({"q1": ["a"], "q9": ["z"], "q3": ["c"]}, qrels)
    assert coverage == Coverage(scored=("q1", "q2"), run_only=("q9",), missing=("q2",), no_relevant=("q3",))
    assert rankings == {"q1": ["a"], "q2": []}
def test_judgements_keep_the_line_of_each_label(tmp_path):
    """What the golden-set readers use to name the line of a label that no chunk has."""
    path = write(tmp_path, "qrels", "# a comment\nq1 0 a 1\n\nq1 0 b 0\nq2 0 a -1\n")
    assert judgements(path) == [(2, "q1", "a", 1), (4, "q1", "b", 0), (5, "q2", "a", -1)]
    assert read_qrels(path) == {"q1": {"a": 1, "b": 0}, "q2": {"a": -1}}
    assert issubclass(TrecFormatError, FormatError)  # one kind of error for every file format



def test_the_reader_at_once_and_line_by_line_agree(tmp_path, monkeypatch):
    """A '#' sends a file to the line-by-line reader (it names bad lines); pandas' C reader reads the rest at once, in
    blocks (here of 64 bytes: a question's lines and the tags span blocks)."""
    import random

    from retrieval_eval.inputs import trec
    monkeypatch.setattr(trec, "CHUNK_BYTES", 64)

    rng = random.Random(7)
    for i in range(50):
        lines = [f"q{rng.randrange(5)}\tQ0 {rng.choice('abcdefgh')}#{rng.randrange(9)}  {rng.randrange(9)} "
                 f"{rng.choice(['1', '2', '2.0', '-1e-3', 'inf', '0.30000000000000004'])} t{rng.randrange(2)}" for _ in range(30)]
        lines = list({" ".join(line.split()[:1] + line.split()[2:3]): line for line in lines}.values())  # no duplicates
        at_once = read_run(write(tmp_path, f"a{i}", "\n".join(lines)))
        by_line = read_run(write(tmp_path, f"b{i}", "\n".join(["# forces the line-by-line reader", *lines])))
        assert at_once.rankings == by_line.rankings == read_run(write(tmp_path, f"c{i}", "\r\n".join(lines))).rankings
        assert {q: s.tolist() for q, s in at_once.scores.items()} == {q: s.tolist() for q, s in by_line.scores.items()}
        assert (at_once.tag, at_once.tags, at_once.reordered) == (by_line.tag, by_line.tags, by_line.reordered)
    assert at_once.reordered and any(len(set(s)) < len(s) for s in at_once.scores.values())  # re-sorts and ties met
    from retrieval_eval.inputs.trec import _run_columns

    assert _run_columns(write(tmp_path, "c1", "q Q0 d#1 1 2 t\n")) is not None  # a "#" inside a docid is no comment
    assert _run_columns(write(tmp_path, "c2", "q Q0 d 1 2 t\n  # a note\n")) is None
    assert _run_columns(write(tmp_path, "c3", "#\nq Q0 d 1 2 t\n")) is None
