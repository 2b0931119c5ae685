"""Invariant: pipeline.core.wording is the one vocabulary of the rules that read documentation. Its
tokenisers, stemmers and stop lists read words the way each rule was measured with, and no other module of
the stages or the kernel defines a stemmer, a stop list or R's storage-type boilerplate of its own."""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.core.wording import (FUNCTION_WORDS, GENERIC_ENTRY, LEADING_TYPE, TRAILING_TYPE, TYPE_PREAMBLE,
                                   alnum_words, cased_words, inflects, letter_words, plural_stem, prefix_stem,
                                   singular, suffix_stem, whole_name)

ROOT = Path(__file__).resolve().parents[3]


def test_tokenisers_split_camel_case_and_keep_what_their_rules_read():
    assert letter_words("TotalPrice ride.alc.driver x1") == ["total", "price", "ride", "alc", "driver", "x"]
    assert alnum_words("Lot_Area pm2.5 x1") == ["lot", "area", "pm2.5", "x1"]
    assert cased_words("GDP perCapita driver's") == ["G", "D", "P", "per", "Capita", "driver's"]


def test_each_stemmer_meets_the_forms_its_rules_join_and_no_more():
    assert plural_stem("wages") == "wage" and plural_stem("class") == "class" and plural_stem("bus") == "bus"
    assert prefix_stem("diabetic") == prefix_stem("diabetes") == "diabet"
    assert suffix_stem("speeding") == suffix_stem("speed") and suffix_stem("absenteeism") == suffix_stem("absent")
    assert suffix_stem("levels") == suffix_stem("level") and suffix_stem("driver's") == suffix_stem("drivers")
    assert singular("fatalities") == "fatality" and singular("crimes") == "crime" and singular("taxes") == "tax"
    assert singular("consumer") != singular("consumption")
    assert inflects("tip", "tipping") and inflects("vote", "voting") and not inflects("cls", "classes")


def test_storage_type_boilerplate_is_read_the_same_by_every_rule():
    assert GENERIC_ENTRY.match("a numeric vector") and GENERIC_ENTRY.match("An ordered factor.")
    assert not GENERIC_ENTRY.match("a numeric vector of glucose levels")
    assert TYPE_PREAMBLE.sub("", "a numeric vector of glucose levels", count=1).strip() == "glucose levels"
    assert LEADING_TYPE.sub("", "a numeric vector giving the weight").strip() == "the weight"
    assert TRAILING_TYPE.sub("", "x coordinate, a numeric vector") == "x coordinate"
    assert "the" in FUNCTION_WORDS and "number" not in FUNCTION_WORDS


def test_a_whole_name_set_matches_whole_names_only():
    assert whole_name(("sale_?price", "y")).match("SalePrice") and whole_name(("y",)).match("Y")
    assert not whole_name(("y",)).match("yield")


# A stemmer, a stop list or a storage-type regex defined outside the vocabulary: the shapes the four
# stemmers, three stop lists and three boilerplate regexes had before they moved here.
_OWN_VOCABULARY = re.compile(r"^def _?(stem|singular|\w*_stem)\(|^_?\w*STOP\w* = frozenset|"
                             r"^\w+ = re\.compile\(.*\(numeric\|integer", re.M)


def test_no_stage_or_kernel_module_brings_its_own_vocabulary():
    offenders = [f"{path.relative_to(ROOT)}: {m.group(0)}"
                 for folder in ("pipeline/core", "sourcing", "task_design", "postprocess", "finalize")
                 for path in sorted((ROOT / folder).rglob("*.py")) if path.name != "wording.py"
                 for m in _OWN_VOCABULARY.finditer(path.read_text())]
    assert offenders == []
