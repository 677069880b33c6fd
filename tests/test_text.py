"""retrieval_eval/inputs/text.py: reading text files as saved, the normalisation under every label, and finding evidence in raw text."""

import pytest

import helpers as h
from retrieval_eval.inputs.text import read_text


def test_normalise_handles_typography():
    assert h.normalise("ﬁve\u00a0days \u2013 “fully”\n  covered") == 'five days - "fully" covered'


def test_invisible_characters_do_not_hide_evidence():
    assert h.normalise("bat\u00adtery\u200b charge\ufeff") == "battery charge"


def test_evidence_is_located_in_raw_text_as_the_labels_match_it(golden, chunks, qrels):
    text = "Open 09:00\u201317:00 on\nweekdays, \u201cclosed\u201d on Sundays."
    start, end = h.locate_evidence(text, "Open 09:00-17:00 on weekdays")
    assert text[start:end] == "Open 09:00\u201317:00 on\nweekdays"
    assert h.locate_evidence(text, "not in this text at all") is None
    by_id = {c["id"]: c["text"] for c in chunks}
    for qid, evidence in zip(golden["id"], golden["evidence"]):
        for chunk_id in qrels[qid]:
            assert h.locate_evidence(by_id[chunk_id], evidence) is not None, (qid, chunk_id)


def test_read_text_reads_utf8_and_byte_order_marked_unicode_and_refuses_the_rest(tmp_path):
    path = tmp_path / "f.txt"
    for raw in ["a\r\nb\rc\n".encode("utf-8"), "\ufeffa\nb\nc\n".encode("utf-8"), "a\r\nb\nc\n".encode("utf-16"),
                "a\nb\nc\n".encode("utf-32")]:
        path.write_bytes(raw)
        assert read_text(path) == "a\nb\nc\n"
    path.write_bytes("a\nb\nna\xefve".encode("latin-1"))
    with pytest.raises(ValueError, match=r"f.txt is not UTF-8: byte 0xef at line 3 \(byte 6 of the file\) does not "
                                         r"decode; save it as UTF-8"):
        read_text(path)
    path.write_bytes("abc".encode("utf-16-le"))  # UTF-16 without its byte-order mark
    with pytest.raises(ValueError, match="f.txt holds NUL bytes: it is not a text file, or UTF-16 without a byte-order mark"):
        read_text(path)
