"""retrieval_eval/inputs/corpus.py and chunks.py: the documents of a real-world corpus folder (every file read or listed),
chunks that fit the model's window and come close to the size asked, the stored chunks equal to a
rebuild, other corpora chunked."""

import base64
import codecs
import os
import random
import re
import signal

import pytest
from cases import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import helpers as h
from retrieval_eval.core.errors import FormatError, GoldenSetError
from retrieval_eval.core.paths import CORPUS_DIR
from retrieval_eval.inputs import chunks as chunks_module
from retrieval_eval.inputs.chunks import CHUNK_SIZE, chunk_spans, stored_chunks_differ, stored_or_split_chunks
from retrieval_eval.inputs.models import fast_tokenizer


@pytest.mark.slow  # a rebuild of the teaching set's chunks
def test_stored_chunks_equal_a_fresh_rebuild(docs, chunks):
    assert h.split_into_chunks(docs, h.load_tokenizer()) == chunks


def test_chunk_count_and_size(chunks):
    assert 30 <= len(chunks) <= 40
    assert max(c["n_tokens"] for c in chunks) <= CHUNK_SIZE
    assert {c["doc"] for c in chunks} == set(h.load_corpus())


def test_polder_uses_the_stored_chunks_and_other_corpora_are_chunked(docs, chunks, example_docs, example_chunks,
                                                                     example_chunk_size):
    assert stored_or_split_chunks(docs, progress=False) == chunks
    assert example_chunks == h.split_into_chunks(example_docs, h.load_tokenizer(), example_chunk_size)
    assert max(c["n_tokens"] for c in example_chunks) <= example_chunk_size


# --- bad input ---------------------------------------------------------------------------------


def test_corpus_with_two_documents_of_one_name(tmp_path):
    (tmp_path / "a.md").write_text("first", encoding="utf-8")
    (tmp_path / "a.txt").write_text("second", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.MD").write_text("third", encoding="utf-8")
    (tmp_path / "sub" / "b.markdown").write_text("fourth", encoding="utf-8")
    with pytest.raises(ValueError) as err:
        h.load_corpus(tmp_path)
    message = str(err.value)
    assert "has 2 problem(s)" in message
    assert "a.md and a.txt both give the document id 'a'; rename one" in message
    assert "sub/b.MD and sub/b.markdown both give the document id 'sub/b'" in message


def test_chunks_file_errors_name_the_line(tmp_path):
    """More malformed chunks files, of every format, in tests/test_formats.py."""
    path = tmp_path / "chunks.jsonl"
    path.write_text('{"id": "d#00", "doc": "d", "text": "ok", "n_tokens": 3}\n{not json}\n', encoding="utf-8")
    with pytest.raises(FormatError, match=f"{path}:2: is not valid JSON"):
        h.load_chunks(path)


def test_empty_chunk_is_refused(tmp_path):
    path = tmp_path / "chunks.jsonl"
    path.write_text('{"id": "d#00", "doc": "d", "text": "  ", "n_tokens": 2}\n', encoding="utf-8")
    with pytest.raises(FormatError, match=f"{path}:1: chunk 'd#00': the field text is empty"):
        h.load_chunks(path)
    with pytest.raises(ValueError, match="chunk 'd#00' has empty"):  # chunks made in memory: check_chunks
        h.BM25Retriever([{"id": "d#00", "text": " "}])


def test_the_stored_chunks_file_reads_back_as_written(chunks, tmp_path):
    from retrieval_eval.inputs.chunks import write_chunks

    assert all(list(c) == ["id", "doc", "text", "n_tokens"] for c in chunks)
    write_chunks(chunks, tmp_path / "chunks.jsonl")
    assert (tmp_path / "chunks.jsonl").read_bytes() == (CORPUS_DIR.parent / "chunks.jsonl").read_bytes()


def test_chunk_size_larger_than_the_model_window_is_refused(example_docs, example_dir):
    with pytest.raises(ValueError, match="chunk_size 1024 is larger than the model's window of 512"):
        stored_or_split_chunks(example_docs, example_dir / "corpus", chunk_size=1024, progress=False)


# --- a corpus folder as users have them ---------------------------------------------------------


def write(folder, relative, content: str | bytes):
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)


def test_extensions_match_without_regard_to_case(tmp_path):
    """The issue's case: only loans.md was read; Hours.MD and fees.TXT were skipped without a word."""
    for name in ("loans.md", "Hours.MD", "fees.TXT"):
        write(tmp_path, name, f"The text of {name}.")
    skipped = []
    assert h.load_corpus(tmp_path, skipped) == {"Hours": "The text of Hours.MD.", "fees": "The text of fees.TXT.",
                                                "loans": "The text of loans.md."}
    assert skipped == []


def test_a_real_world_folder_is_read_recursively_and_what_is_not_read_is_listed(tmp_path):
    write(tmp_path, "intro.markdown", "Welcome.")
    write(tmp_path, "faq/returns.md", "Returns take 14 days.")
    write(tmp_path, "faq/deep/er/shipping.Txt", "Shipping is free.")
    write(tmp_path, ".DS_Store", b"\x00\x01")
    write(tmp_path, "faq/Thumbs.db", b"\x00")
    write(tmp_path, "~$returns.docx", b"lock")
    for name in ("HEAD", "config", "objects/ab/cdef"):
        write(tmp_path, f".git/{name}", "x")
    write(tmp_path, "manual.pdf", b"%PDF-1.4")
    write(tmp_path, "faq/returns.docx", b"PK\x03\x04")
    write(tmp_path, "logo.png", b"\x89PNG")
    write(tmp_path, "page.html", "<p>hi</p>")
    write(tmp_path, "README", "no extension")
    write(tmp_path, "empty.md", "")
    write(tmp_path, "blank.txt", "  \n\t\n")
    (tmp_path / "link").symlink_to(tmp_path / "faq")
    skipped = []
    docs = h.load_corpus(tmp_path, skipped)
    assert docs == {"faq/deep/er/shipping": "Shipping is free.", "faq/returns": "Returns take 14 days.", "intro": "Welcome."}
    reasons = dict(skipped)
    assert reasons[".git/"] == "hidden or system folder (3 files not read)"
    for hidden in (".DS_Store", "faq/Thumbs.db", "~$returns.docx"):
        assert reasons[hidden] == "hidden or system file"
    for other, suffix in [("manual.pdf", ".pdf"), ("faq/returns.docx", ".docx"), ("logo.png", ".png"), ("page.html", ".html")]:
        assert reasons[other].startswith(f"a {suffix} file, not a document: only .md, .markdown, .txt files are read")
    assert reasons["README"].startswith("a file without an extension, not a document")
    assert reasons["empty.md"] == reasons["blank.txt"] == "empty or only whitespace"
    assert reasons["link/"] == "a link to a folder; links are not followed"
    assert len(skipped) == 12
    with pytest.warns(UserWarning, match=r"12 file\(s\) or folder\(s\) of .* were not read:\n- \.DS_Store: hidden"):
        assert h.load_corpus(tmp_path) == docs  # without a list, the same listing is a warning


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le-bom", "utf-16-be-bom", "utf-32"])
def test_documents_in_utf8_or_with_a_byte_order_mark_are_read(tmp_path, encoding):
    text = "Café — 图书馆 opens at 9.\nSecond line ✓."
    bom = {"utf-16-le-bom": codecs.BOM_UTF16_LE, "utf-16-be-bom": codecs.BOM_UTF16_BE}.get(encoding, b"")
    codec = {"utf-16-le-bom": "utf-16-le", "utf-16-be-bom": "utf-16-be"}.get(encoding, encoding)
    write(tmp_path, "doc.md", bom + text.replace("\n", "\r\n").encode(codec))
    assert h.load_corpus(tmp_path) == {"doc": text}  # byte-order mark gone, Windows line endings made "\n"


def test_a_document_that_cannot_be_decoded_is_named_with_the_byte_and_line(tmp_path):
    write(tmp_path, "good.md", "fine")
    write(tmp_path, "notes/old.txt", "line one\nCaf\xe9 au lait".encode("latin-1"))
    write(tmp_path, "binary.md", b"\x00\x01\x02abc")
    with pytest.raises(ValueError) as err:
        h.load_corpus(tmp_path)
    message = str(err.value)
    assert "notes/old.txt is not UTF-8: byte 0xe9 at line 2 (byte 12 of the file) does not decode; save it as UTF-8" in message
    assert "binary.md holds NUL bytes" in message


def test_missing_folder_file_instead_of_folder_and_a_folder_without_documents(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"the corpus folder .*nowhere does not exist"):
        h.load_corpus(tmp_path / "nowhere")
    write(tmp_path, "a.md", "text")
    with pytest.raises(NotADirectoryError, match=r"a.md is a file, not a folder"):
        h.load_corpus(tmp_path / "a.md")
    write(tmp_path, "other/slides.pptx", b"PK")
    write(tmp_path, "other/.hidden.md", "hidden")
    with pytest.raises(FileNotFoundError, match=r"no document \(.md, .markdown, .txt\) in the corpus folder .*other; "
                                                r"not read:\n- \.hidden\.md: hidden or system file\n- slides\.pptx: a \.pptx file"):
        h.load_corpus(tmp_path / "other")


NAMES = st.text("abcXYZ _-é", min_size=1, max_size=6).filter(lambda n: n.strip(" ") == n)
SUFFIXES = st.sampled_from([".md", ".MD", ".Md", ".markdown", ".MARKDOWN", ".txt", ".TXT", ".pdf", ".docx", ".html", ".png", ""])
PREFIXES = st.sampled_from(["", "", "", ".", "~$"])


@st.composite
def corpus_folders(draw):
    """Relative file paths (folders up to 3 deep, some hidden) with contents (some empty)."""
    files = {}
    for _ in range(draw(st.integers(1, 12))):
        folders = draw(st.lists(st.builds(str.__add__, PREFIXES, NAMES), max_size=3))
        name = draw(PREFIXES) + draw(NAMES) + draw(SUFFIXES)
        files["/".join([*folders, name])] = draw(st.sampled_from(["", " \n", "Some text.", "Other text.\n\nMore."]))
    return files


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corpus_folders())
def test_every_file_is_read_or_listed_with_its_reason(tmp_path_factory, files):
    folder = tmp_path_factory.mktemp("corpus")
    written = {}
    for relative, content in files.items():
        try:
            write(folder, relative, content)
            written[relative] = content
        except (FileExistsError, NotADirectoryError, IsADirectoryError):  # a name used as both file and folder
            pass
    skipped = []
    try:
        docs = h.load_corpus(folder, skipped)
    except FileNotFoundError as exc:
        assert "no document" in str(exc)
        docs = {}
    except ValueError as exc:
        assert "both give the document id" in str(exc)
        return
    hidden_folders = [s for s, _ in skipped if s.endswith("/")]
    for relative, content in written.items():
        if any(relative.startswith(f) for f in hidden_folders):
            continue  # counted in its folder's line
        if relative not in dict(skipped):  # every file is listed with its reason, or read as its document
            assert docs[relative.rsplit(".", 1)[0]] == content, (relative, skipped)
    for path, reason in skipped:
        if path.endswith("/"):
            n = sum(1 for r in written if r.startswith(path))
            assert reason == f"hidden or system folder ({n} file{'s' * (n != 1)} not read)"


# --- chunk sizes ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def tokenizer():
    """The model's Hugging Face tokenizer (transformers imports torch: the tests that use it share one worker)."""
    return h.load_tokenizer()


WORDS = ("the battery charge lasts about sixty kilometres unbelievably Straße café 图书馆 🙂 --- e-07 don't "
         "supercalifragilistic 12,345.67 ~ # * >").split()


@st.composite
def texts(draw):
    """Random text: words, punctuation, emoji and CJK, with spaces, line breaks and paragraph breaks."""
    pieces = draw(st.lists(st.one_of(st.sampled_from(WORDS), st.text(min_size=1, max_size=12)), min_size=1, max_size=400))
    seps = draw(st.lists(st.sampled_from([" ", " ", " ", "\n", "\n\n", ""]), min_size=len(pieces), max_size=len(pieces)))
    return "".join(p + s for p, s in zip(pieces, seps))


@pytest.mark.slow  # over 5 s on the 2-core machine
@settings(max_examples=examples(120), deadline=None)
@given(texts(), st.integers(3, 600), st.data())
@pytest.mark.xdist_group("tokenizer")
def test_every_chunk_fits_the_window_for_random_texts_and_sizes(tokenizer, text, chunk_size, data):
    chunk_overlap = data.draw(st.integers(0, min(chunk_size - 3, 60)))
    chunks = h.split_into_chunks({"doc": text}, tokenizer, chunk_size, chunk_overlap)
    for chunk in chunks:
        assert chunk["n_tokens"] == len(tokenizer.encode(chunk["text"])) <= chunk_size, chunk


def paragraph(tokenizer, n_pieces: int) -> str:
    """One paragraph of Polder sentences, no line break, about ``n_pieces`` word pieces long."""
    sentences = [s.strip() + "." for doc in h.load_corpus().values() for s in doc.replace("\n", " ").split(".") if s.strip()]
    random.Random(0).shuffle(sentences)
    text = ""
    while len(tokenizer.encode(text, add_special_tokens=False)) < n_pieces:
        text += sentences.pop() + " "
    return text.strip()


@pytest.mark.xdist_group("tokenizer")
def test_long_unbroken_text_is_cut_into_chunks_close_to_the_size_asked(tokenizer):
    """The issue's case: a paragraph of about 1,600 word pieces at chunk_size=512 became 15 chunks of
    97-113 word pieces, because [CLS] and [SEP] were charged to every word the splitter measured."""
    text = paragraph(tokenizer, 1600)
    sizes = [c["n_tokens"] for c in h.split_into_chunks({"doc": text}, tokenizer, 512)]
    assert len(sizes) == 4 and max(sizes) <= 512, sizes
    assert min(sizes[:-1]) >= 0.9 * 512, sizes
    for chunk_size in (64, 128, 256):
        sizes = [c["n_tokens"] for c in h.split_into_chunks({"doc": text}, tokenizer, chunk_size)]
        assert max(sizes) <= chunk_size and min(sizes[:-1]) >= 0.9 * chunk_size, (chunk_size, sizes)


def _no_space(text: str) -> str:
    return re.sub(r"\s", "", text)


# Texts that leave the splitter no paragraph, line or space to cut at for long stretches: it must cut
# between word pieces (the tester's cases: a hyphenated chain gave 14 chunks of ~180 word pieces at
# chunk_size=512, "3.14159" * 500 gave 7 of 253-294, a base64 image 254-376).
UNBROKEN = {
    "hyphenated": lambda r, n: "-".join(r.choice(["alpha", "beta", "gamma", "delta", "kilometres"]) for _ in range(n)),
    "digits": lambda r, n: "".join(r.choice(["3.14159", "2,718", "0", "42", "1e-07"]) for _ in range(n)),
    "punctuation": lambda r, n: "".join(r.choice("!?.,;:-_*#~()[]{}<>/\\|'\"") for _ in range(3 * n)),
    "base64": lambda r, n: "![map](data:image/png;base64," + base64.b64encode(r.randbytes(3 * n)).decode() + ")",
    "url": lambda r, n: "https://example.com/" + "/".join(
        "".join(r.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(r.randint(5, 99))) for _ in range(n // 20 + 1)),
    "cjk": lambda r, n: "".join(chr(r.randint(0x4E00, 0x9FFF)) for _ in range(n)),
    "words": lambda r, n: " ".join(r.choice(WORDS[:9] + WORDS[11:12]) for _ in range(n)),
}


@pytest.mark.slow  # over 5 s on the 2-core machine
@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(sorted(UNBROKEN)), st.integers(0, 2**32), st.integers(50, 1500),
       st.sampled_from([64, 100, 128, 256, 384, 512]))
@pytest.mark.xdist_group("tokenizer")
def test_unbroken_text_of_any_kind_is_cut_into_full_chunks(tokenizer, kind, seed, n, chunk_size):
    """Every chunk fits the window, every chunk but the last is at least 90% of the size asked (the
    length the splitter adds up is the document's own word pieces, not pieces measured one by one),
    and the chunks are the document in order, nothing lost."""
    text = UNBROKEN[kind](random.Random(seed), n)
    chunks = h.split_into_chunks({"doc": text}, tokenizer, chunk_size)
    sizes = [c["n_tokens"] for c in chunks]
    assert all(c["n_tokens"] == len(tokenizer.encode(c["text"])) <= chunk_size for c in chunks), sizes
    assert min(sizes[:-1], default=chunk_size) >= 0.9 * chunk_size, (kind, sizes)
    assert _no_space("".join(c["text"] for c in chunks)) == _no_space(text)


@pytest.mark.parametrize("text, n_chunks", [
    ("-".join(["alpha", "beta", "gamma", "delta"] * 300), 5),  # 2,399 word pieces
    ("3.14159" * 500, 4),  # 2,000
])
@pytest.mark.xdist_group("tokenizer")
def test_the_testers_cases_give_chunks_near_512(tokenizer, text, n_chunks):
    sizes = [c["n_tokens"] for c in h.split_into_chunks({"doc": text}, tokenizer, 512)]
    assert len(sizes) == n_chunks and max(sizes) <= 512 and min(sizes[:-1]) >= 0.9 * 512, sizes


@pytest.mark.slow  # over 5 s on the 2-core machine
@settings(max_examples=examples(80), deadline=None)
@given(texts(), st.integers(3, 600))
@pytest.mark.xdist_group("tokenizer")
def test_the_chunks_are_the_document_in_order(tokenizer, text, chunk_size):
    """Whatever the text, the chunks hold every character but whitespace, once and in order."""
    chunks = h.split_into_chunks({"doc": text}, tokenizer, chunk_size)
    assert _no_space("".join(c["text"] for c in chunks)) == _no_space(text)
    cursor = 0
    for chunk in chunks:
        cursor = text.index(chunk["text"], cursor) + len(chunk["text"])  # each a part of the document, in order


@pytest.mark.xdist_group("tokenizer")
def test_chunk_overlap_shares_word_pieces_between_neighbours(tokenizer):
    text = paragraph(tokenizer, 600)
    plain = h.split_into_chunks({"doc": text}, tokenizer, 128)
    overlapping = h.split_into_chunks({"doc": text}, tokenizer, 128, chunk_overlap=20)
    assert len(overlapping) > len(plain)
    for first, second in zip(overlapping, overlapping[1:]):
        tail = " ".join(first["text"].split()[-3:])
        assert tail in " ".join(second["text"].split()[:30])  # the end of one chunk opens the next
    assert max(c["n_tokens"] for c in overlapping) <= 128


@pytest.mark.xdist_group("tokenizer")
def test_chunk_spans_place_overlapping_chunks_where_they_are(tokenizer):
    text = paragraph(tokenizer, 600)
    for overlap in (0, 20):
        chunks = h.split_into_chunks({"doc": text}, tokenizer, 128, chunk_overlap=overlap)
        spans = chunk_spans(text, chunks)
        full = h.normalise(text)
        assert list(spans) == [c["id"] for c in chunks]
        assert all(full[start:end] == h.normalise(c["text"]) for c, (start, end) in zip(chunks, spans.values()))
        starts, ends = [s for s, _ in spans.values()], [e for _, e in spans.values()]
        assert starts == sorted(starts) and starts[0] == 0 and ends[-1] == len(full)
        shared = [end - start for (_, end), (start, _) in zip(spans.values(), list(spans.values())[1:])]
        assert (max(shared) > 0) if overlap else (max(shared) < 0)  # overlap: the next chunk starts before the end


@pytest.mark.xdist_group("tokenizer")
def test_chunk_spans_refuse_a_chunk_of_another_document(tokenizer):
    chunks = [{"id": "a#00", "text": "first part"}, {"id": "b#00", "text": "not in this document"}]
    with pytest.raises(ValueError, match="chunk 'b#00' is not in its document after the chunk before it"):
        chunk_spans("first part and second part", chunks)


@pytest.mark.parametrize("chunk_size, chunk_overlap, message", [
    (2, 0, "chunk_size 2 leaves no room beside the model's 2 special and prefix tokens"),
    (0, 0, "chunk_size must be >= 1"),
    (128, 126, "chunk_overlap must be an integer from 0 to 125"),
    (128, -1, "chunk_overlap must be an integer from 0 to 125"),
    (128, 1.5, "chunk_overlap must be an integer"),
])
@pytest.mark.xdist_group("tokenizer")
def test_bad_chunk_sizes_are_refused(tokenizer, chunk_size, chunk_overlap, message):
    with pytest.raises(ValueError, match=message):
        h.split_into_chunks({"doc": "some text"}, tokenizer, chunk_size, chunk_overlap)


# --- files that are not plain documents: links, pipes, stubs ----------------------------------


def _in_time(seconds: int):
    """Fail, instead of hanging, when the call takes longer than ``seconds``."""
    def expired(*_):
        raise TimeoutError(f"load_corpus took longer than {seconds} s")
    signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)


def test_links_pipes_and_front_matter_are_read_once_or_listed(tmp_path):
    """The tester's cases: a dangling link stopped with FileNotFoundError, a link loop with ELOOP, a
    named pipe x.md made the loader wait forever, a link to a file of the folder was read as a second
    document (its evidence matched twice), a file of only front matter was read as a document."""
    corpus, outside = tmp_path / "corpus", tmp_path / "outside"
    write(corpus, "a.md", "Real text of a.")
    write(outside, "o.md", "Text kept outside the folder.")
    write(corpus, "only_front_matter.md", "---\ntitle: Gift cards\ntags: [draft]\n---\n")
    write(corpus, "toml.md", "+++\ntitle = 'x'\n+++\n\n")
    write(corpus, "with_body.md", "---\ntitle: y\n---\n\nThe body.\n")
    write(corpus, "rule.md", "---\n")  # a Markdown rule, not front matter: read (a chunk without a word)
    (corpus / "link_a.md").symlink_to("a.md")
    (corpus / "link_o.md").symlink_to(outside / "o.md")
    (corpus / "link_o_again.md").symlink_to(outside / "o.md")
    (corpus / "dangling.md").symlink_to("nowhere.md")
    (corpus / "loop1.md").symlink_to("loop2.md")
    (corpus / "loop2.md").symlink_to("loop1.md")
    os.mkfifo(corpus / "x.md")
    os.link(corpus / "a.md", corpus / "hard_a.md")
    skipped = []
    _in_time(20)
    try:
        docs = h.load_corpus(corpus, skipped)
    finally:
        signal.alarm(0)
    assert docs == {"a": "Real text of a.", "link_o": "Text kept outside the folder.", "rule": "---\n",
                    "with_body": "---\ntitle: y\n---\n\nThe body.\n"}
    assert dict(skipped) == {
        "dangling.md": "a link to nowhere.md, which does not exist",
        "hard_a.md": "the same file as a.md (a hard link), which is read once",
        "link_a.md": "a link to a.md, which is read once",
        "link_o_again.md": "a link to the same file as link_o.md, which is read once",
        "loop1.md": "a link in a loop (it leads back to itself)",
        "loop2.md": "a link in a loop (it leads back to itself)",
        "only_front_matter.md": "only front matter (a block of metadata at the top) and no text",
        "toml.md": "only front matter (a block of metadata at the top) and no text",
        "x.md": "a named pipe (FIFO), not a file: only files are read",
    }


def test_files_and_folders_that_cannot_be_opened_are_listed(tmp_path, monkeypatch):
    """No permission (simulated: the tests may run as root, who reads everything)."""
    from retrieval_eval.inputs import corpus

    write(tmp_path, "a.md", "text")
    write(tmp_path, "secret.md", "no access")
    write(tmp_path, "locked/b.md", "no access")
    real_read, real_scandir = corpus.read_text, os.scandir

    def read_text(path, name=None):
        if path.name == "secret.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real_read(path, name)

    def scandir(path="."):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(corpus, "read_text", read_text)
    monkeypatch.setattr(os, "scandir", scandir)
    skipped = []
    assert h.load_corpus(tmp_path, skipped) == {"a": "text"}
    assert dict(skipped) == {"locked/": "a folder that cannot be opened (Permission denied)",
                             "secret.md": "cannot be read (Permission denied)"}


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["link", "hard link", "dangling", "loop", "pipe", "file"]),
                          st.sampled_from(["a", "b", "c", "d"])), min_size=1, max_size=8))
def test_every_file_is_read_once_or_listed_whatever_links_and_pipes_it_holds(tmp_path_factory, plan):
    """Each file of the folder is read once: every path is a document or listed with its reason, and
    no text is read twice; nothing hangs."""
    corpus = tmp_path_factory.mktemp("corpus")
    write(corpus, "base.md", "The base document.")
    for i, (kind, target) in enumerate(plan):
        path = corpus / f"{i}_{target}.md"
        if kind == "link":
            path.symlink_to("base.md" if target in "ab" else corpus.parent / "elsewhere.md")
        elif kind == "hard link":
            os.link(corpus / "base.md", path)
        elif kind == "dangling":
            path.symlink_to(f"missing_{i}.md")
        elif kind == "loop":
            path.symlink_to(path.name)
        elif kind == "pipe":
            os.mkfifo(path)
        else:
            write(corpus, path.name, f"Text {i}.")
    write(corpus.parent, "elsewhere.md", "Outside.")
    skipped = []
    _in_time(20)
    try:
        docs = h.load_corpus(corpus, skipped)
    finally:
        signal.alarm(0)
    names = {p.name for p in corpus.iterdir()}
    assert {f"{d}.md" for d in docs} | set(dict(skipped)) == names and not {f"{d}.md" for d in docs} & set(dict(skipped))
    texts = list(docs.values())
    assert texts.count("The base document.") == 1 and texts.count("Outside.") <= 1


# --- stored chunks only for the documents they were made from -------------------------------------


def test_stored_chunks_are_used_only_for_the_documents_they_were_made_from(docs, chunks):
    """The tester's case: with data/corpus/11_gift_cards.md added, the 34 stored chunks were used
    although the folder had 11 documents, and a question on the new file said "cut by a chunk
    boundary between chunks []"."""
    assert stored_chunks_differ(docs, chunks) is None
    added = {**docs, "11_gift_cards": "Gift cards are valid for three years from the day of purchase."}
    assert stored_chunks_differ(added, chunks) == "11 documents, the stored chunks name 10; new: 11_gift_cards"
    with pytest.warns(UserWarning, match=r"chunks.jsonl was not made from the documents of .*corpus \(11 documents, "
                                         r"the stored chunks name 10; new: 11_gift_cards\): they are chunked now"):
        fresh = stored_or_split_chunks(added, CORPUS_DIR, progress=False)
    assert fresh == h.split_into_chunks(added, h.load_tokenizer())
    assert fresh[-1]["doc"] == "11_gift_cards"
    edited = dict(docs)
    edited["03_battery_care"] = edited["03_battery_care"].replace("battery", "accu", 1)
    removed = {d: t for d, t in docs.items() if d != "10_faq"}
    assert stored_chunks_differ(edited, chunks) == "document '03_battery_care' changed"
    assert stored_chunks_differ(removed, chunks) == "9 documents, the stored chunks name 10; gone: 10_faq"
    spaced = {d: "\n\n" + t + " \n" for d, t in docs.items()}  # whitespace around the chunks only
    assert stored_chunks_differ(spaced, chunks) is None


@settings(max_examples=examples(40), deadline=None)
@given(st.sampled_from(["insert", "delete", "replace"]), st.integers(0, 10**6), st.sampled_from("xyz.?7"))
def test_any_edit_of_a_document_outside_whitespace_is_seen(docs, chunks, edit, where, char):
    doc = sorted(docs)[where % len(docs)]
    text = docs[doc]
    spots = [i for i, c in enumerate(text) if not c.isspace()]
    i = spots[where % len(spots)]
    changed = {"insert": text[:i] + char + text[i:], "delete": text[:i] + text[i + 1:],
               "replace": text[:i] + ("q" if text[i] == char else char) + text[i + 1:]}[edit]
    assert stored_chunks_differ({**docs, doc: changed}, chunks) == f"document {doc!r} changed"


def test_evidence_in_a_document_but_in_none_of_its_chunks_says_so(docs, chunks, golden):
    """Never "between chunks []": with chunks of another version of a document, the message says so."""
    new_text = docs["03_battery_care"] + "\n\nGift cards are valid for three years from the day of purchase."
    question = golden.iloc[[0]].assign(evidence="valid for three years from the day of purchase")
    with pytest.raises(GoldenSetError) as err:
        h.label_chunks(question, chunks, {**docs, "03_battery_care": new_text})
    assert "is in the document '03_battery_care' but in none of its chunks" in str(err.value)
    assert "between chunks []" not in str(err.value)


@pytest.mark.slow  # over 5 s on the 2-core machine
def test_chunking_now_reads_tokenizer_json_and_gives_the_chunks_of_the_transformers_tokenizer():
    """stored_or_split_chunks uses the tokenizers library on the model's tokenizer.json (no torch):
    the chunks are those of split_into_chunks with load_tokenizer's tokenizer, word piece for word piece."""
    import subprocess
    import sys

    docs = h.load_corpus()
    for size, overlap in [(128, 19), (256, 0)]:
        assert stored_or_split_chunks(docs, chunk_size=size, chunk_overlap=overlap, progress=False) == \
            h.split_into_chunks(docs, h.load_tokenizer(), size, overlap)
    code = ("import sys, helpers as h; from retrieval_eval.inputs.chunks import stored_or_split_chunks; "
            "stored_or_split_chunks(h.load_corpus(), chunk_size=256, progress=False); "
            "print('torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_a_long_document_is_chunked_a_section_at_a_time_at_paragraph_breaks(monkeypatch):
    """Over SECTION_CHARS characters, a document is tokenized a section at a time (bounded memory, a progress bar):
    each section cut at a paragraph break, its chunks those of the section alone, none spanning two, in order."""
    paragraphs = [" ".join(f"w{p}x{i}" for i in range(40)) for p in range(30)]
    text = "\n\n".join(paragraphs)
    monkeypatch.setattr(chunks_module, "SECTION_CHARS", 2_000)
    sections = chunks_module._sections(text)
    assert len(sections) > 3 and "".join(sections) == text and all(len(s) <= 2_000 for s in sections)
    assert all(b.startswith("\n\n") for b in sections[1:])  # cut at a paragraph break
    tokenizer = fast_tokenizer(None)
    long = h.split_into_chunks({"d": text}, tokenizer, 64)
    alone = [c["text"] for s in sections for c in h.split_into_chunks({"d": s}, tokenizer, 64)]
    assert [c["text"] for c in long] == alone and [c["id"] for c in long] == [f"d#{i:02d}" for i in range(len(long))]
    assert all(c["n_tokens"] <= 64 for c in long) and " ".join(c["text"] for c in long).split() == text.split()
    monkeypatch.setattr(chunks_module, "SECTION_CHARS", 10**6)  # a document under the limit: one section, as before
    assert chunks_module._sections(text) == [text]
