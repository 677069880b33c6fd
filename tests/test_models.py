"""retrieval_eval/inputs/models.py: the model fingerprint follows the model's content, and so does the embedding cache."""

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

from retrieval_eval.core.errors import ModelFileError
from retrieval_eval.inputs.models import load_model, load_tokenizer, model_fingerprint, unknown_only
from retrieval_eval.retrieval.retrievers import VectorRetriever


def flip_last_byte(path):
    """Change one byte of a file in place (its size stays the same)."""
    with open(path, "r+b") as f:
        f.seek(-1, 2)
        last = f.read(1)[0]
        f.seek(-1, 2)
        f.write(bytes([last ^ 1]))


def test_fingerprint_is_the_content_not_the_path(model_copy):
    original = model_fingerprint()
    assert model_fingerprint(str(model_copy)) == original  # the same files at another path
    flip_last_byte(model_copy / "model.safetensors")
    changed = model_fingerprint(str(model_copy))
    assert changed != original
    (model_copy / "tokenizer_config.json").write_bytes((model_copy / "tokenizer_config.json").read_bytes() + b" ")
    assert model_fingerprint(str(model_copy)) not in {original, changed}


def test_a_hub_name_without_a_local_snapshot_is_fingerprinted_by_its_name():
    assert model_fingerprint("BAAI/bge-small-en-v1.5") == model_fingerprint("BAAI/bge-small-en-v1.5")
    assert model_fingerprint("BAAI/bge-small-en-v1.5") != model_fingerprint("BAAI/bge-base-en-v1.5")


def fake_hub_snapshot(cache, name, revision, weights):
    """Lay out a model in a Hugging Face cache folder as the hub client does: refs/main -> snapshots/<revision>/."""
    repo = cache / f"models--{name.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(revision)
    snapshot = repo / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (snapshot / "model.safetensors").write_bytes(weights)


def test_a_hub_name_with_a_local_snapshot_follows_its_content(tmp_path, monkeypatch):
    """A new revision of a hub model in the local cache gets a new fingerprint (no stale vectors or rankings)."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    fake_hub_snapshot(tmp_path, "org/model", "a" * 40, b"old weights")
    old = model_fingerprint("org/model")
    assert old != model_fingerprint("org/other")  # not fingerprinted by a name alone
    fake_hub_snapshot(tmp_path, "org/model", "b" * 40, b"new weights")
    assert model_fingerprint("org/model") != old


@pytest.mark.slow
def test_new_weights_saved_at_the_same_path_get_new_vectors(chunks, model_copy, tmp_path):
    """A model re-saved at the same path with new weights must not reuse the old model's cached vectors."""
    cache = tmp_path / "embeddings"
    before = VectorRetriever(chunks[:3], model_name=str(model_copy), cache_dir=cache)
    weights = model_copy / "model.safetensors"
    with safe_open(weights, "np") as f:
        metadata = f.metadata()
    tensors = load_file(weights)
    tensors["embeddings.LayerNorm.bias"] = tensors["embeddings.LayerNorm.bias"] + np.float32(0.05)
    save_file(tensors, weights, metadata=metadata)
    after = VectorRetriever(chunks[:3], model_name=str(model_copy), cache_dir=cache)
    assert after.cache_folder != before.cache_folder
    assert sorted(p.name for p in cache.iterdir()) == sorted([before.cache_folder.name, after.cache_folder.name])
    assert not np.allclose(after.embeddings, before.embeddings)
    fresh = after.model.encode([c["text"] for c in chunks[:3]], normalize_embeddings=True, show_progress_bar=False)
    assert np.allclose(after.embeddings, fresh, atol=1e-6)  # the new model's vectors, not the old ones


# --- damaged model files: one line naming the file, where the model is loaded too -----------------


@pytest.mark.slow
def test_a_truncated_weights_file_is_one_line_where_the_model_is_loaded(chunks, model_copy, tmp_path):
    """The tester's case: a truncated model.safetensors gave a 63-line SafetensorError after chunking."""
    weights = model_copy / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    for load in (lambda: load_model(str(model_copy)),
                 lambda: VectorRetriever(chunks[:3], model_name=str(model_copy), cache_dir=tmp_path)):
        try:
            load()
        except ModelFileError as exc:
            message = str(exc)
        else:
            raise AssertionError("a truncated weights file was loaded")
        assert f"the weights file {weights} is damaged (SafetensorError: " in message and "\n" not in message


@pytest.mark.slow
def test_a_model_that_cannot_be_built_from_its_files_is_one_line(model_copy):
    """A damage the header check cannot see (a configuration that does not fit the weights)."""
    config = model_copy / "config.json"
    config.write_text(config.read_text().replace('"hidden_size": 384', '"hidden_size": 512'))
    try:
        load_model(str(model_copy))
    except ModelFileError as exc:
        assert str(exc).startswith(f"the model {model_copy} cannot be loaded (") and "\n" not in str(exc)
    else:
        raise AssertionError("a model whose configuration does not fit its weights was loaded")


# --- text the model reads as unknown tokens only -------------------------------------------------


def test_text_the_model_reads_as_unknown_tokens_only_is_named():
    """The tester's case: all-MiniLM reads Thai, Khmer, Myanmar and emoji chunks as [UNK] only, so they all get
    the same vector and vector search ranks them by the tie rule alone, silently."""
    texts = {"thai": "สวัสดีครับ ยินดีต้อนรับ", "khmer": "សួស្តី", "myanmar": "မင်္ဂလာပါ", "emoji": "😀 🎉 👍",
             "english": "Opening hours", "mixed": "Hours: สวัสดี", "blank": " "}
    assert unknown_only(texts) == ["thai", "khmer", "myanmar", "emoji"]


@pytest.mark.slow
def test_unknown_only_reads_as_transformers_own_tokenizer():
    texts = {"thai": "สวัสดีครับ ยินดีต้อนรับ", "khmer": "សួស្តី", "myanmar": "မင်္ဂလာပါ", "emoji": "😀 🎉 👍"}
    tokenizer = load_tokenizer()  # transformers' own tokenizer (imports torch: seconds)
    for key in unknown_only(texts):  # as transformers' own tokenizer reads them, special tokens left out
        assert set(tokenizer(texts[key], add_special_tokens=False)["input_ids"]) == {tokenizer.unk_token_id}
