"""How question_v1 refers to a feature: by its description alone, as DARE-bench's questions do
("the support stat of the Pokemon"), or with its column name beside it.

An agent maps a description to a column through metadata.txt, so a description may stand
alone only when metadata.txt singles the column out by it. The test, on metadata.txt alone
(the `name: description` lines of every column, not only the features):

- the phrase is the description cut to what it says (description_phrase); it needs
  MIN_CONTENT_WORDS content words (stop words aside), or be one word of four letters or more and
  nothing else ("Potassium" for `K`), and words beyond the column's own name;
- no other column has the same phrase;
- its overlap with a column, the share of its content words found in that column's name or
  description, is strictly highest for its own column: no other column matches it as well, so a
  phrase that mentions another column ("log of wage") still names its own ("lwage: log of wage")
  better, and one that another column's name or description covers as fully is ambiguous.

A column without a description whose name joins words ("Lot_Area", "Sepal.Length") is referred
to by those words ("lot area"), as DARE-bench's writers do, when no other column of metadata.txt
has them all. Any other column is named: "description (`column`)", or `` `column` `` when it
has no usable description. Everything here is a pure function of its arguments, ties broken by
column order, so the same metadata always gives the same references.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.core.records import ColumnReferences
from pipeline.core.task_metadata import FeatureReference
from pipeline.core.text import md_name, plain_phrase
from pipeline.core.wording import FUNCTION_WORDS, LEADING_TYPE, TRAILING_TYPE, alnum_words, plural_stem, split_camel

# DARE-bench's own spelling for an undocumented column in metadata.txt (the covid-19 example).
NO_DESCRIPTION = "[no description]"
MIN_CONTENT_WORDS = 2
NAME_WORDS_REASON = "the words of the column name single the column out"
MAX_PHRASE = 90
# R documentation often opens a column's entry with its storage type ("a numeric
# vector", "Factor.") or is nothing but its level list ("a factor with levels: no;
# yes"); neither says what the column means, so both are cut from the phrase.
# "factor" is the storage type only at the start, after a punctuation mark or after an article: never
# inside a phrase ("a risk factor score" keeps its words).
_LEVELS = re.compile(r"(?:^|[,;:(]\s*|(?<=[.?!])\s*|\s(?=an? |ordered ))(?:an? )?(ordered )?factor\b.*$", re.I)
_LEVELS_THEN_MEANING = re.compile(
    r"^(an? )?(ordered )?factor\b[^.;]*?\b(indicating|to indicate|giving|describing|coding|denoting|identifying|saying|for)\s+(?P<meaning>[^.;]{3,})",
    re.I)
_INDICATOR = re.compile(r"^(?:equals\s*)?=?\s*1\s+(?:if|for)\s+(?P<what>.+?)(?:,?\s*(?:;\s*)?=?\s*0\s+otherwise)?$",
                        re.I)
_CODE = r"[^;,=()]+?"
_BINARY = re.compile(rf"^\(?\s*(?:1\s*=\s*(?P<one>{_CODE})\s*(?:;|,|\bor\b)\s*0\s*=\s*{_CODE}"
                     rf"|0\s*=\s*{_CODE}\s*(?:;|,|\bor\b)\s*1\s*=\s*(?P<one2>{_CODE}))\s*\)?\s*\.?\s*$", re.I)
_WITH_LEVELS = re.compile(r"(?:,|(?<![\s,]))\s*\bwith (?:the )?levels\b.*$", re.I)
_CODE_PARENTHESIS = re.compile(r"(?<!\s)\s*\([^()=]*+=[^()]*+\)\s*$")
# "1=Urgent/Emerg; 0=elective (type of admission)": a code list that ends by saying what it codes
_CODES_THEN_MEANING = re.compile(r"^[^()=]*+=[^()]*+\((?P<meaning>[^()=<>]{3,})\)$")
# A codebook line: "1 = central cities. 2 = suburban areas. 3 = rural/small towns/outlying areas."
_CODE_ITEM = re.compile(r"(?<!\d)-?\d+\s*=\s*\S.*", re.S)
_CODE_SPLIT = re.compile(r"(?<=[.;,])\s+(?=-?\d+\s*=)")
_CONJUNCTION = re.compile(r"(?:^|\s)(?:and|or)\s")
# A list that opens so qualifies the clause before it ("the road, either MC, FAI, PA, or MA").
_QUALIFIER_OPENING = re.compile(r"(?:either|e\.g\.|i\.e\.|such as|including|namely|like)\b", re.I)
_BRACKETED = re.compile(r"(?<!\s)\s*\([^()]*\)")


def description_phrase(column: str, description: str, whole: bool = False, qualified: bool = False) -> str:
    """The words of `description` that say what `column` means ("" when none do), in their own case:
    storage types, level lists and everything after the first sentence cut, never a phrase in its
    middle. A codebook line ("1 = central cities. 2 = suburban areas. ...") keeps every code, joined by
    "; ". A phrase longer than MAX_PHRASE loses what brackets add, and if still too long is not shown at all (the reference is the column name, and
    metadata.txt holds the description): cut, it would say less than it seems to. Unless `whole` (a
    phrase shown beside the column name, which needs no cut to stand alone), binary codes read as
    "whether ..." and the phrase ends at its first comma or semicolon outside brackets, unless what
    follows continues a list ("a long bone, multiple, neck, or hip fracture"); `qualified` keeps what
    follows that comma in brackets instead ("expenditures per pupil (special needs)"), for columns whose
    descriptions differ only there."""
    desc = (description or "").strip()
    # "Factor. Does the ..." and "factor - equals 1 if ..." keep what follows
    desc = re.sub(r"^(an? )?(ordered )?factor\s*[.:-]\s*", "", desc, flags=re.I)
    # "A factor with levels No and Yes to indicate whether the store is in the US": what it indicates
    meaning = _LEVELS_THEN_MEANING.match(desc)
    desc = meaning["meaning"] if meaning else _LEVELS.sub("", desc).strip()
    desc = LEADING_TYPE.sub("", desc).strip()
    desc = TRAILING_TYPE.sub("", desc).strip()
    desc = _WITH_LEVELS.sub("", desc).strip()  # "Frequency with levels year, hour, week"
    codes = _codebook(desc)
    desc = codes or _first_sentence(desc).strip().rstrip(".;:,-– ")
    if not whole:
        in_brackets = _CODES_THEN_MEANING.match(desc)
        desc = in_brackets["meaning"].strip() if in_brackets else desc
        # Wooldridge's "=1 if union member" (or "equals 1 if ..., 0 otherwise") and "1=smoker or
        # 0=nonsmoker" say whether
        binary = _BINARY.match(desc)
        desc = f"whether {(binary['one'] or binary['one2']).strip()}" if binary else desc
        desc = _INDICATOR.sub(r"whether \g<what>", desc)
        desc = _CODE_PARENTHESIS.sub("", desc)  # "mother's race (1 = white, 2 = black)": the codes are metadata's
        first = desc if codes or _enumeration(desc) else _first_clause(desc)
        rest = desc[len(first):].lstrip(",; ").rstrip(".;:, ")
        desc = f"{first} ({rest})" if qualified and rest and not re.search(r"[()\[\]{}\"]", rest) else first
    if len(desc) > MAX_PHRASE:  # what brackets add is a detail: "average hourly earnings (sum of ...)"
        desc = _BRACKETED.sub("", desc).strip()
    if len(desc) < 3 or desc.lower() == column.lower() or not plain_phrase(desc, MAX_PHRASE):
        return ""  # a phrase with markup or a second clause would reach question_v1 as it is (issue 48)
    return desc


def _enumeration(text: str) -> bool:
    """Whether what follows `text`'s first comma continues a list its first clause opens: short items
    ending in "or"/"and" ("a long bone, multiple, neck, single area, or hip fracture", "Conservative,
    Labour, or Liberal Democrat", "Mother, father or guardian"), never a qualifier ("husband's wage, in
    1975 dollars", "sex of the respondent, Female or Male": one item after a clause of several words;
    "the road, either MC, FAI, PA, or MA": a list opened as an example of the clause)."""
    first = _first_clause(text)
    if first == text:
        return False
    rest = text[len(first):].lstrip(",; ")
    items = re.split(r",\s*", rest)
    if (_QUALIFIER_OPENING.match(rest) or not _CONJUNCTION.search(items[-1])
            or any(len(i.split()) > 4 for i in items)):
        return False
    return len(items) >= 2 or len(first.split()) <= 2


def _codebook(text: str) -> str:
    """A codebook line's codes, each whole, joined by "; " ("1 = central cities; 2 = suburban areas; 3 =
    rural/small towns/outlying areas"); "" when `text` is not two or more `N = label` items."""
    items = [i.strip().rstrip(".;, ") for i in _CODE_SPLIT.split(text.strip())]
    if len(items) < 2 or not all(_CODE_ITEM.fullmatch(i) for i in items):
        return ""
    return "; ".join(items)


def _first_sentence(text: str) -> str:
    """`text` up to its first full stop that ends a sentence: one outside brackets, after a word of
    six letters or more or before a capital. Wooldridge abbreviates ("mos. in prison during 1986",
    "chl. camp. expends., 1990") and help pages abbreviate in brackets ("age (Child vs. Adult)");
    cut there, the phrase is one word that says nothing."""
    depth, word_start = 0, 0  # where the run of ASCII letters ending at i starts: one pass, never a rescan
    for i, ch in enumerate(text):
        if ch.isascii() and ch.isalpha():
            word_start = word_start if i and text[i - 1].isascii() and text[i - 1].isalpha() else i
            continue
        depth += (ch in "([{") - (ch in ")]}" and depth > 0)
        if ch != "." or depth or text[i + 1:i + 2] != " " or i == 0 or not re.match(r"[a-z0-9)]", text[i - 1]):
            continue
        word_len = i - word_start if text[i - 1].isascii() and text[i - 1].isalpha() else 0
        if word_len >= 6 or not text[i + 2:i + 3].islower():
            return text[:i]
    return text


def _first_clause(text: str) -> str:
    """`text` up to its first ", " or "; " outside brackets and quotes: what follows is a unit or a
    qualifier ("husband's wage, in 1975 dollars"), and a comma inside an item would break the
    comma-separated lists question_v1 names features in."""
    depth, quote = 0, ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch in ",;" and depth == 0 and text[i + 1:i + 2] == " ":
            return text[:i].rstrip()
    return text


def content_words(text: str) -> frozenset[str]:
    """Lower-cased words of `text` minus stop words, a plural's s dropped, camelCase and snake_case split."""
    text = re.sub(r"['’]s\b", "", split_camel(text))  # "kid's height": kid, height
    return frozenset(plural_stem(w) for w in alnum_words(text) if w not in FUNCTION_WORDS)


@dataclass(frozen=True)
class _Column:
    phrase: str  # description_phrase of its description
    qualified: str  # the same with the qualifier after its first comma kept in brackets
    named: str  # the same, whole: shown beside the column name
    known_words: frozenset[str]  # the content words of its name and description
    text: str  # its name and description as lower-case words, in order, stop words kept


def _prepared(documented: dict[str, str]) -> dict[str, _Column]:
    """Each column's phrase and words, once; metadata.txt's "[no description]" is no description."""
    documented = {c: "" if d.strip() == NO_DESCRIPTION else d for c, d in documented.items()}
    return {c: _Column(description_phrase(c, d), description_phrase(c, d, qualified=True),
                       description_phrase(c, d, whole=True), content_words(c) | content_words(d),
                       _sequence(f"{c} {d}")) for c, d in documented.items()}


def _sequence(text: str) -> str:
    """`text` as lower-case words separated by single spaces (and padded by one), so that a
    phrase's words found in it in a row are a substring."""
    return " " + " ".join(alnum_words(text)) + " "


def name_words(column: str) -> str:
    """The words a column's name joins, lower-cased ("Lot_Area": "lot area", "Sepal.Length": "sepal
    length", "passengerClass": "passenger class"), or "" unless it joins two or more parts that each
    read as a word: letters only, three or more of them, a vowel, not an acronym in capitals. A code
    ("chem_fp_050", "Bsmt", "Pool_QC", "std_7th_delta") is no word, and a single word (`age`, `x1`)
    says nothing beyond the name."""
    parts = [p for p in re.split(r"[._\s-]+|(?<=[a-z])(?=[A-Z])", column) if p]
    if len(parts) < 2 or not all(_READS_AS_WORD.fullmatch(p) and not p.isupper() for p in parts):
        return ""
    return " ".join(p.lower() for p in parts)


_READS_AS_WORD = re.compile(r"(?=[A-Za-z]*[AEIOUYaeiouy])[A-Za-z]{3,}")


def _decide(column: str, columns: dict[str, _Column]) -> tuple[str, str]:
    """(phrase, reason): a non-empty phrase when the description may stand alone, else ("", why not).
    Its first phrase is tried, then, if that does not single the column out, the qualified one
    ("spending per pupil (regular)" where every spending column is "spending per pupil, ...").
    An undocumented column whose name joins words is referred to by those words, as DARE-bench's
    writers do ("the sepal length"), when no other column of metadata.txt has them all."""
    if column not in columns:
        return "", "the column is not listed in metadata.txt"
    if not columns[column].phrase and (words := _unique_name_words(column, columns)):
        return words
    phrase, reason, shared = _judge(column, columns[column].phrase, columns)
    qualified = columns[column].qualified
    # only a phrase that another column shares is qualified: a clause too short to say anything
    # ("1st" of "1st, 2nd, or 3rd class") does not become a name by what follows it
    if phrase or not shared or qualified == columns[column].phrase:
        return phrase, reason
    better, why, _ = _judge(column, qualified, columns)
    return (better, why) if better else (phrase, reason)


def _unique_name_words(column: str, columns: dict[str, _Column]) -> tuple[str, str] | None:
    """(the words of `column`'s name, reason) when they single it out in metadata.txt: no other column's
    name or description has every one of them, and none is another column's name (the words would
    carry it); None otherwise."""
    phrase = name_words(column)
    if not phrase:
        return None
    words = content_words(phrase)
    for other, known in columns.items():
        if other != column and (words <= known.known_words or name_match(phrase, other)):
            return None
    return phrase, (f"{NAME_WORDS_REASON}: metadata.txt has no description, and no other column's name or "
                    "description has all of its name's words")


def _judge(column: str, phrase: str, columns: dict[str, _Column]) -> tuple[str, str, bool]:
    """_decide's test of one phrase for `column`: (the phrase or "", the reason, whether it failed
    because another column shares it)."""
    if not phrase:
        return "", "metadata.txt has no description that says what the column means", False
    if re.search(r"[=<>]", phrase):
        return "", "the description is a code list, which does not read as the name of a quantity", False
    if _first_clause(phrase) != phrase:
        return "", ("the description is a list whose commas would split the question's comma-separated feature "
                    "lists"), False
    words = content_words(phrase)
    # one word may do when it is all the description says ("Potassium" for `K`), never a word among
    # stop words ("in years" for `age`)
    if len(words) < MIN_CONTENT_WORDS and not (len(words) == 1 and re.fullmatch(r"[A-Za-z][\w-]{3,}", phrase)):
        return "", f"the description is too short ({len(words)} content word{'s' if len(words) != 1 else ''})", False
    if words <= content_words(column):
        return "", "the description only repeats the column name", False
    own = len(words & columns[column].known_words) / len(words)
    best_other, best_score = "", -1.0
    tied = []
    for other, known in columns.items():
        if other == column:
            continue
        if phrase.lower() in (known.phrase.lower(), known.qualified.lower()):
            return "", f"column {other!r} has the same description", True
        score = len(words & known.known_words) / len(words)
        if score > best_score:
            best_other, best_score = other, score
        if score == own:
            tied.append(other)
    if best_score > own or (best_score == own and not _verbatim_only(column, phrase, tied, columns)):
        return "", f"the description matches column {best_other!r} as well (overlap {best_score:.2f} vs {own:.2f})", True
    runner_up = f", next best {best_score:.2f} for {best_other!r}" if best_other else ""
    if best_score == own:
        return phrase, (f"the description singles the column out in metadata.txt: its words in a row are in no "
                        f"other column's (overlap {own:.2f}, tied with {', '.join(map(repr, tied))})"), False
    return phrase, f"the description singles the column out in metadata.txt (overlap {own:.2f}{runner_up})", False


def _verbatim_only(column: str, phrase: str, tied: list[str], columns: dict[str, _Column]) -> bool:
    """Whether the phrase's words, in a row, are in `column`'s name and description and in none of
    the `tied` columns': "whether in good health" is `goodhealth`'s "=1 if in good health", not
    `vghealth`'s "=1 if in very good health", though the two share every content word. A tied
    column whose name has one of the phrase's words stays a rival: "the car's weight" may as well
    be `weight_car`."""
    core = _sequence(re.sub(r"^whether\s+", "", phrase))
    words = content_words(phrase)
    return (core.strip() != "" and core in columns[column].text
            and not any(core in columns[o].text or content_words(o) & words for o in tied))


def named_text(column: str, phrase: str) -> str:
    """The explicit reference: `phrase (`column`)`, or `` `column` `` without a phrase."""
    return f"{phrase} ({md_name(column)})" if phrase else md_name(column)


def feature_references(columns: Sequence[str], documented: dict[str, str], style: ColumnReferences,
                       fallback: dict[str, str] | None = None) -> dict[str, FeatureReference]:
    """How question_v1 refers to each of `columns`. `documented`: metadata.txt's descriptions of
    all its columns ({name: description}, its order); `fallback`: phrases for columns metadata.txt
    leaves undocumented (a designer's), which an agent cannot look up, so they go with the name."""
    fallback = fallback or {}
    prepared = _prepared(documented)
    out = {}
    for column in columns:
        phrase, reason = _decide(column, prepared)
        if phrase and style == "dare":
            # A column with a description of its own is referred to by it; one without, by its name's words
            # (_decide's only other way to a phrase).
            by = "description" if prepared[column].phrase else "name words"
            out[column] = FeatureReference(column=column, by=by, phrase=phrase, reason=reason)
            continue
        if style == "explicit":
            reason = "[build] column_references is \"explicit\""
        shown = prepared[column].named if column in prepared else ""
        shown = shown or description_phrase(column, fallback.get(column, ""), whole=True)
        out[column] = FeatureReference(column=column, by="name", phrase=named_text(column, shown), reason=reason)
    return out


def unnamed_references(columns: Sequence[str], documented: dict[str, str]) -> frozenset[str]:
    """Those of `columns` that question_v1 refers to in DARE style without their column name: the
    reference feature_references writes is a phrase that singles the column out in `documented`
    (metadata.txt's {column: description}) and does not contain the name as a word. The designers
    prefer such features when a choice between them is otherwise equal, and the question writer
    decides the same way, so the two never disagree about which features can be named by meaning."""
    refs = feature_references(columns, documented, "dare")
    return frozenset(c for c, r in refs.items() if r.by != "name" and not name_match(r.phrase, c))


def name_match(text: str, column: str) -> re.Match[str] | None:
    """Where `column` first appears in `text` as a word, in any case (no letter, digit or _ touches
    it): how a reader counts a feature that carries its column name, so "the mother's age in years"
    carries `age` and "community income level" carries `Income`."""
    return re.search(rf"(?<!\w){re.escape(column)}(?!\w)", text, re.I)


def why_name_appears(column: str, refs: dict[str, FeatureReference], text: str) -> str:
    """Why `column`'s name appears in `text` (question_v1, whose references are `refs`), "" if it does not."""
    if not name_match(text, column):
        return ""
    ref = refs.get(column)
    if ref is not None and ref.by == "name":
        return f"the reference names the column ({ref.reason})"
    own = name_match(ref.phrase, column) if ref is not None and ref.phrase in text else None
    if own:
        return f"metadata.txt's description, which singles the column out, uses the word {own[0]!r} itself"
    for other, other_ref in refs.items():
        if other != column and other_ref.phrase in text and name_match(other_ref.phrase, column):
            return f"the reference to {other!r} ({other_ref.phrase!r}) contains the word"
    if any(name_match(value, column) for value in re.findall(r'"((?:[^"\\]|\\.)*)"', text)):
        return "a category value the ranges list spells the word"
    return "the text's fixed wording (a file, table or target name) contains the word"


def with_name_use(refs: dict[str, FeatureReference], text: str) -> dict[str, FeatureReference]:
    """`refs` with name_in_question recorded: why each column's name appears in question_v1 `text`."""
    return {c: r.model_copy(update={"name_in_question": why_name_appears(c, refs, text)}) for c, r in refs.items()}


def resolve(text: str, documented: dict[str, str]) -> list[tuple[str, str]]:
    """The columns `text` refers to, in order, as an agent holding only metadata.txt reads it:
    a backticked column name, or a description that singles its column out (longest match first;
    "description (`column`)" is one reference). Each item is (column, the words matched)."""
    forms: dict[str, str] = {}
    prepared = _prepared(documented)
    for column, known in prepared.items():
        forms[md_name(column)] = column
        for shown in {known.phrase, known.named} - {""}:
            forms[f"{shown} ({md_name(column)})"] = column
        alone, _ = _decide(column, prepared)
        if alone:
            forms.setdefault(alone, column)
    if not forms:
        return []
    pattern = re.compile("|".join(f"(?<![\\w`])({re.escape(f)})(?![\\w`])"
                                  for f in sorted(forms, key=lambda f: (-len(f), f))))
    return [(forms[m[0]], m[0]) for m in pattern.finditer(text)]
