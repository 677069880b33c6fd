"""How many random cases a property test draws: as written for ``make test``; a fifth of them (at least five) for
``make test-fast``, which sets ``HYPOTHESIS_PROFILE=fast`` (conftest.py loads that profile)."""

import os

FAST = os.environ.get("HYPOTHESIS_PROFILE") == "fast"


def examples(n: int) -> int:
    return max(5, n // 5) if FAST else n
