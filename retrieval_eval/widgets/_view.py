"""What the three widgets share: the view base class and how figures and tables are drawn into widgets.

Figures are static matplotlib figures redrawn into ``Output`` widgets as PNGs (no ipympl): plain
ipywidgets only, for portability across front ends (tested in JupyterLab 4).
"""

from __future__ import annotations

import base64
import io

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display


class WidgetView:
    """Base of the three widgets: ``ui`` is the ipywidgets box; displaying shows it, then a static copy.

    Taught in: notebook 07_widgets.
    """

    label = "widget"
    ui = None

    def static_fallback(self) -> list:
        """Objects to display below the widget (tables, HTML, figures).

        Taught in: notebook 07_widgets.
        """
        raise NotImplementedError

    def _ipython_display_(self):

        bundle = self.ui._repr_mimebundle_()
        bundle["text/plain"] = f"[{self.label}: a live widget; run the notebook to use it. A static copy follows.]"
        display(bundle, raw=True)
        display(Markdown(f"*Static copy of the {self.label} at its starting values, for GitHub, nbviewer "
                         "and editors without widgets:*"))
        for item in self.static_fallback():
            display(item)
            if isinstance(item, plt.Figure):
                plt.close(item)


def check_start(value, name: str, allowed: range) -> int:
    """A slider's starting value, refused (ValueError naming it and the range) when the slider cannot show it.

    ipywidgets moves a value outside ``min``..``max`` into the range without a word; a widget
    would then show another k than the one asked for.

    Taught in: notebook 07_widgets.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value not in allowed:
        raise ValueError(f"{name} = {value!r} is outside the slider's range {allowed.start} to {allowed[-1]}")
    return int(value)


def figure_png(fig) -> str:
    """A matplotlib figure as base64 PNG text (the form notebook outputs hold); closes the figure.

    Taught in: notebook 07_widgets.
    """


    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def redraw(output, fig) -> None:
    """Replace what an Output widget shows with a static PNG of the figure.

    The ``outputs`` trait is set directly instead of capturing ``display`` inside ``with output``:
    the swap is atomic (no flicker), works without a kernel (tests), and nbclient 0.11 raises
    ``KeyError`` on captured output when widget state is not stored (as in ``make notebooks``).

    Taught in: notebook 07_widgets.
    """
    text = repr(fig)
    output.outputs = ({"output_type": "display_data", "metadata": {},
                       "data": {"image/png": figure_png(fig), "text/plain": text}},)


def table_html(table: pd.DataFrame, **to_html) -> str:
    """A DataFrame as HTML for an HTML widget, styled like notebook tables in JupyterLab.

    Taught in: notebook 07_widgets.
    """
    body = table.to_html(border=0, index_names=False, **to_html).replace("<table ", "<table style='margin-left:0' ", 1)
    return f"<div class='jp-RenderedHTMLCommon'>{body}</div>"
