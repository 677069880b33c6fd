"""retrieval_eval/retrieval/retrievers.py: BM25 (both idfs) and vector retrieval on the golden set, the analyzer, ties,
caches and bad input. Tests that load the embedding model are marked slow."""

import json
import math
import os
import subprocess
import sys
import unicodedata

import numpy as np
import pytest
from cases import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers as h
from retrieval_eval.core.paths import ROOT
from retrieval_eval.inputs.models import document_prefix, model_window, query_prefix
from retrieval_eval.retrieval.retrievers import VectorRetriever, rank_by_score, stop_word_list, unindexable_chunks


def test_rank_by_score_breaks_ties_by_id():
    assert rank_by_score(["c", "a", "b"], [0.0, 0.0, 0.0]) == ["a", "b", "c"]
    assert rank_by_score(["c", "a", "b"], [0.1, 0.0, 0.5]) == ["b", "c", "a"]


def test_scores_that_differ_by_float_noise_are_a_tie_broken_by_id():
    """A model's float32 scores move by about 1e-7 with the threads and the CPU (seen: 0.4473931 against 0.44739306 for
    one chunk of the cookbook set): such scores are equal, so every machine ranks alike; 1e-5 apart is an order."""
    assert rank_by_score(["b", "a"], [0.44739306, 0.4473931]) == ["a", "b"]
    assert rank_by_score(["b", "a"], [0.4473931, 0.44739306]) == ["a", "b"]
    assert rank_by_score(["b", "a"], [0.44740, 0.44739]) == ["b", "a"]


@pytest.mark.slow
@pytest.mark.xdist_group("vector")
def test_vector_window_is_512_and_no_chunk_is_truncated(vector, chunks):
    assert vector.model.max_seq_length == 512
    longest = max(len(vector.model.tokenizer.encode(c["text"])) for c in chunks)
    assert longest <= vector.model.max_seq_length


@pytest.mark.slow
@pytest.mark.xdist_group("vector")
def test_embeddings_are_normalised_and_cached(vector, chunks):
    import numpy as np

    assert np.allclose(np.linalg.norm(vector.embeddings, axis=1), 1.0, atol=1e-5)
    assert len(list(vector.cache_folder.glob("*.npy"))) == len(chunks)
    cached = VectorRetriever(chunks, cache_dir=vector.cache_folder.parent)
    assert np.array_equal(cached.embeddings, vector.embeddings)


def test_rankings_hold_unique_known_chunks_bm25_only_its_matches(runs, chunks, bm25, golden):
    ids = {c["id"] for c in chunks}
    for name, run in runs.items():
        for qid, ranked in run.items():
            assert len(set(ranked)) == len(ranked) and set(ranked) <= ids, (name, qid)
    assert all(len(r) == len(chunks) for r in runs["vector"].values())  # vector search ranks every chunk
    # BM25 ranks exactly the chunks that match (score > 0), never padding with non-matches.
    for qid, question in zip(golden["id"], golden["question"]):
        assert runs["BM25"][qid] == bm25.rank(question)
        assert len(runs["BM25"][qid]) == int((bm25.scores(question) > 0).sum()) >= 5


def test_bm25_tokenizer_strips_punctuation_and_case():
    assert h.tokenize("Policy? E-07, don't!", stop_words=None, stemmer=None) == ["policy", "e-07", "don't"]


def test_the_bm25_analyzer_drops_stop_words_then_stems():
    # NLTK's list (the default) drops "can", "i" and "my", then Snowball stems; Lucene's 33 keep them
    assert h.tokenize("Can I renew my renewals? Policy E-07, don't!") == ["renew", "renew", "polici", "e-07"]
    assert h.tokenize("Can I renew my plan?", stop_words="lucene", stemmer=None) == ["can", "i", "renew", "my", "plan"]
    assert h.tokenize("The bikes are charging", stop_words="lucene") == ["bike", "charg"]
    assert h.tokenize("the and of my", stop_words="nltk") == []
    lucene, nltk = stop_word_list("lucene"), stop_word_list("nltk")
    assert (len(lucene), len(nltk)) == (33, 179) and lucene < nltk and {"i", "my", "how", "can"} <= nltk - lucene


def test_scripts_without_spaces_become_character_bigrams():
    assert h.tokenize("图书馆几点开门？") == ["图书", "书馆", "馆几", "几点", "点开", "开门"]
    assert h.tokenize("図書館は9時に開きます") == ["図書", "書館", "館は", "9", "時に", "に開", "開き", "きま", "ます"]
    assert h.tokenize("abc中文def 中") == ["abc", "中文", "def", "中"]
    assert h.tokenize("ห้องสมุด") == ["ห้", "้อ", "อง", "งส", "สม", "มุ", "ุด"]  # Thai: no spaces either
    assert h.tokenize("도서관은 몇 시에 문을 엽니까") == ["도서관은", "몇", "시에", "문을", "엽니까"]  # Hangul has spaces
    assert h.tokenize("---") == h.tokenize("🙂 🙂") == h.tokenize("* * *") == []


def test_underscores_are_punctuation_not_a_word():
    """The tester's case: "___" and "--- *** ___ ---" were one token "___", so such a chunk was indexed
    as a word and not listed as unindexable."""
    assert h.tokenize("___") == h.tokenize("--- *** ___ ---") == h.tokenize("๚๛") == []
    assert h.tokenize("snake_case __init__") == ["snake", "case", "init"]
    assert unindexable_chunks([{"id": "a", "text": "___"}, {"id": "b", "text": "--- *** ___ ---"},
                                 {"id": "c", "text": "a word"}]) == ["a", "b"]


@settings(max_examples=examples(150), deadline=None)
@given(st.text(st.characters(exclude_categories=["L", "N"]).filter(
    lambda c: not any(x.isalnum() for x in unicodedata.normalize("NFKC", c))), min_size=1))
def test_text_without_a_letter_or_digit_has_no_word(text):
    """Punctuation, symbols, emoji, underscores, marks and spaces, in any script: no token, so such a
    chunk is listed as unindexable; with a word beside it, only the word is a token. (Characters
    whose compatibility form holds letters, such as "™" → "TM", are words after normalise.)"""
    assert h.tokenize(text) == []
    assert h.tokenize(f"{text} policy {text}") == h.tokenize("policy") == ["polici"]  # Snowball's stem


CJK_CHUNKS = [
    {"id": "hours#00", "text": "图书馆每天早上九点开门，晚上八点关门。"},
    {"id": "cards#00", "text": "办理借书证需要带身份证。"},
    {"id": "wifi#00", "text": "馆内提供免费无线网络。"},
]


def test_bm25_ranks_chinese_text():
    """The issue's case: three Chinese chunks and 图书馆几点开门？ ranked nothing, silently."""
    bm25 = h.BM25Retriever(CJK_CHUNKS)
    assert bm25.rank("图书馆几点开门？")[0] == "hours#00"
    assert bm25.rank("借书证")[0] == "cards#00"


@settings(max_examples=examples(100), deadline=None)
@given(st.text(st.sampled_from("图书馆每天早上九点开门晚上关办理借证需要带身份提供免费无线网络ひらがなカタカナ"), min_size=2, max_size=30),
       st.data())
def test_bm25_finds_any_chunk_by_a_piece_of_its_text_in_a_script_without_spaces(text, data):
    start = data.draw(st.integers(0, len(text) - 2))
    piece = text[start : start + data.draw(st.integers(2, len(text) - start))]
    chunks = [{"id": "target", "text": text}, {"id": "other", "text": "Plain English text about something else."},
              {"id": "third", "text": "More English words, none of them Chinese."}]
    assert "target" in h.BM25Retriever(chunks).rank(piece)


def test_a_chunk_without_words_is_indexed_and_reported_not_refused():
    """The issue's case: a Markdown rule between two paragraphs became a chunk, and BM25 stopped."""
    chunks = [{"id": "rooms#00", "text": "The reading room is on the first floor."}, {"id": "rooms#01", "text": "---"},
              {"id": "rooms#02", "text": "🙂🙂🙂"}, {"id": "rooms#03", "text": "Group rooms can be booked online."}]
    bm25 = h.BM25Retriever(chunks)
    assert bm25.unindexable == unindexable_chunks(chunks) == ["rooms#01", "rooms#02"]
    assert bm25.rank("Where is the reading room?")[0] == "rooms#00"
    assert bm25.rank("---") == []  # a query without words ranks nothing
    nothing = h.BM25Retriever([{"id": "a", "text": "---"}, {"id": "b", "text": "!!!"}])
    assert nothing.rank("anything at all") == [] and nothing.idf_table("anything").empty


def test_bm25_query_with_unknown_words_gets_an_empty_ranking(bm25, qrels):
    assert bm25.rank("xyzzy plugh") == []
    assert bm25.rank("the and is") == []  # words in half the chunks or more have idf 0
    assert h.recall_at_k(bm25.rank("xyzzy"), h.relevant_ids(next(iter(qrels.values()))), 10) == 0.0


def test_bm25_idf_floor_of_rank_bm25_reverses_idf_order(chunks):
    """rank-bm25's default floor weighs "the" (in every chunk) above rarer words; ours does not."""
    raw = h.BM25Retriever(chunks, stop_words=None, stemmer=None)
    table = raw.idf_table("the theft damage")
    assert table.loc["the", "chunks"] == len(chunks)
    for word in ("theft", "damage"):
        assert table.loc[word, "chunks"] < len(chunks) / 2
        assert table.loc[word, "idf, epsilon 0.25"] < table.loc["the", "idf, epsilon 0.25"]
        assert table.loc[word, "idf used"] > table.loc["the", "idf used"] == 0.0


def test_the_idf_table_shows_the_analyzers_terms(bm25, chunks):
    table = bm25.idf_table("The bikes were damaged by the theft")
    assert list(table.index) == ["bike", "damag", "theft"]  # stop words out, stems, query order
    assert table.loc["bike", "chunks"] > len(chunks) / 2 and table.loc["bike", "idf used"] == 0.0


def test_lucene_idf_is_the_documented_formula_and_never_0():
    """Three toy chunks: "bike" is in all of them (Robertson's idf ln(0.5/3.5) < 0, floored to 0 by ours); Lucene's
    idf ln(1 + (N − n + 0.5)/(n + 0.5)) keeps it above 0, so a question of that one word still ranks the chunks."""
    toy = [{"id": "a", "text": "bike lock"}, {"id": "b", "text": "bike bell"}, {"id": "c", "text": "bike"}]
    lucene = h.BM25Retriever(toy, idf="lucene", k1=1.2, b=0.75)
    assert h.BM25Retriever(toy).rank("bike") == []
    assert lucene.rank("bike") == ["c", "a", "b"]  # the shortest chunk first, then ties by id
    # one occurrence in a chunk: idf × tf / (tf + k1 (1 − b + b · length / average length)) (Lucene drops BM25's k1 + 1)
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    length = {"a": 2, "b": 2, "c": 1}
    average = sum(length.values()) / 3
    assert lucene.scores("lock")[0] == pytest.approx(idf / (1 + 1.2 * (1 - 0.75 + 0.75 * length["a"] / average)), rel=1e-6)
    assert lucene.rank("unheard-of") == []  # a term bm25s has no id for
    with pytest.raises(ValueError, match="idf_table reads rank-bm25's idf"):
        lucene.idf_table("bike")


def test_the_engine_defaults_are_the_committed_engine_run(chunks, golden):
    from retrieval_eval.inputs.trec import read_run
    from retrieval_eval.retrieval.stages import run_file

    engine = h.BM25Retriever(chunks, **h.LUCENE_ENGLISH)
    committed = read_run(run_file("BM25, Lucene English")).rankings
    assert committed == {q: engine.rank(text) for q, text in zip(golden["id"], golden["question"])}


def test_two_rankings_give_identical_tables(chunks, golden, qrels, runs):
    again = {q: h.BM25Retriever(chunks).rank(text) for q, text in zip(golden["id"], golden["question"])}
    assert again == runs["BM25"]
    assert h.evaluate({"BM25": again}, qrels).equals(h.evaluate({"BM25": runs["BM25"]}, qrels))


NO_PICKLE = """
import sys

def refuse(event, args):
    if event == "pickle.find_class":
        raise RuntimeError(f"pickle loaded a class: {args}")

sys.addaudithook(refuse)
import helpers as h
from retrieval_eval.retrieval.retrievers import VectorRetriever
chunks = h.load_chunks()
for _ in range(2):  # the second time, the embeddings come from the cache
    retriever = VectorRetriever(chunks, cache_dir=sys.argv[1])
print(retriever.rank("How long does delivery take?")[0])
"""


@pytest.mark.slow
def test_no_pickle_is_loaded(tmp_path):
    """Loading the model and the cached embeddings never unpickles anything (an audit hook watches)."""
    result = subprocess.run([sys.executable, "-c", NO_PICKLE, str(tmp_path)], capture_output=True, text=True,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip()


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: rank_by_score(["a", "b"], [1.0, float("nan")]), "score of 'b' is NaN"),
        (lambda: h.BM25Retriever([{"id": "a", "text": "x y"}], k1=math.nan), "BM25 needs k1 >= 0"),
        (lambda: h.BM25Retriever([{"id": "a", "text": "x y"}], k1="1.5"), "BM25 needs k1 >= 0, .* got k1='1.5'"),
        (lambda: h.BM25Retriever([{"id": "a", "text": "x y"}], b=2), "0 <= b <= 1"),
        (lambda: h.BM25Retriever([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]), "duplicate chunk id 'a'"),
        (lambda: h.BM25Retriever([{"id": "a", "text": "x"}]).rank(None), "the query must be non-empty text"),
        (lambda: h.BM25Retriever([]), "there is no chunk"),
        (lambda: h.BM25Retriever(["hello world"]), "chunk 1 must be a mapping with id and text, got 'hello world'"),
        (lambda: h.BM25Retriever([{"id": "a", "text": "x"}], stop_words="english"),
         "unknown stop-word list 'english'; choose from \\['nltk', 'lucene'\\] or None"),
        (lambda: h.BM25Retriever([{"id": "a", "text": "x"}], stemmer="snowball"), "unknown stemmer 'snowball'"),
        (lambda: h.BM25Retriever([{"id": "a", "text": "x"}], idf="bm25"), "idf must be 'robertson' .* or 'lucene'"),
        (lambda: rank_by_score([1, 2], [0.5, 0.6]), r"ids holds 1 \(int\) at position 1: ids must be str"),
        (lambda: rank_by_score(["a", "a"], [0.5, 0.6]), "ids holds 'a' twice"),
        (lambda: rank_by_score(["a", "b"], [0.5]), "2 ids but 1 scores"),
    ],
)
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_empty_query_is_refused(bm25):
    with pytest.raises(ValueError, match="the query must be non-empty text"):
        bm25.rank("   ")


@pytest.mark.slow
def test_a_chunk_longer_than_the_window_is_read_up_to_it(chunks, tmp_path):
    """As every engine does: text past the window changes nothing; a window past the model's is refused."""
    longer = [{**c, "text": c["text"] + " More words past the window." * 200} for c in chunks]
    cut = VectorRetriever(chunks, window=256, cache_dir=tmp_path)
    uncut = VectorRetriever(longer, window=256, cache_dir=tmp_path)
    longest = max(range(len(chunks)), key=lambda i: chunks[i]["n_tokens"])
    assert chunks[longest]["n_tokens"] > 256
    assert np.allclose(cut.embeddings[longest], uncut.embeddings[longest], atol=1e-6)
    with pytest.raises(ValueError, match="the window must be an integer from 1 to the model's window of 512, got 513"):
        VectorRetriever(chunks, window=513, cache_dir=tmp_path)


@pytest.mark.slow
@pytest.mark.xdist_group("vector")
def test_long_query_is_refused_not_cut(vector):
    with pytest.raises(ValueError, match="more than the model's window of 512"):
        vector.rank("lorem ipsum " * 400 + "How do I charge the battery?")


@pytest.mark.slow
@pytest.mark.xdist_group("vector")
def test_vector_search_ranks_every_chunk_by_cosine_ties_by_id(vector, runs, golden):
    question = golden["question"].iloc[0]
    scores = vector.scores(question)
    assert vector.rank(question) == rank_by_score(vector.ids, scores)
    assert vector.rank(question)[:10] == runs["vector"][golden["id"].iloc[0]][:10]


# --- what the model is, read from its own files ---------------------------------------------------


@pytest.mark.slow
def test_prompts_come_from_the_models_own_configuration_not_its_name(model_copy, tmp_path, chunks):
    assert query_prefix(None) == document_prefix(None) == ""  # all-MiniLM-L6-v2 declares none
    named_bge = tmp_path / "my-bge-model"
    model_copy.rename(named_bge)
    assert query_prefix(str(named_bge)) == ""  # "bge" in a path is no reason to prefix anything
    config = named_bge / "config_sentence_transformers.json"
    declared = json.loads(config.read_text()) | {"prompts": {"query": "query: ", "passage": "passage: "}}
    config.write_text(json.dumps(declared))
    assert query_prefix(str(named_bge)) == "query: " and document_prefix(str(named_bge)) == "passage: "
    retriever = VectorRetriever(chunks[:2], model_name=str(named_bge), cache_dir=tmp_path / "cache")
    texts = ["passage: " + c["text"] for c in chunks[:2]]
    expected = retriever.model.encode(texts, prompt="", normalize_embeddings=True, show_progress_bar=False)
    assert np.allclose(retriever.embeddings, expected, atol=1e-6)
    query = retriever.model.encode(["query: Where is my bike?"], prompt="", normalize_embeddings=True, show_progress_bar=False)
    assert np.allclose(retriever.scores("Where is my bike?"), retriever.embeddings @ query[0], atol=1e-6)


def test_the_model_window_is_read_without_loading_the_model():
    assert model_window() == 512
    script = "import sys; from retrieval_eval.inputs.models import model_window; print(model_window(), 'torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.stdout.split() == ["512", "False"], result.stderr[-2000:]
