"""The one vocabulary of every rule that reads documentation: its tokenisers, stemmers, stop lists and
named word sets. Kernel: imports nothing else of the project. A rule never brings its own (docs/style.md,
"Rules that read documentation"); it names what it needs from here.

Where two rules read words differently, the difference is kept as a named variant below, with the reason,
so that moving them here changed no decision: the built-in corpus's text evidence (study subjects, fallback
scores, outcome readings, roles, ranked targets and question_v1's column references) is the same before and
after. Merging two variants is a rule change, measured by the golden target file like any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# ---------------------------------------------------------------------------------------------- tokenisers
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_LETTERS = re.compile(r"[a-z]+")
# A word with its decimals ("pm2.5"), as a column's description and name spell it in metadata.txt.
_ALNUM = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
# A capitalised or lower-case word with its apostrophe ("driver's"). Its second branch never matches, since the
# first takes every capital on its own ("GDP": G, D, P); kept as study subjects were measured with it.
_CASED = re.compile(r"[A-Za-z][a-z']*|[A-Z]+(?![a-z])")


def split_camel(text: str) -> str:
    """`DaysDrink` -> "Days Drink": camelCase parts spaced apart."""
    return _CAMEL.sub(" ", text)


def letter_words(text: str) -> list[str]:
    """The lower-case runs of letters of a text or a column name, camelCase split (`TotalPrice`: total,
    price; `ride.alc.driver`: ride, alc, driver). Digits and punctuation separate words."""
    return _LETTERS.findall(split_camel(text).lower())


def alnum_words(text: str) -> list[str]:
    """Lower-case words with their digits and decimals, camelCase and snake_case split: how question_v1's
    column references (pipeline.core.column_refs) read metadata.txt, where `x1` and "pm2.5" are words."""
    return _ALNUM.findall(split_camel(text).lower().replace("_", " "))


def cased_words(text: str) -> list[str]:
    """Words in their own case, camelCase split, an apostrophe kept ("driver's"), each capital of an acronym
    a word of its own ("GDP": G, D, P; words under three letters are dropped by their readers): how study
    subjects (task_design.study_subject) read a title beside a column's name."""
    return _CASED.findall(split_camel(text))


# ----------------------------------------------------------------------------------------------- stemmers
# Three ways to meet a word's other forms, each the one its rules were measured with:
# - plural_stem: a plural's s only ("wages"/"wage", never "class"/"clas"): question_v1's references, where a
#   wrong merge names the wrong column;
# - prefix_stem: the plural stem cut to 6 letters ("diabetic"/"diabetes"): a title's words beside a
#   column's name or description (task_design.targets);
# - suffix_stem: one derivational suffix off, then 6 letters ("speeding"/"speed", "absenteeism"/"absent"):
#   a study's phrase beside a candidate's name or description head (task_design.study_subject);
# - singular: a plural ending off, the word kept whole ("fatalities"/"fatality"; "consumer" stays apart from
#   "consumption"): a short panel's title head noun (task_design.study_subject.panel_subject).
# Replacing one by another moves targets of the corpus (the wider stems join words the others keep apart).
STEM_LENGTH = 6
SUFFIXES = ("ations", "ation", "ingly", "ness", "ings", "ing", "ism", "ers", "ies", "ed", "er", "es", "s", "e")
# The endings an inflected word adds to a name's word (`tip` and "Tipping", `vote` and "voting").
INFLECTIONS = ("", "s", "es", "ing", "ed", "er", "ers", "ion", "ions")


def plural_stem(word: str) -> str:
    """A plural's final s dropped ("wages": wage), never from "ss" ("class") or a word of three letters."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def prefix_stem(word: str) -> str:
    """The plural stem's first STEM_LENGTH letters: "diabetic" and "diabetes" meet as "diabet"."""
    return plural_stem(word)[:STEM_LENGTH]


def suffix_stem(word: str) -> str:
    """A word's stem for matching across inflections: "speeding"/"speed", "absenteeism"/"absent",
    "driver's"/"drivers", "levels"/"level" (one suffix off, then at most STEM_LENGTH letters)."""
    w = word.lower().removesuffix("'s").strip("'")
    for suffix in SUFFIXES:
        # "speed" is no past tense: "ed" leaves four letters at least.
        if w.endswith(suffix) and len(w) - len(suffix) >= (4 if suffix == "ed" else 3):
            w = w[: -len(suffix)]
            break
    return w[:STEM_LENGTH]


def singular(word: str) -> str:
    """A word without its plural ending, whole (no stem): "fatalities"/"fatality", "crimes"/"crime"; unlike
    suffix_stem, "consumer" stays apart from "consumption"."""
    w = word.lower().removesuffix("'s")
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "ches", "shes")):
        return w[:-2]
    # No length floor, unlike plural_stem: a title head is a noun of four letters or more (title_head).
    return w[:-1] if w.endswith("s") and not w.endswith("ss") else w


def inflects(word: str, other: str) -> bool:
    """`other` is `word` with an inflection's ending (INFLECTIONS), its last letter doubled or a final "e"
    dropped: `tip` and "tipping", `vote` and "voting"; not `cls` and "classes"."""
    return any(other in (stem + end, stem + stem[-1] + end) for stem in (word, word[:-1] if word.endswith("e")
                                                                          else word) for end in INFLECTIONS)


# ---------------------------------------------------------------------------------------------- stop lists
# Words that say nothing about which column is meant: question_v1's references drop them before comparing a
# description's phrase with every column's words. Function words only: "number" or "data" may be the one
# word that tells two columns apart there.
FUNCTION_WORDS = frozenset(
    "a an the of in on at by for to from with and or as is are was were be been its it this that these those "
    "per each which who whom whose than into over under".split())
# Words that name the kind of data or a sentence's frame, never a measured quantity: a study's phrase and a
# candidate's name or description head (task_design.study_subject) share none of them. Read only on words
# of three letters or more.
FRAME_WORDS = frozenset({
    "the", "and", "for", "with", "from", "that", "this", "these", "those", "into", "data", "dataset", "set",
    "study", "studies", "survey", "sample", "samples", "measurement", "measurements", "information", "record",
    "records", "table", "variable", "variables", "number", "numbers", "numeric", "vector", "factor", "value",
    "values", "certain", "some", "each", "other", "their", "its", "has", "have", "had", "was", "were", "been",
    "who", "whether", "not", "or", "per", "about", "between", "over", "time", "year", "years", "effect",
    "effects", "having", "ever", "one", "two", "all", "any", "new", "old", "total", "average", "mean", "type",
    # A factor's description lists its levels ("an ordered factor with levels 2am < 6am"): no quantity.
    "level", "levels",
    # How the data were collected: "Field data on lizards observed in their natural habitat" and `site`,
    # "Site of lizard observation", where the study measured their sunlight.
    "observed", "observation", "observations", "collected", "recorded",
})
# Title words that name the kind of data, not what it studies (task_design.targets: a title's words beside a
# column's). Read only on words of four letters or more, so no short function word is listed.
TITLE_FRAME_WORDS = frozenset({
    "data", "dataset", "datasets", "study", "studies", "survey", "panel", "sample", "about", "measurements",
    "measures", "information", "united", "states", "national", "their", "after", "before", "between", "which",
    "there", "where", "other", "these", "those", "reduce", "factors", "effect", "effects", "table", "series",
    "years", "annual", "from", "with", "year", "time", "name", "type", "some", "each", "more", "than", "over"})
# Column names that every title shares without naming a column ("Data on ...", "... Rates").
NOT_TOPICS = frozenset({"data", "rate", "value", "number", "total"})
# The data's frame in a title that is one noun phrase, never its head noun ("Gapminder data").
HEAD_FRAME_WORDS = frozenset({"data", "dataset", "datasets", "panel", "set", "table", "sample", "survey", "study",
                              "series", "file", "example", "information", "version", "the", "a", "an"})
# Words of a column name too generic to say that a description speaks of that column ("TotalPrice": only
# "price" does; task_design.identity).
GENERIC_NAME_WORDS = frozenset({"total", "number", "count", "rate", "value", "mean", "index", "level", "ratio",
                                "share", "change", "amount", "score", "data", "year", "time", "price1", "price2"})


# ------------------------------------------------------------------------ R's storage-type boilerplate
# R documentation opens a column's entry with its storage type ("a numeric vector", "Factor.", "an ordered
# factor giving ..."), which says nothing of what the column means. Each rule below reads it its own way;
# the storage types are one list.
STORAGE_TYPES = ("numeric", "integer", "double", "character", "logical")
_TYPES = "|".join(STORAGE_TYPES)
# An entry that is its storage type and nothing else ("a numeric vector", "a factor").
GENERIC_ENTRY = re.compile(rf"^\W*(an? )?({_TYPES}|factor|ordered factor)( vector| variable| column)?\W*$", re.I)
# The type preamble of an entry, before what it measures ("a numeric vector of glucose levels", "an ordered
# factor giving ...", "1=rode with ...").
TYPE_PREAMBLE = re.compile(rf"^\W*(?:(?:an? )?(?:{_TYPES}|factor|ordered factor)"
                           r"(?: vector| variable| column)?(?: (?:of|giving|with|for|indicating))?(?: the)?\b"
                           r"|\d+\s*=)", re.I)
# The storage type an entry opens with, as question_v1's phrases cut it ("a numeric vector giving ...");
# a factor's level list is cut by its own pattern (pipeline.core.column_refs).
LEADING_TYPE = re.compile(rf"^(an? )?({_TYPES})( vector| variable)?[\s.:,;-]*"
                          r"((with|giving|indicating|coded)\b[\s:]*)?", re.I)
# "x coordinate, a numeric vector": the storage type said after the meaning.
TRAILING_TYPE = re.compile(rf"[,;]\s*(an? )?({_TYPES}) (vector|variable)\b.*$", re.I)


# ----------------------------------------------------------------------------------------- named word sets
def whole_name(words: Iterable[str]) -> re.Pattern[str]:
    """A column name that is one of `words` (regular-expression fragments: "sale_?price"), any case."""
    return re.compile(rf"^({'|'.join(words)})$", re.I)


# Names of an outcome a study measures, read by the fallback's score (task_design.targets.fallback_score).
OUTCOME_NAMES = (
    "y", "target", "label", "labels", "class", "outcome", "response", "result", "diagnosis", "survived", "survival",
    "default", "churn", "price", "saleprice", "sale_price", "medv", "salary", "wage", "wages", "income", "earnings",
    "yield", "score", "quality", "rating", "species", "status", "success", "died", "death", "mortality",
    "disease", "cancer", "diabetes", "fraud", "spam", "win", "won", "approved", "admit", "admitted", "passed",
    "performance", "strength", "weight", "bwght", "mpg", "crime", "rate", "sales", "demand", "cost", "expenditure",
    "tip", "count", "counts", "length", "len", "response_time", "time_to_event", "takings", "revenue", "profit",
    "visitors", "arrivals", "passengers", "production", "consumption", "employment", "unemployment", "gdp",
    "output", "births", "deaths", "value")
# ... and the parts of a compound name that say the same (`sale.price`, `class_label`).
OUTCOME_NAME_PARTS = ("target", "label", "class", "outcome", "response", "price", "yield", "score")
# The conventional names of a studied outcome, enough alone when a column's entry is its name only (iris'
# `Species`, nlme's Wheat2 `yield`, "a numeric vector"; ames' `Sale_Price`). Fewer than OUTCOME_NAMES: a
# `price` or `weight` with no entry of its own is as often a covariate.
CONVENTIONAL_OUTCOME_NAMES = ("y", "target", "label", "class", "outcome", "response", "diagnosis", "survived", "died",
                              "death", "species", "yield", "sale_?price", "medv", "mpg", "quality")
# Names of a class a study sets out to tell apart (a MANOVA's grouping, heplots/peng's `species`).
CLASS_NAMES = ("species", "class", "label", "diagnosis", "dx", "survived", "outcome")
# Quantities nearly every study records beside its outcome (a score, a weight, a price, an income): as a
# name (GENERIC_NAMES), as the outcome word of a description (GENERIC_QUANTITIES), and as a class column's
# name, which names a bracket of the quantity (QUANTITY_NAMES: mediation/jobs' `income`).
GENERIC_NAMES = ("score", "sales", "weight", "height", "value", "cost", "expenditure", "performance", "income")
GENERIC_QUANTITIES = ("scores?", "weight", "height", "sales", "value", "cost", "expenditure", "performance",
                      "achievement", "income", "sale price", "selling price")
QUANTITY_NAMES = ("income", "inc", "wages?", "earnings", "salary", "price", "score", "sales", "weight", "height",
                  "value", "cost", "expenditure")
# Who the unit is (sex, age, race): the covariates of nearly every study, rarely what it studies.
DEMOGRAPHIC_NAMES = ("sex", "gender", "male", "female", "age", "race", "ethnicity", "ethnic", "afam", "black",
                     "white", "hispanic", "married", "marital", "educ", "education", "region", "nonwhite")
# What a study set on a unit: never read as its outcome, whatever the table (task_design.targets; nsw's
# `treat`). Narrower than DESIGN_FACTOR_NAMES: a `block` or `plot` is no treatment, and `group` and `treated`
# name an arm outside a balanced experiment too.
TREATMENT_NAMES = ("trt", "treat", "treated", "treatment", "tx", "arm", "group", "dose", "condition")
# The factors of a designed experiment, a design factor when the table is balanced on it (task_design.roles).
DESIGN_FACTOR_NAMES = (
    "trt", "treat", "treatment", "treatments", "tmt", "tx", "block", "blocks", "blk", "rep", "reps", "replicate",
    "replication", "plot", "subplot", "cult", "cultivar", "variety", "varieties", "dose", "dosage", "diet", "fert",
    "fertilizer", "fertiliser", "nitrogen", "arm", "condition", "cond", "supp", "feed", "spray", "herbicide",
    "insecticide", "irrigation", "row", "col", "column", "run", "batch", "order", "sequence", "period", "tank",
    "pen", "cage", "protein", "temp", "temperature", "pressure", "level")
# A survey's own design: its wave, stratum, primary sampling unit or weights.
SURVEY_DESIGN_NAMES = ("wave", "stratum", "strata", "psu", "sampwt", "sampweight", "survey_?weight", "wtfinl",
                       "perwt")
