"""The classroom widgets, one module each: pure functions that tests call without a browser, and a thin
ipywidgets view over them; :mod:`._view` holds what the views share."""
