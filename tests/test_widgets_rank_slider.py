"""retrieval_eval/widgets/rank_slider.py: reciprocal rank, with and without the cut-off, from the registry."""

import pytest

import helpers as h
from retrieval_eval.course.widgets.rank_slider import rank_bars_html, rank_slider_scores


def test_every_rank_and_cut_off_gives_the_reciprocal_rank():
    for rank in range(1, 11):
        for k in range(1, 11):
            scores = rank_slider_scores(rank, k)["scores"]
            assert scores == {"RR": 1 / rank, f"RR@{k}": 1 / rank if rank <= k else 0.0}


def test_hidden_bars_are_slots_and_shown_bars_are_one_over_rank():
    hidden, shown = rank_bars_html(4, 3, 10, False), rank_bars_html(4, 3, 10, True)
    assert "1/4" not in hidden and hidden.count(">?<") == 10
    assert "1/4" in shown and "height:38px" in shown and "repeating-linear-gradient" in shown  # past k: hatched


def test_moving_the_relevant_result_lists_both_changes():
    slider = h.rank_slider_widget(rank=3, k=3)
    slider.rank.value = 4
    assert "→" not in slider.change.value and "0.250" not in slider.readout.value
    slider.reveal.value = True
    assert slider.moved() == {"RR": "0.333 → 0.250", "RR@k": "0.333 → 0.000"}
    assert "1 / 4 = 0.250" in slider.readout.value and "the LLM never sees it" in slider.readout.value


def test_rank_slider_refuses_bad_input():
    with pytest.raises(ValueError, match="rank must be an integer from 1 to n = 10, got 11"):
        rank_slider_scores(11, 3)
    with pytest.raises(ValueError, match="rank must be an integer from 1 to n = 10, got True"):
        rank_slider_scores(True, 3)
    with pytest.raises(ValueError, match="k must be >= 1"):
        rank_slider_scores(1, 0)
    with pytest.raises(ValueError, match=r"k = 11 is outside the slider's range 1 to 10"):
        h.rank_slider_widget(k=11)
