"""retrieval_eval/corpus.py: the documents, the stored chunks equal to a rebuild, other corpora chunked."""

import pytest

import helpers as h


def test_stored_chunks_equal_a_fresh_rebuild(docs, chunks):
    assert h.split_into_chunks(docs, h.load_tokenizer()) == chunks


def test_chunk_count_and_size(chunks):
    assert 30 <= len(chunks) <= 40
    assert max(c["n_tokens"] for c in chunks) <= h.CHUNK_SIZE
    assert {c["doc"] for c in chunks} == set(h.load_corpus())


def test_polder_uses_the_stored_chunks_and_other_corpora_are_chunked(docs, chunks, example_docs, example_chunks,
                                                                     example_chunk_size):
    assert h.stored_or_split_chunks(docs, progress=False) == chunks
    assert example_chunks == h.split_into_chunks(example_docs, h.load_tokenizer(), example_chunk_size)
    assert max(c["n_tokens"] for c in example_chunks) <= example_chunk_size


# --- bad input ---------------------------------------------------------------------------------


def test_corpus_with_two_documents_of_one_name(tmp_path):
    (tmp_path / "a.md").write_text("first", encoding="utf-8")
    (tmp_path / "a.txt").write_text("second", encoding="utf-8")
    with pytest.raises(ValueError, match="two documents are named 'a'"):
        h.load_corpus(tmp_path)


def test_chunks_file_errors_name_the_line(tmp_path):
    path = tmp_path / "chunks.jsonl"
    path.write_text('{"id": "d#00", "doc": "d", "text": "ok", "n_tokens": 3}\n{not json}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="chunks.jsonl, line 2: not valid JSON"):
        h.load_chunks(path)


def test_empty_chunk_is_refused(tmp_path):
    path = tmp_path / "chunks.jsonl"
    path.write_text('{"id": "d#00", "doc": "d", "text": "  ", "n_tokens": 2}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="chunk 'd#00' has empty"):
        h.load_chunks(path)


def test_chunk_size_larger_than_the_model_window_is_refused(example_docs, example_dir):
    with pytest.raises(ValueError, match="chunk_size 1024 is larger than the model's window of 512"):
        h.stored_or_split_chunks(example_docs, example_dir / "corpus", chunk_size=1024, progress=False)
