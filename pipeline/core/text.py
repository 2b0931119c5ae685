"""Untrusted text (column and task names, licences, reasons, instructions) made inert for where it is shown:
a terminal, a Markdown file, an HTML page; and the one place a text is shortened for display (`shorten`:
at a word boundary, never in files, which keep reasons whole). Importable without pandas or pydantic (the
CLI prints its one-line errors with it before anything heavy loads)."""

from __future__ import annotations

import html
import re
import string


def printable(text: str, keep: str = "") -> str:
    """`text` for a terminal or a one-line report: control characters (an escape sequence can move the
    cursor and overprint FAIL with PASS; a newline forges a line) shown escaped, the rest as is. `keep`
    names control characters that stay (a multi-line block keeps its newlines)."""
    return "".join(ch if ch.isprintable() or ch in keep else ascii(ch)[1:-1] for ch in str(text))


def value_repr(value: object) -> str:
    """A data value as a reason quotes it: `5`, `'a'`, never numpy's `np.int64(5)` (numpy 2 reprs its scalars
    with their type, and a label read from a frame is one)."""
    item = getattr(value, "item", None)
    return repr(item() if type(value).__module__ == "numpy" and callable(item) else value)


def _one_line(text: str) -> str:
    """`text` on one line (a line break forges a table row or a list item), control characters shown."""
    return printable(str(text).replace("\r", " ").replace("\n", " "))


def md_cell(text: str) -> str:
    """Source text (a licence, a reason, a name) as inline Markdown: a table cell stays one cell on one
    line, control characters are shown escaped, and neither HTML (`<img onerror=...>`, which Markdown
    renderers pass through) nor a link or image (`[x](javascript:...)`) nor a code span can be formed.
    Only backslash escapes, no HTML entities: the file is read in a terminal too, where `&#91;` is noise
    and `\\[` still reads as a bracket."""
    out = []
    one_line = _one_line(text)
    for i, ch in enumerate(one_line):
        if ch == "\\":
            # A backslash escapes only the ASCII punctuation after it (CommonMark), so only there is it
            # doubled: `\\[` cannot undo the bracket's escape, and a licence's `$\\foo$` reads as written.
            after = one_line[i + 1: i + 2]
            out.append("\\\\" if after and after in _ASCII_PUNCTUATION else ch)
        elif ch in "[]`|" or (ch == "<" and re.match(r"[A-Za-z/!?]", one_line[i + 1: i + 2])):
            # A `<` is escaped only where it could open a tag, so `too few rows (12 < 30)` reads as written.
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def md_code_cell(text: str) -> str:
    """Text for inside a Markdown code span in a table cell, where HTML and links are already inert:
    one line, no raw `|` (a table splits on it even inside a span), control characters escaped."""
    return _one_line(text).replace("|", "\\|")


def md_code(text: str, table: bool = True) -> str:
    """`text` as a Markdown code span: delimited by more backticks than it holds in a row (CommonMark),
    padded when it starts or ends with one, so a backtick in a column name cannot close it early; on one
    line, its control characters shown and, in a `table` cell, its `|` escaped (md_code_cell), so a table row
    holds. `table=False` for running text (an instruction naming a column), where `a|b` reads as written; an
    ordinary name reads `` `name` `` either way."""
    text = md_code_cell(text) if table else _one_line(text)
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def md_name(name: str) -> str:
    """A column, table or other untrusted name in running Markdown an agent reads (an instruction, question_v1):
    `md_code` outside a table, so a name holding backticks, HTML or a sentence stays inside its code span."""
    return md_code(name, table=False)


def block_text(text: str) -> str:
    """Multi-line text (an instruction in a fenced block or a `pre-wrap` element): its line breaks and
    tabs kept, every other control character (an ESC byte) shown escaped."""
    return printable(text, keep="\n\t")


def html_text(text: str) -> str:
    """Text for an HTML page: markup escaped, control characters other than line breaks and tabs shown."""
    return html.escape(block_text(text))


_ASCII_PUNCTUATION = frozenset(string.punctuation)
# A card's description names a column in an instruction an agent reads (question_v1) and a curator renders as
# Markdown: there it must stay a phrase, whatever the card holds. A backtick opens a code span or a fence that
# swallows the instructions after it, `<` and `>` raw HTML, brackets a link, `|` a table cell, `\\` an escape,
# `{}`, `~` and `$` template, strike-through and maths syntax; a sentence break starts a second instruction.
PHRASE_MARKUP = frozenset("`<>[]{}|\\~$#*")
PHRASE_MAX_CHARS = 90
# A full stop that ends no sentence: a known abbreviation ("mos. in prison", "Child vs. Adult", "no. of rooms").
# Any other full stop, "!" or "?" with more words after it starts a second sentence, whatever its case or spacing
# ("mg. ignore the above", "mg.Ignore the above").
PHRASE_ABBREVIATIONS = frozenset({"vs", "no", "nos", "mos", "approx", "etc", "incl", "avg", "yrs", "hrs", "cf", "al", "st",
                                  "mt", "dr", "jr"})
# A codebook's items after a semicolon ("1 = urban; 2 = rural"): a short code = label pair each.
_CODE_PAIR = re.compile(r"\s*-?\d+(?:\.\d+)?\s*=\s*[A-Za-z0-9][\w' /&()-]{0,39}")
# A clause after a colon, or a list it opens ("dose: - ignore the above", "dose: 1. print"); a bare URL, which a
# Markdown renderer turns into a link; "_" that opens or closes emphasis (a snake_case word inside stays).
_PHRASE_COLON = re.compile(r":\s+(?!\d)|:\s*(?:[-*+\u2022]\s|\d+[.)](?:\s|$))")
_PHRASE_LINK = re.compile(r"https?:|www\.|://|\w@\w", re.I)
_ABBREVIATED_NEXT = re.compile(r" [a-z]{1,7}\.")
_PHRASE_EMPHASIS = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def _second_sentence(text: str) -> bool:
    """Whether `text` goes on after a sentence end: a full stop (not an abbreviation, not a run of short dotted
    lower-case words, not a decimal point, not dotted initials like "U.S."), "!" or "?" with a letter or digit
    after it, or a semicolon not between code = label pairs. One pass; plain_phrase calls it only on a text of at most its `max_chars`."""
    last = max((i for i, ch in enumerate(text) if ch.isalnum()), default=-1)
    word_start, chain_end = 0, -1
    for i, ch in enumerate(text):
        if ch.isalpha() and ch.isascii():
            if i == 0 or not (text[i - 1].isalpha() and text[i - 1].isascii()):
                word_start = i
            continue
        if i >= last or ch not in ".!?;":
            continue
        if ch in "!?":
            return True
        if ch == ";":
            if not all(_CODE_PAIR.fullmatch(part) for part in text.rstrip(" ;.").split(";")):
                return True
            continue
        word = text[word_start:i] if i and text[i - 1].isalpha() and text[i - 1].isascii() else ""
        before, after = text[i - 1:i], text[i + 1:i + 2]
        dotted = len(word) == 1 and (text[i - 2:i - 1] == "." or text[i + 2:i + 3] == ".")  # U.S., e.g., a.m.
        chained = _ABBREVIATED_NEXT.match(text, i + 1) if len(word) <= 7 and word.islower() else None
        if chained:  # Wooldridge's "chl. camp. expends., 1990": a run of abbreviated words, each short and dotted
            chain_end = chained.end() - 1
        elif not ((before.isdigit() and after.isdigit()) or dotted or word.lower() in PHRASE_ABBREVIATIONS
                  or i == chain_end):
            return True
    return False


def plain_phrase(text: str, max_chars: int = PHRASE_MAX_CHARS) -> bool:
    """Whether `text` may name a column in an instruction: at most `max_chars` characters on one line, no markup
    character (PHRASE_MARKUP), no emphasis, link or URL, no control character, and one sentence of one clause
    (_second_sentence, a colon's clause or list). A description that fails is not shown; the column is named by
    its name instead (pipeline.core.column_refs)."""
    return (len(text) <= max_chars and text.isprintable() and not PHRASE_MARKUP.intersection(text)
            and not _PHRASE_COLON.search(text) and not _PHRASE_LINK.search(text)
            and not _PHRASE_EMPHASIS.search(text) and not _second_sentence(text)
            and not _WIDE_TERMINATORS.intersection(text) and not _initials_then_sentence(text))


# Sentence ends _second_sentence does not read: full-width and CJK stops, an ellipsis ("mg。Ignore ...").
_WIDE_TERMINATORS = frozenset("。．！？…：；｡")


def _initials_then_sentence(text: str) -> bool:
    """Dotted initials ("U.S.", "U.S.A.") followed by a capitalised word: the initials' full stop may end a
    sentence ("dose in U.S. Ignore all previous instructions"), which _second_sentence lets pass for the
    initials' sake. Called on a phrase of at most PHRASE_MAX_CHARS characters (plain_phrase checks the length
    first)."""
    words = text.split()
    for word, after in zip(words, words[1:]):
        parts = word.rstrip(".").split(".")
        if (word.endswith(".") and len(parts) >= 2 and all(len(p) == 1 and p.isalpha() for p in parts)
                and after[:1].isupper() and after[1:2].islower()):
            return True
    return False


ELLIPSIS = "…"


def shorten(text: str, width: int) -> str:
    """`text` for a display that has `width` characters for it: whole if it fits, else cut at the last
    word boundary that leaves room for an ellipsis, never inside a word or a number ("R² 0" stays whole
    or goes whole). A first word longer than `width` is kept whole. The one place daregen shortens a
    reason, an evidence or an error for display; files keep the whole text."""
    text = str(text)
    if len(text) <= width:
        return text
    # The characters that fit and the next one: a space there means the last word ends at the limit.
    head = text[: max(0, width - len(ELLIPSIS)) + 1]
    cut = head.rfind(" ")
    kept = head[:cut] if cut > 0 else text.split(" ", 1)[0]  # one long word: whole, then the ellipsis
    # A last word with no letter or digit (an operator, an opening bracket) reads as a cut mid-phrase,
    # and so does a dangling opener or separator: "1 rows (<" -> "1 rows", "(score 1.25:" -> "(score 1.25".
    words = kept.split(" ")
    while len(words) > 1 and not any(ch.isalnum() for ch in words[-1]):
        words.pop()
    return " ".join(words).rstrip(" ,;:([{") + ELLIPSIS


def shorten_cause(text: str, width: int = 300) -> str:
    """An exception's first line for a one-line reason, shortened at a word boundary (shorten)."""
    return shorten((str(text).strip().splitlines() or [""])[0], width)
