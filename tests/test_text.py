"""retrieval_eval/text.py: the normalisation under every label, and finding evidence in raw text."""

import helpers as h


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
