"""retrieval_eval/widgets/_view.py: every widget has a static fallback, and the committed notebook 07 shows them."""

import json
from pathlib import Path

import matplotlib
import pandas as pd

import helpers as h

matplotlib.use("Agg")

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "07_widgets.ipynb"


def test_every_widget_has_a_static_fallback(ceiling, runs, qrels, golden, chunks):
    import matplotlib.pyplot as plt

    for widget in (ceiling, h.ranks_widget(runs, qrels, golden, chunks), h.playground_widget()):
        items = widget.static_fallback()
        assert items and any(isinstance(i, (plt.Figure, pd.DataFrame)) for i in items), widget.label
        for item in items:
            if isinstance(item, plt.Figure):
                plt.close(item)


def test_committed_widget_notebook_has_no_widget_state_and_shows_fallbacks():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert "widgets" not in nb["metadata"], "saved widget state breaks rendering on GitHub: run `make notebooks`"
    widget_cells = [c for c in nb["cells"] if c["cell_type"] == "code" and "_widget(" in "".join(c["source"])]
    assert len(widget_cells) == 3
    for cell in widget_cells:
        kinds = [kind for output in cell["outputs"] for kind in output.get("data", {})]
        assert kinds[0] == "application/vnd.jupyter.widget-view+json"
        assert "image/png" in kinds or kinds.count("text/html") >= 1, "".join(cell["source"])
