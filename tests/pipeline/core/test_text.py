"""A text shortened for display is cut only between words, never inside a word or a number, and says so with an
ellipsis; one that fits is left whole."""

from __future__ import annotations

import pytest

from pipeline.core.text import ELLIPSIS, shorten, shorten_cause


@pytest.mark.parametrize("text, width, expected", [
    ("a measured numerical variable", 40, "a measured numerical variable"),
    ("a measured numerical variable", 24, "a measured numerical…"),
    ("(score -0.75: a measured numerical variable)", 16, "(score -0.75: a…"),
    ("(score -0.75: a measured numerical variable)", 15, "(score -0.75…"),
    ("every reference baseline (XF and CF) scores R² 0: nothing forecastable", 57,
     "every reference baseline (XF and CF) scores R² 0…"),
    ("hello world", 10, "hello…"),
    ("versailles has 1 rows (< 30)", 26, "versailles has 1 rows…"),
    ("model response in glm(los ~ age)", 28, "model response in glm(los…"),
    ("supercalifragilistic words", 8, "supercalifragilistic…"),  # one long word: whole
])
def test_shortened_between_words(text, width, expected):
    assert shorten(text, width) == expected


def test_no_cut_leaves_a_fragment_of_a_word_or_a_number():
    text = "top-ranked outcome 'tip' not learnable: out-of-fold macro-F1 0.1234 is not 0.05 above the trivial 0.5"
    for width in range(1, len(text) + 2):
        short = shorten(text, width)
        if short == text:
            continue
        assert short.endswith(ELLIPSIS)
        kept = short[: -len(ELLIPSIS)]
        assert text.startswith(kept) and text[len(kept)] in " ,;:([{", (width, short)


def test_an_error_is_its_first_line_shortened():
    assert shorten_cause(ValueError("first line is long enough\nsecond"), 15) == "first line is…"


def test_value_repr_quotes_numpy_scalars_as_python_values() -> None:
    import numpy as np

    from pipeline.core.text import value_repr

    assert [value_repr(v) for v in (np.int64(5), np.float64(2.5), np.str_("a"), np.bool_(True), "b", None)] == [
        "5", "2.5", "'a'", "True", "'b'", "None"]
