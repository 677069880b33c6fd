"""retrieval_eval/inputs/golden.py: the golden set, the computed relevance labels, and every problem a golden file can have."""

import codecs
import collections
import io
import zipfile

import pandas as pd
import pytest
from cases import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import helpers as h
from retrieval_eval.core.errors import FormatError, GoldenSetError
from retrieval_eval.core.paths import GOLDEN_PATH, KNOWN_FALSE_NEGATIVES_PATH
from retrieval_eval.inputs.golden import GOLDEN_COLUMNS, graded_labels, load_golden, read_known_false_negatives
from retrieval_eval.inputs.models import fast_tokenizer, token_counter


def test_golden_set_shape(golden):
    assert len(golden) == 47
    assert golden["id"].is_unique
    slices = collections.Counter(golden["slice"])
    assert set(slices) == set(WORDING) and min(slices.values()) >= 15, slices


# The golden sets' `slice` is one dimension, the wording: how the question's words relate to its evidence's.
# exact_term: the question holds, as the corpus writes it, a name or code its evidence holds (a plan, a model, a
# place, an error code) or the evidence's own word for what is asked (pause fee, invoices); paraphrase: it says
# it in other words. Where the answer sits (a table row or prose) is another dimension; it is read from the
# evidence string and is no slice.
WORDING = ("exact_term", "paraphrase")


@pytest.mark.parametrize("example", [False, True], ids=["polder", "library_hours"])
def test_an_exact_term_question_shares_a_distinctive_term_with_its_evidence(example, golden, chunks, example_dir,
                                                                            example_chunks):
    """The computed check of the slice labels: a question labelled exact_term shares with its evidence string at
    least one BM25 term (stop words out, stemmed) that fewer than half of the chunks hold, so word matching can
    find it (a term in half the chunks or more has idf 0). A paraphrase may share common words, so the check
    runs one way; that the evidence's name or word is the one asked about is the judgement the label records."""
    if example:
        golden, chunks = h.read_golden_csv(example_dir / "golden.csv"), example_chunks
    assert set(golden["slice"]) <= set(WORDING)
    terms = [set(h.tokenize(c["text"])) for c in chunks]
    distinctive = {t for t in set().union(*terms) if sum(t in chunk for chunk in terms) < len(chunks) / 2}
    exact = golden[golden["slice"] == "exact_term"]
    missing = [qid for qid, q, e in zip(exact["id"], exact["question"], exact["evidence"])
               if not set(h.tokenize(q)) & set(h.tokenize(e)) & distinctive]
    assert missing == []


def test_relevance_shape_46_single_one_multiple(qrels):
    """The reference lesson's shape: 46 questions with one relevant chunk, one with more."""
    sizes = collections.Counter(len(g) for g in qrels.values())
    assert sizes[1] == 46
    assert sum(n for size, n in sizes.items() if size > 1) == 1


def test_graded_labels(golden, chunks, qrels):
    graded = graded_labels(golden, chunks)
    assert {qid: {c for c, g in gains.items() if g == 2} for qid, gains in graded.items()} == {q: set(g) for q, g in qrels.items()}
    partial = [qid for qid, gains in graded.items() if 1 in gains.values()]
    assert len(partial) >= 15


def test_known_false_negatives_are_each_in_one_chunk_and_not_yet_relevant(chunks, qrels):
    known = read_known_false_negatives(chunks, qrels)  # checks every row; raises on any problem
    listed = pd.read_csv(KNOWN_FALSE_NEGATIVES_PATH, dtype=str, keep_default_na=False)
    assert list(known["id"]) == list(listed["id"]) and known["id"].is_unique
    texts = {c["id"]: h.normalise(c["text"]) for c in chunks}
    for qid, sentence, chunk in zip(known["id"], known["sentence"], known["chunk"]):
        assert [cid for cid, text in texts.items() if h.normalise(sentence) in text] == [chunk]
        assert chunk not in qrels[qid]
    fixed, table = h.with_known_false_negatives(qrels, chunks)
    pd.testing.assert_frame_equal(table, known)
    assert all(len(fixed[q]) == len(qrels[q]) + (q in set(known["id"])) for q in qrels)
    assert all(fixed[q][c] == max(qrels[q].values()) for q, c in zip(known["id"], known["chunk"]))
    assert all(c not in qrels[q] for q, c in zip(known["id"], known["chunk"]))  # the input is not changed


@pytest.mark.parametrize(
    "rows, message",
    [
        ([("q99", "We keep these positions for 30 days.", "")], r"line 2: no question 'q99'"),
        ([("q43", "This sentence is in no chunk at all.", "")], r"line 2, question 'q43': the sentence .* is in 0 chunks"),
        ([("q43", "Polder", "")], r"line 2, question 'q43': the sentence 'Polder' is in \d+ chunks"),
        ([("q07", "You may take a folded Vouw F1 on NS trains", "")], r"line 2, question 'q07': chunk '02_bike_models#02' is already relevant"),
    ],
)
def test_a_bad_false_negative_file_names_the_line(rows, message, tmp_path, chunks, qrels):
    path = tmp_path / "known.csv"
    pd.DataFrame(rows, columns=["id", "sentence", "note"]).to_csv(path, index=False)
    with pytest.raises(GoldenSetError, match=message):
        read_known_false_negatives(chunks, qrels, path)
    pd.DataFrame(rows, columns=["id", "text", "note"]).to_csv(path, index=False)
    with pytest.raises(GoldenSetError, match=r"missing column\(s\) \['sentence'\]"):
        read_known_false_negatives(chunks, qrels, path)


def test_example_golden_set_is_valid(example_docs, example_chunks, example_dir):
    golden, qrels, level, notes = load_golden(example_dir / "golden.csv", example_chunks, example_docs)
    assert 5 <= len(golden) <= 10 and list(qrels) == list(golden["id"]) and level == "chunk" and notes == []


# --- bad input ---------------------------------------------------------------------------------


def write_golden(tmp_path, rows, columns=GOLDEN_COLUMNS):
    path = tmp_path / "golden.csv"
    pd.DataFrame(rows, columns=list(columns)).to_csv(path, index=False)
    return path


GOOD = ("q1", "How long does delivery take?", "a sufficiently long evidence string", "paraphrase")


def test_missing_column_is_named_and_slice_is_optional(tmp_path):
    path = write_golden(tmp_path, [GOOD[:2] + GOOD[3:]], columns=("id", "question", "slice"))
    with pytest.raises(FormatError, match=r"golden.csv:1: misses column\(s\) \['evidence'\]"):
        h.read_golden_csv(path)
    path = write_golden(tmp_path, [GOOD[:3]], columns=GOLDEN_COLUMNS[:3])
    assert h.read_golden_csv(path)["slice"].tolist() == [""]


def test_all_problems_reported_at_once_with_question_ids(tmp_path):
    rows = [GOOD, ("q2", " ", "another long enough evidence string", "paraphrase"), ("q3", "Why?", "too short", "x"), GOOD]
    with pytest.raises(GoldenSetError) as err:
        h.read_golden_csv(write_golden(tmp_path, rows))
    message = str(err.value)
    assert "line 3, question 'q2': blank question" in message
    assert "line 4, question 'q3': evidence 'too short' is shorter" in message
    assert "line 5, question 'q1': duplicate row: line 2 has the same evidence string" in message


def test_wrong_encoding_is_reported_naming_the_byte_and_line(tmp_path):
    path = tmp_path / "golden.csv"
    path.write_bytes("id,question,evidence,slice\nq1,Café?,a long enough evidence string,x\n".encode("latin-1"))
    with pytest.raises(FormatError, match=r"golden.csv is not UTF-8: byte 0xe9 at line 2 \(byte 33 of the file\) "
                                               r"does not decode; save it as UTF-8"):
        h.read_golden_csv(path)


def test_golden_file_problems(tmp_path, golden, chunks):
    header_only = tmp_path / "empty.csv"
    header_only.write_text("id,question,evidence,slice\n", encoding="utf-8")
    with pytest.raises(GoldenSetError, match="holds no question"):
        h.read_golden_csv(header_only)
    blank = tmp_path / "blank.csv"
    blank.write_text("", encoding="utf-8")
    with pytest.raises(FormatError, match="blank.csv: is empty: it needs a header line naming the columns id, question, "
                                          "evidence and one row per question"):
        h.read_golden_csv(blank)
    with pytest.raises(FileNotFoundError, match=".*nowhere.csv does not exist"):
        h.read_golden_csv(tmp_path / "nowhere.csv")
    short_partial = golden.head(1).assign(partial_evidence="the")
    short_partial.to_csv(tmp_path / "partial.csv", index=False)
    with pytest.raises(GoldenSetError, match="partial_evidence 'the' is shorter than"):
        h.read_golden_csv(tmp_path / "partial.csv")
    with pytest.raises(GoldenSetError, match="question 'q9': evidence '  ' is shorter than"):
        h.label_chunks(pd.DataFrame({"id": ["q9"], "evidence": ["  "]}), chunks)


def test_evidence_not_in_corpus_names_the_question(golden, chunks, docs):
    bad = golden.head(2).copy()
    bad.loc[bad.index[1], "evidence"] = "this sentence appears nowhere in the Polder corpus"
    with pytest.raises(GoldenSetError, match=rf"question '{bad.iloc[1]['id']}'.*not in the corpus"):
        h.label_chunks(bad, chunks, docs)


@pytest.mark.parametrize("with_docs", [True, False])
def test_evidence_copied_without_the_markup_of_its_source_is_in_the_corpus_not_missing_from_it(with_docs):
    """Copied from the rendered page ("quiet room") against Markdown source ("**quiet room**"): in the corpus, not
    in any chunk as written; a string whose words are nowhere is not in the corpus."""
    text = "Members may book the **quiet room** on the second floor for up to three hours a day."
    chunks, docs = [{"id": "d#00", "doc": "d", "text": text}], {"d": text} if with_docs else None
    rendered = "book the quiet room on the second floor"
    with pytest.raises(GoldenSetError) as raised:
        h.label_chunks(pd.DataFrame({"id": ["q1", "q2"], "evidence": [rendered, "book the loud room on the roof"]}),
                       chunks, docs)
    first, second = str(raised.value).split("; ")
    where = "the document 'd'" if with_docs else "the chunk 'd#00'"
    assert f"question 'q1': evidence {rendered!r} is in {where} only with other characters between" in first
    assert "markup" in first and "not in the corpus" not in first
    assert second.startswith("question 'q2'") and second.endswith("is in no chunk" + " and not in the corpus" * with_docs)


def test_evidence_cut_by_chunk_boundary_names_both_chunks(golden, chunks, docs):
    first, second = chunks[0], chunks[1]
    assert first["doc"] == second["doc"]
    straddling = " ".join(first["text"].split()[-4:] + second["text"].split()[:4])
    bad = golden.head(1).copy()
    bad["evidence"] = straddling
    with pytest.raises(GoldenSetError, match=rf"cut by a chunk boundary between chunks \['{first['id']}', '{second['id']}'\]"):
        h.label_chunks(bad, chunks, docs)


def test_evidence_cut_between_overlapping_chunks_names_the_two_chunks():
    """With overlap a chunk starts before the previous one ends; the message still names the right two."""
    words = [f"word{i}" for i in range(120)]
    chunks = h.split_into_chunks({"d": " ".join(words)}, fast_tokenizer(None), 40, chunk_overlap=12)
    first, second = chunks[1], chunks[2]
    begin, end = words.index(second["text"].split()[0]), words.index(first["text"].split()[-1])
    assert begin <= end  # the two chunks share words
    evidence = " ".join(words[begin - 1 : end + 2])  # from just before the second chunk to just after the first
    with pytest.raises(GoldenSetError, match=rf"between chunks \['{first['id']}', '{second['id']}'\]"):
        h.label_chunks(pd.DataFrame({"id": ["q1"], "evidence": [evidence]}), chunks, {"d": " ".join(words)})


def test_partial_evidence_that_is_the_evidence_or_in_no_chunk_is_refused(golden, chunks):
    bad = golden.head(2).copy()
    bad["partial_evidence"] = [bad.iloc[0]["evidence"], "a partial answer that is nowhere in the corpus"]
    with pytest.raises(GoldenSetError) as err:
        graded_labels(bad, chunks)
    assert f"question '{bad.iloc[0]['id']}': partial evidence {bad.iloc[0]['evidence']!r} is part of the evidence" in str(err.value)
    assert f"question '{bad.iloc[1]['id']}': partial evidence 'a partial answer that is nowhere" in str(err.value)


def test_partial_evidence_in_the_evidence_chunk_adds_no_gain_1_chunk(golden, chunks, qrels):
    """Labels follow the chunks: where both spans share a chunk, that chunk keeps gain 2."""
    graded = graded_labels(golden, chunks)
    for qid, span in zip(golden["id"], golden["partial_evidence"]):
        holders = {c["id"] for c in chunks if span.strip() and h.normalise(span) in h.normalise(c["text"])}
        assert {cid for cid, gain in graded[qid].items() if gain == 1} == holders - set(qrels[qid]), qid


def test_every_problem_is_listed_at_once_with_question_ids(example_docs, example_chunks, broken_golden):
    path, first, second = broken_golden
    with pytest.raises(GoldenSetError) as err:
        load_golden(path, example_chunks, example_docs)
    message = str(err.value)
    assert message.startswith("golden.csv has 5 problem(s)")
    for expected in [
        "question 'lh02': blank question",
        "question 'lh03': evidence 'lent for 21 days' is shorter than 20 characters",
        "line 8, question 'lh06': duplicate id: line 7 has it with another question or slice",
        "question 'lh04': evidence 'the library lends bicycles for a week' is in no chunk and not in the corpus",
        "question 'lh05': evidence",
        f"is cut by a chunk boundary between chunks ['{first}', '{second}']",
    ]:
        assert expected in message


# --- golden files as people and spreadsheets write them ------------------------------------------

ROWS = [
    ("q1", "How long does delivery take?", "Delivery takes three to five working days", "paraphrase"),
    ("q2", "Où est la gare ?", "The station is next to the market, on the left", "keyword"),
    ("q3", "Two\nlines?", 'A cell with "quotes", a comma; a semicolon\tand a tab', "multi"),
]


def expected_frame():
    return pd.DataFrame(ROWS, columns=list(GOLDEN_COLUMNS))


def test_the_header_the_readme_shows_is_read():
    """The issue's case: "id, question, evidence, slice" was refused with "misses column(s) ['question', ...]"."""
    text = "id, question, evidence, slice\n" + "".join(f'{a}, "{b}", "{c}", {d}\n' for a, b, c, d in ROWS[:2])
    golden = read_text(text)
    pd.testing.assert_frame_equal(golden, expected_frame().head(2))


def read_text(text: str, encoding: str = "utf-8", name: str = "golden.csv"):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(text.encode(encoding) if encoding != "utf-16-bom" else codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
        return h.read_golden_csv(path)


def csv_text(sep: str, header=GOLDEN_COLUMNS, line_end: str = "\n", rows=ROWS) -> str:
    frame = pd.DataFrame(rows, columns=list(header))
    buffer = io.StringIO()
    frame.to_csv(buffer, sep=sep, index=False, lineterminator=line_end)
    return buffer.getvalue()


@pytest.mark.parametrize("sep", [",", ";", "\t"])
@pytest.mark.parametrize("header", [("id", "question", "evidence", "slice"), ("ID", "Question", "Evidence", "Slice"),
                                    (" id", " question ", "EVIDENCE ", "  Slice")])
@pytest.mark.parametrize("encoding, line_end", [("utf-8", "\n"), ("utf-8-sig", "\r\n"), ("utf-16-bom", "\r\n")])
def test_separators_header_case_and_spaces_encodings_and_line_endings(sep, header, encoding, line_end):
    """Excel's "CSV UTF-8" (a byte-order mark, CRLF), "Unicode text" (UTF-16, tabs), semicolons
    (European Excel), headers typed in another case or with spaces; quoted cells with line breaks."""
    golden = read_text(csv_text(sep, header, line_end), encoding)
    pd.testing.assert_frame_equal(golden, expected_frame())


def test_blank_rows_and_an_excel_separator_line_are_handled():
    text = "sep=;\n" + csv_text(";") + "\n;;;\n  \n\n"
    pd.testing.assert_frame_equal(read_text(text), expected_frame())


@pytest.mark.parametrize("name, content", [
    ("golden.xlsx", b"anything"), ("golden.ods", b"anything"), ("golden.csv", None), ("golden.csv", b"\xd0\xcf\x11\xe0old xls"),
])
def test_a_spreadsheet_file_is_refused_with_how_to_save_it_as_csv(tmp_path, name, content):
    path = tmp_path / name
    if content is None:  # an .xlsx renamed to .csv: a zip archive
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("xl/workbook.xml", "<workbook/>")
    else:
        path.write_bytes(content)
    with pytest.raises(FormatError, match=rf"{name}: is a spreadsheet file, not CSV text: save it as CSV UTF-8"):
        h.read_golden_csv(path)


def test_a_missing_column_shows_the_header_that_was_found_and_how_to_fix_it():
    with pytest.raises(FormatError) as err:
        read_text("id,question,slice\nq1,Why?,x\n")
    message = str(err.value)
    assert "golden.csv:1: misses column(s) ['evidence']: its header line is 'id,question,slice'" in message
    assert "The first line must name the columns id, question, evidence (any case; optional: slice, partial_evidence, answerable)" in message
    with pytest.raises(FormatError, match=r"misses column\(s\) \['id', 'question', 'evidence'\]: its header "
                                          r"line is 'id\|question\|evidence\|slice', read with the comma as separator"):
        read_text("id|question|evidence|slice\nq1|Why?|a long enough evidence string|x\n")
    with pytest.raises(FormatError, match=r"names the column\(s\) \['id'\] twice"):
        read_text("id,ID,question,evidence,slice\nq1,q1,Why?,a long enough evidence string,x\n")


def test_a_row_with_an_unquoted_separator_names_the_line():
    with pytest.raises(FormatError, match=r"row 3 \(line 3, starting 'q2'\) has 5 cells, the header 4\. .*must be in "
                                               r"double quotes"):
        read_text("id,question,evidence,slice\nq1,Why?,a long enough evidence string,x\nq2,Why, not?,another long "
                  "evidence string,x\n")


@pytest.mark.parametrize("rows, expected", [
    # the tester's cases: one more cell in every data row (pandas then took the first column as the index,
    # and the run ended in "TypeError: can only concatenate str (not "int") to str")
    (["q1,Why?,a long enough evidence string,x,", "q2,How?,another long evidence string,y,"],
     "row 2 (line 2, starting 'q1') has 5 cells, the header 4 (the line ends with a separator); row 3 (line 3, "
     "starting 'q2') has 5 cells, the header 4 (the line ends with a separator)"),
    (["q1,Why, really?,a long enough evidence string,x", "q2,How, then?,another long evidence string,y"],
     "row 2 (line 2, starting 'q1') has 5 cells, the header 4; row 3 (line 3, starting 'q2') has 5 cells, the header 4"),
    (['q1,"Why,\nreally?",a long enough evidence string,x', "q2,How?,another long evidence string,y,z"],
     "row 3 (line 4, starting 'q2') has 5 cells, the header 4"),  # a quoted line break: row 3 starts on line 4
])
def test_rows_with_more_cells_than_the_header_are_named(rows, expected):
    with pytest.raises(FormatError) as err:
        read_text("\n".join(["id,question,evidence,slice", *rows]) + "\n")
    assert f"golden.csv: {expected}. The header has 4 cells ('id,question,evidence,slice')" in str(err.value)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.sampled_from(["ok", "extra", "trailing"]), min_size=1, max_size=12), st.sampled_from([",", ";", "\t"]),
       st.booleans())
def test_any_row_longer_than_the_header_is_named_and_nothing_else_is_read(kinds, sep, hint):
    """Whatever rows have one cell too many, and whatever the separator, every such row is named (up to five)
    and the file is refused: a shifted row is never read as a question."""
    rows = [sep.join([f"q{i}", "Why?", f"evidence string number {i:04d}", "s"] + {"ok": [], "extra": ["x"], "trailing": [""]}[k])
            for i, k in enumerate(kinds)]
    text = ("sep=" + sep + "\n" if hint else "") + sep.join(["id", "question", "evidence", "slice"]) + "\n" + "\n".join(rows) + "\n"
    bad = [i for i, k in enumerate(kinds) if k != "ok"]
    if not bad:
        assert list(read_text(text)["id"]) == [f"q{i}" for i in range(len(kinds))]
        return
    with pytest.raises(FormatError) as err:
        read_text(text)
    for i in bad[:5]:
        assert f"row {i + 2} (line {i + 2 + hint}, starting 'q{i}') has 5 cells, the header 4" in str(err.value)


@pytest.mark.parametrize("text, kind", [
    ("| id | question | evidence | slice |\n|---|---|---|---|\n| q1 | Why, then? | a long enough evidence string | x |\n",
     "a Markdown table"),
    ("id|question|evidence|slice\nq1|Why, then?|a long enough evidence string|x\n", "a file separated by '|'"),
    ("id:question:evidence:slice\nq1:Why?:a long enough evidence string:x\n", "a file separated by ':'"),
])
def test_a_table_with_another_separator_shows_its_header_and_the_accepted_separators(text, kind):
    """The tester's case: a pipe-separated or Markdown-table golden file gave a misleading message."""
    with pytest.raises(FormatError) as err:
        read_text(text)
    message = str(err.value)
    assert f"its header line is {text.splitlines()[0]!r}" in message
    assert f"it looks like {kind}, which is not read: save it as CSV (commas, semicolons or tabs)" in message
    assert "Expected" not in message  # not a parser error about some later line


CELLS = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from(["\n", ",", ";", "\t", '"']),
                min_size=1, max_size=40).map(str.strip).filter(bool)


@st.composite
def golden_files(draw):
    """A valid golden set written the way a spreadsheet or a person might: separator, encoding,
    header case and spaces, line endings."""
    n = draw(st.integers(1, 5))
    ids = [f"q{i}" for i in range(n)]
    rows = [(qid, draw(CELLS), "Evidence long enough: " + draw(CELLS), draw(CELLS)) for qid in ids]
    header = [draw(st.sampled_from([c, c.upper(), c.title(), f" {c} "])) for c in GOLDEN_COLUMNS]
    sep = draw(st.sampled_from([",", ";", "\t"]))
    return rows, csv_text(sep, header, draw(st.sampled_from(["\n", "\r\n"])), rows), draw(
        st.sampled_from(["utf-8", "utf-8-sig", "utf-16-bom"]))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(golden_files())
def test_random_golden_files_read_back_as_written(case):
    rows, text, encoding = case
    golden = read_text(text, encoding)
    expected = [tuple(cell.replace("\r\n", "\n").replace("\r", "\n") for cell in row) for row in rows]
    assert [tuple(r) for r in golden.itertuples(index=False)] == expected


# --- questions longer than the model's window, found before any model loads ---------------------


@pytest.mark.slow  # over 5 s on the 2-core machine
def test_a_question_longer_than_the_window_is_named_with_the_golden_file_checks(tmp_path, example_docs, example_chunks,
                                                                                 example_dir):
    golden = pd.read_csv(example_dir / "golden.csv", dtype=str, keep_default_na=False)
    golden.loc[2, "question"] = "Please tell me " + "really " * 130 + "when the library opens?"
    golden.loc[4, "evidence"] = "this sentence is nowhere in the library corpus"
    path = tmp_path / "golden.csv"
    golden.to_csv(path, index=False)
    tokenizer, n_tokens = h.load_tokenizer(), token_counter()
    with pytest.raises(GoldenSetError) as err:
        load_golden(path, example_chunks, example_docs, n_tokens=n_tokens, window=128)
    message = str(err.value)
    assert message.startswith("golden.csv has 2 problem(s)")
    n = len(tokenizer.encode(golden.loc[2, "question"]))
    assert n > 128
    assert f"question '{golden.loc[2, 'id']}': the question is {n} word pieces long, more than the model's window of 128" in message
    assert f"question '{golden.loc[4, 'id']}': evidence" in message
    n = len(tokenizer.encode("query: " + golden.loc[2, "question"]))
    with pytest.raises(GoldenSetError, match=rf"is {n} word pieces long with the model's query prompt 'query: '"):
        load_golden(path, example_chunks, example_docs, n_tokens=n_tokens, window=128, query_prefix="query: ")


# --- several evidence strings per question -------------------------------------------------------


def test_a_question_with_several_evidence_strings_takes_one_row_per_string(tmp_path, golden, chunks, docs, qrels):
    """Each string is relevant on its own: the question's relevant chunks are those of either string."""
    first = golden.iloc[0]
    second = next(row for _, row in golden.iterrows() if not set(qrels[row["id"]]) & set(qrels[first["id"]]))
    rows = [tuple(first[c] for c in GOLDEN_COLUMNS), (first["id"], first["question"], second["evidence"], first["slice"])]
    path = write_golden(tmp_path, rows)
    read = h.read_golden_csv(path)
    assert list(read.columns) == [*GOLDEN_COLUMNS, "evidence_strings"] and len(read) == 1
    assert read.loc[0, "evidence_strings"] == (first["evidence"], second["evidence"]) and read.loc[0, "evidence"] == first["evidence"]
    labelled = load_golden(path, chunks, docs).qrels
    both = set(qrels[first["id"]]) | set(qrels[second["id"]])
    assert labelled == {first["id"]: {c["id"]: 1 for c in chunks if c["id"] in both}} and len(both) == 2
    assert "evidence_strings" not in h.read_golden_csv(write_golden(tmp_path, rows[:1])).columns  # one string: no column


@pytest.mark.parametrize("rows, message", [
    ([GOOD, ("q1", "Another question?", "another long enough evidence string", "paraphrase")],
     "line 3, question 'q1': duplicate id: line 2 has it with another question or slice"),
    ([GOOD, ("q1", GOOD[1], "another long enough evidence string", "exact_term")],
     "line 3, question 'q1': duplicate id: line 2 has it with another question or slice"),
    ([GOOD + ("a partial answer of some length",), GOOD[:2] + ("another long enough evidence string", GOOD[3], "another partial answer here")],
     "line 3, question 'q1': another partial_evidence than line 2: give it once"),
])
def test_repeated_rows_that_disagree_are_refused(tmp_path, rows, message):
    columns = GOLDEN_COLUMNS + (("partial_evidence",) if len(rows[0]) == 5 else ())
    with pytest.raises(GoldenSetError, match=message):
        h.read_golden_csv(write_golden(tmp_path, rows, columns))


def test_every_missing_evidence_string_is_named(tmp_path, golden, chunks, docs):
    first = golden.iloc[0]
    rows = [tuple(first[c] for c in GOLDEN_COLUMNS), (first["id"], first["question"], "a sentence that is in no chunk at all", "x")]
    rows[1] = rows[1][:3] + (first["slice"],)
    with pytest.raises(GoldenSetError) as err:
        load_golden(write_golden(tmp_path, rows), chunks, docs)
    assert f"question {first['id']!r}: evidence 'a sentence that is in no chunk at all' is in no chunk and not in the corpus" in str(err.value)
    assert str(err.value).startswith("golden.csv has 1 problem(s)")


def test_evidence_labels_scored_by_document(chunks, docs, qrels):
    labelled = load_golden(GOLDEN_PATH, chunks, docs, level="document")
    assert labelled.level == "document"
    assert labelled.qrels == {q: {c.split("#")[0]: 1 for c in gains} for q, gains in qrels.items()}


# --- labels from one pass of a multi-pattern matcher: the same as testing every string against every chunk ---------


def reference_labels(golden, chunks):
    """The definition the labels keep: a chunk is relevant when it holds a normalised evidence string (every pair tried)."""
    texts = {c["id"]: h.normalise(c["text"]) for c in chunks}
    out = {}
    for qid, evidence in zip(golden["id"], golden["evidence"]):
        needle = h.normalise(evidence)
        hits = [cid for cid, text in texts.items() if needle in text]
        if hits:
            out[qid] = dict.fromkeys(hits, 1)
    return out


@st.composite
def corpora(draw):
    """Chunks of few letters (many overlaps, repeats, one string inside another), curly quotes and odd spaces, and
    evidence strings cut from them or made up."""
    alphabet = st.sampled_from(list("ab  \u00a0\n\u2019'\ufb01-"))
    texts = draw(st.lists(st.text(alphabet, min_size=25, max_size=120).filter(str.strip), min_size=1, max_size=8))
    chunks = [{"id": f"c{i}", "text": t} for i, t in enumerate(texts)]
    evidence = []
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            text = draw(st.sampled_from(texts))
            start = draw(st.integers(0, len(text) - 1))
            evidence.append(text[start:start + draw(st.integers(20, 60))])
        else:
            evidence.append(draw(st.text(alphabet, min_size=20, max_size=40)))
    golden = pd.DataFrame({"id": [f"q{i}" for i in range(len(evidence))], "evidence": evidence})
    return golden[golden["evidence"].map(lambda e: len(h.normalise(e)) >= 20)], chunks


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(corpora())
def test_labels_from_the_matcher_equal_every_string_tested_against_every_chunk(case):
    golden, chunks = case
    problems = []
    assert h.label_chunks(golden, chunks, problems=problems) == reference_labels(golden, chunks)
    assert len(problems) == len(golden) - len(reference_labels(golden, chunks))


def test_repeated_questions_under_other_ids_are_refused_each_named(tmp_path):
    """14 rows, 4 of them the text of another question (case of spaces and quotes aside): one error naming all 4."""
    chunks = [{"id": f"c{i}", "doc": "d", "text": f"The answer number {i} is written in this chunk of the corpus."}
              for i in range(10)]
    rows = [(f"q{i}", f"What does chunk {i} say?", f"The answer number {i} is written") for i in range(10)]
    rows += [(f"r{i}", f"What  does chunk {i} say\u2019?".replace("\u2019", ""), f"The answer number {i} is written")
             for i in (1, 3, 5, 7)]
    path = tmp_path / "golden.csv"
    pd.DataFrame(rows, columns=["id", "question", "evidence"]).to_csv(path, index=False)
    with pytest.raises(GoldenSetError) as raised:
        load_golden(path, chunks)
    named = [line for line in str(raised.value).splitlines() if "repeats question" in line]
    assert [line.split("'")[1:4:2] for line in named] == [[f"r{i}", f"q{i}"] for i in (1, 3, 5, 7)]
    assert str(raised.value).startswith("golden.csv has 4 problem(s)")
