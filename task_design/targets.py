"""Which outcome a domain expert would predict: target candidates ranked by evidence.

rank_targets(record, profile, roles, eligible, rng) -> [RankedTarget], best first. Pure.

Precision over recall: a tabular target needs evidence, and each ranked target carries its kind
(pipeline.core.records.TargetEvidenceKind). Strongest first:
1. the source's explicit hint (OpenML's default_target_attribute, statsmodels' endog_name,
   scikit-learn's target, a local/Kaggle sidecar's target_hint): record.target_hint;
2. the documentation: the response side of the model formulas of an R help page, a series model
   of one column, or the column's own Format entry calling it the response or outcome
   (record.documented_outcomes, parsed by sourcing.rdoc); or a card's plain statement of its target, linked
   to one column (task_design.stated_target: "the target variable is ...", the registry's `stated.*` entries);
3. the LLM designer, when configured (task_design.llm puts its choice first);
4. the fallback among the outcome candidates, ranked by their name and their own description and
   ties broken by the seeded rng. A fallback counts as evidence only when its score reaches
   FALLBACK_FLOOR and the column's own entry reads as a measured outcome (outcome_reading):
   `outcome_description` by its description, `outcome_name` by a conventional outcome name or the
   title when it has no description of its own. The others (`ranked_fallback`) may be a forecast's
   series, never a tabular target. A column's place (first or last) is no evidence: it broke ties
   toward covariates (cpus' `estperf` over `perf`). Read before them: the one candidate that the
   dataset's title or the opening of its description names as what it studies, or that is named the
   dependent variable (`study_subject`, task_design.study_subject). Read last, only when no column has
   any other evidence (with_described_subject): weaker wording of the description that names one column
   as what was measured, a title listing one measure beside who the unit is, or an experiment's table of
   its arm and one measure; the same kind, never displacing a column with evidence of its own.
   Two readings rank first among the fallback's: a measure taken after the treatment beside its
   pre-treatment twin (post_treatment_twin: mediation/jobs' `depress2` beside `depress1`), and the
   column the dataset is named after, whole (wooldridge/return's `return` above `salary`, whose word
   scores higher).

Documentation that names no outcome is dropped first (weak_documentation): a plot's formula beside a
model of another column or showing a non-outcome, "response" as a noun of the data ("response rate"),
one measure of a multivariate response beside a class column. A sentence of the description that
names the response in words picks the column whose description it repeats (response_sentences).

Only outcome columns (task_design.roles) are ranked; a source hint or the documentation
may also name a column whose role is a soft one (a design factor, one of a block, a
derived copy, a covariate), since the source knows its data better than a name rule. A documented
response that is a derived copy of an outcome (`log(wage)` given as `lwage`) stands for
that outcome.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from pipeline.core.records import DatasetProfile, DatasetRecord, DocumentedReading, Evidence, TargetEvidenceKind
from pipeline.core.wording import (GENERIC_ENTRY, NOT_TOPICS, TITLE_FRAME_WORDS, inflects, letter_words, prefix_stem)
from sourcing.rdoc import resolve_column
from task_design.evidence import pattern
from task_design.identity import applied_to, operand_of
from task_design.roles import ColumnRole
from task_design.stated_target import stated_target
from task_design.study_subject import StudySubject, described_subject, study_subject, title_measure

# Roles a source or its documentation may overrule; the others (keys, calendar fields,
# coordinates, counts of a table, censored survival) are never a target.
SOFT_ROLES = frozenset({"design_factor", "block_member", "composition_part", "derived_copy", "covariate"})
_OUTCOME_NAME = pattern("outcome.name")
# Wording of the column's own description that reads as a measured outcome. A "grade" is a mark or a stage
# of disease, not a school year ("10th grade students", "4th grade math", "a mixed-grade class": mediation/
# student's `free`, the share of 10th graders on free lunch, read X blind). Not "whether the": every
# yes/no attribute of a unit says it (Carseats' `US`, taxi's `local`). A diagnosis is an outcome, but not the
# moment one was made: "the time delay between diagnosis and reporting" (boot/aids' `delay`, one of the two
# factors its counts are cross-classified by, read X blind), "age at diagnosis", "years since diagnosis".
_OUTCOME_DOC = pattern("outcome.entry-wording")
# The words of _OUTCOME_DOC that can describe a class: a wage, a price or a score is a quantity, and a
# yes/no column that mentions one is an attribute (plm/Wages' `union`, "wage set by a union contract?").
_CLASS_OUTCOME_DOC = pattern("outcome.class-entry-wording")
# Conventional names of a studied outcome, read when the column's own entry is its name only (no or a
# generic description): iris' `Species`, nlme's Wheat2 `yield` ("a numeric vector"), ames' `Sale_Price`.
_CONVENTIONAL_OUTCOME_NAME = pattern("outcome.conventional-name")
# Who the unit is (sex, age, race): the covariates of nearly every study, rarely what it studies.
_DEMOGRAPHIC = pattern("covariate.demographic-name")
# Who the unit is, in its own entry's words (mlmRev/Socatt's `class`, "Self assessed social class", read X as
# a target; heplots/SocGrades' "Social class", openintro/smoking's "Marital status with levels ...").
_DEMOGRAPHIC_DOC = pattern("covariate.demographic-entry")


def _demographic(name: str, record: DatasetRecord) -> bool:
    """Who the unit is, by the column's name or its own entry's opening words: a covariate, no outcome."""
    return bool(_DEMOGRAPHIC.match(name) or _DEMOGRAPHIC_DOC.search(record.column_descriptions.get(name, "")))


# Treatment and design wording: what the study set, not what it measured (nsw's `treat`).
_SET_BY_DESIGN = pattern("design.set-by-design-entry")
_DESIGN_NAME = pattern("design.treatment-name")
# The fallback's least score: one reading as an outcome (its name, its description's outcome wording,
# the dataset named after it), with no penalty. A column with a description but nothing more scores 0.25,
# one sharing a single word with the title 1.25.
FALLBACK_FLOOR = 1.5
# Quantities that nearly every study records beside its outcome (a test score, a body weight, a product's
# sale price, a family's income): their word reads as the outcome only when the dataset's title or the
# opening of its description names the same quantity (AER's "California Test Score Data" and `read`,
# "Average reading score"), never in a study of something else (carData/BEPS' `Europe`, "high scores
# represent ...", beside the vote it studies; ISLR/OJ's `SalePriceCH` beside the brand purchased).
# A person's own wage or earnings is a study's outcome often enough to stand without it; a person's income is
# not: blind readers judged it a covariate in most studies that record it (wooldridge's crime1 `inc86` beside
# arrests, smoke's `income` beside cigarettes smoked, prison's `incpc` beside crime rates, loanapp's `appinc`
# beside the loan decision), so its word needs the title too.
_GENERIC_QUANTITY = pattern("covariate.generic-quantity-word")
# ... and another unit's quantity: a family's income beside a woman's hours, a state's wage beside a
# student's schooling, a house's purchase price beside the loan decision.
# The pay of a school's or a firm's staff is an input of that unit (wooldridge/meap93's `salary`, "avg. teacher
# salary, $", beside the pass rates it studies).
_GENERIC_PHRASE = pattern("covariate.another-unit")
# A ratio's description names its terms ("debt payments to total income ratio", Ecdat/Hdma's `dir` beside the
# loan decision): an outcome word among them is a term, not the column.
_RATIO_DOC = pattern("derived.ratio-entry")
# A column named as a ratio, a share or a proportion, whose terms are usually columns beside it.
_RATIO_NAME = pattern("derived.ratio-name")
# A sentence of the Description or Details that names the response in words, not by a column's name
# (HSAUR/schooldays: "the number of days absent from school is the response variable").
_PROSE_RESPONSE = pattern("outcome.prose-response")
PROSE_MATCH = 0.6  # the share of a column's description words that the response sentence must hold
_GENERIC_NAME = pattern("covariate.generic-quantity-name")
# A quantity's name on a class column names a bracket of it, an attribute (mediation/jobs' `income`,
# "five categories for level of income").
_QUANTITY_NAME = pattern("covariate.quantity-class-name")


# The most values a numeric column may hold to count as a class column for "classify ... into K classes".
MAX_STATED_CLASSES = 12


# The evidence of a target a curator pinned in the curation ledger (pipeline.core.curation).
PINNED_EVIDENCE = "pinned by a curator in the curation ledger"


@dataclass(frozen=True)
class RankedTarget:
    column: str
    evidence: str
    tier: int  # 0 source hint, 1 documentation, 2 LLM, 3 fallback
    kind: TargetEvidenceKind
    score: float = 0.0  # the fallback's name/documentation score (tier 3 only)
    # How the documentation names it (Evidence.kind), for a target the documentation names; None otherwise.
    reading: DocumentedReading | None = None

    def __post_init__(self) -> None:
        if not self.column or not self.evidence:
            raise ValueError("a ranked target needs a column and its evidence")

    @property
    def documented(self) -> bool:
        """The source or its documentation names it (a hint, a model, the column's own Format entry)."""
        return self.tier < 3

    @property
    def fitted_model(self) -> bool:
        """A model the documentation fits names it as its response, not a plot's or an aggregate's formula
        (both are kind model_formula: the published kind does not tell them apart; the reading does)."""
        return self.kind == "model_formula" and self.reading == "fitted_model"


def _source_name(record: DatasetRecord) -> str:
    ref = record.ref.lower()
    if ref.startswith("openml") or record.source == "openml":
        return "OpenML default_target_attribute"
    if ref.startswith("statsmodels"):
        return "statsmodels endog_name"
    if ref.startswith("sklearn"):
        return "scikit-learn's target"
    if record.target_hint and record.declared_roles.get(record.target_hint) is not None:
        return "the card's train-eval-index col_mapping (declared.col-mapping)"
    return f"the {record.source} source's target_hint"


def documented_kind(evidence: Evidence) -> TargetEvidenceKind:
    """The published kind of a documented outcome's evidence (sourcing.rdoc.documented_outcomes)."""
    if evidence.kind == "series_model":
        return "series_model"
    if evidence.kind in ("fitted_model", "plot_formula"):
        return "model_formula"
    return "documented_response"


# "response" as a plain noun of what the study recorded, not the statistical response: wooldridge/charity's
# `propresp`, "response rate to mailings", and `weekslast`, "number of weeks since last response";
# stevedata/PPGE's `v2catrauni`, "generated by way of a Bayesian item response model" (its documented
# outcome is government spending). Format wording names the response only when a response word is left
# once these uses are taken out.
_RESPONSE_AS_NOUN = pattern("not-outcome.response-as-noun")
_RESPONSE_WORDING = pattern("outcome.response-wording")
# A bare response word that the entries of SHARED_NOUN_COLUMNS or more columns use is what the rows are, not
# one column's role: openintro/mn_police_use_of_force's rows are police responses ("DateTime of police
# response", "Precinct where response occurred", "Whether response was iniated by call to 911"; two of them
# read X blind). "Outcome variable", the statistician's term, still names each column it describes.
_BARE_RESPONSE = pattern("not-outcome.bare-response")
SHARED_NOUN_COLUMNS = 3


def statistical_wording(doc: str, record: DatasetRecord) -> str:
    """`doc` without the response words it uses as nouns of the data: "response rate to mailings", "item
    response", or a response word that the entries of many columns share."""
    wording = _RESPONSE_AS_NOUN.sub("", doc)
    for word in {m.group(1).casefold() for m in _BARE_RESPONSE.finditer(wording)}:
        bare = re.compile(rf"\b{word}s?\b(?!\s+variables?\b)", re.I)
        if sum(1 for entry in record.column_descriptions.values() if bare.search(entry)) >= SHARED_NOUN_COLUMNS:
            wording = bare.sub("", wording)
    return wording


# A multivariate response of three or more measures (`lm(cbind(bill_length, bill_depth, flipper_length,
# body_mass) ~ species)`: a MANOVA) compares the measures across a grouping; a binomial glm's
# `cbind(dead, alive)` has two. A column named as a class is conventionally named (heplots/peng's
# `species`) is then the question the data is set (which group a unit belongs to), not one measure of it.
MULTIVARIATE_MIN = 3
_CLASS_NAME = pattern("outcome.class-name")


# A diagnosis in a class column's own entry: heplots/Diabetes' `group`, "diagnostic group, a factor with
# levels Normal Chemical_Diabetic Overt_Diabetic", beside `lm(cbind(glufast, glutest, instest, sspg) ~ group)`
# (`glufast` as the target read ? blind: the study classifies the patients by their blood chemistry).
_DIAGNOSTIC_ENTRY = pattern("outcome.diagnostic-class-entry")


def _class_column(name: str, record: DatasetRecord) -> bool:
    """The column is named as a class is, or its own entry calls it a diagnostic group or class."""
    return bool(_CLASS_NAME.match(name) or _DIAGNOSTIC_ENTRY.search(record.column_descriptions.get(name, "")))


def weak_documentation(col: str, evidence: Evidence, record: DatasetRecord, roles: dict[str, ColumnRole],
                       modelled: set[str]) -> str | None:
    """Why a documented outcome's evidence does not make it the outcome, or None.

    - A plot's formula (`xyplot(travel ~ mode)`, `sunflowerplot(Rate ~ Time)`) shows a column; it fits
      nothing. It names the outcome only when no model of another column does (AER/TravelMode fits
      `mlogit(choice ~ ...)` and plots `travel`, an attribute of each alternative) and the column's own
      role is an outcome (nlme/Remifentanil's infusion rate, set by the study, is plotted, not studied).
    - The column's own Format entry says "response" only as a noun of the data ("response rate to
      mailings"), not as the study's response.
    - One measure of a multivariate response (a MANOVA's) beside a column conventionally named as a class.
    """
    if len(evidence.joint) >= MULTIVARIATE_MIN and (
            group := next((c for c, r in roles.items() if r.role == "outcome" and _class_column(c, record)), None)):
        return f"one measure of a multivariate response, beside the class column {group!r}"
    if evidence.kind == "plot_formula":
        if roles[col].role not in ("outcome", "derived_copy"):
            return f"a plot's formula shows it, and it is a {roles[col].role.replace('_', ' ')}"
        if modelled - {col}:
            return f"a plot's formula shows it, while a model fits {sorted(modelled - {col})[0]!r}"
    if evidence.kind == "format_entry":
        doc = record.column_descriptions.get(col, "")
        if doc and (word := _RESPONSE_WORDING.search(doc)) is not None and not _says_response(doc, record):
            noun = m.group(0) if (m := _RESPONSE_AS_NOUN.search(doc)) else word.group(0)
            return f"its description uses 'response' as a noun of the data ({noun!r})"
    return None


def _says_response(doc: str, record: DatasetRecord) -> bool:
    """The description calls its column the response or outcome, once the response words it uses as nouns
    of the data are set aside."""
    return _RESPONSE_WORDING.search(statistical_wording(doc, record)) is not None


def _documented(record: DatasetRecord, names: list[str],
                roles: dict[str, ColumnRole]) -> list[tuple[str, str, TargetEvidenceKind, DocumentedReading]]:
    """(column, evidence a user reads, its published kind, the documentation's reading) per documented outcome."""
    out: list[tuple[str, str, TargetEvidenceKind, DocumentedReading]] = []
    resolved = [(col, evidence) for name, evidence in record.documented_outcomes.items()
                if (col := resolve_column(name, names)) is not None]
    # When the documentation names a column the roles read as an outcome, a covariate it also names is a
    # side fit, not the question: HistData/GaltonFamilies draws `abline(lm(father ~ mother))` over its
    # scatterplots of `childHeight`; a father's height is the parent's measure.
    studied = {col for col, _ in resolved if roles[col].role in ("outcome", "derived_copy")}
    if studied:
        resolved = [(col, evidence) for col, evidence in resolved if col in studied]
    modelled = {col for col, evidence in resolved if evidence.kind in ("fitted_model", "series_model")}
    for col, evidence in resolved:
        if weak_documentation(col, evidence, record, roles, modelled) is not None:
            continue
        role = roles[col]
        kind = documented_kind(evidence)
        if role.role == "derived_copy" and role.related and roles.get(role.related, role).role == "outcome":
            out.append((role.related, f"the documentation's response {evidence.text} (via {col!r}, "
                                      f"{role.evidence})", kind, evidence.kind))
        out.append((col, f"the documentation's response: {evidence.text}", kind, evidence.kind))
    return out


def hinted_column(record: DatasetRecord, names: list[str], roles: dict[str, ColumnRole]) -> str | None:
    """The column the source's hint names, or None. statsmodels' `endog_name` is its loader's convention
    (often the first column), not a curator's choice: when the title names one other outcome column (by
    its name or its own description) and not the hinted one, the hint is no evidence. statsmodels/engel's
    endog is `income`, but its title, "Engel (1857) food expenditure data", names `foodexp`, the response
    of the Engel curve (`income` read X blind)."""
    if not record.target_hint or (col := resolve_column(record.target_hint, names)) is None:
        return None
    if record.ref.lower().startswith("statsmodels"):
        named = [c for c in names if roles[c].role == "outcome" and _title_names(c, record)]
        if len(named) == 1 and col not in named:
            return None
    return col


def _title_names(name: str, record: DatasetRecord) -> bool:
    """The title names the column: by its name, or by two words or more of its own description's head."""
    return bool(_named_in(name, record.title)) or _title_words(record.column_descriptions.get(name, ""),
                                                               record.title)[0] >= 2


def documented_columns(record: DatasetRecord, names: list[str], roles: dict[str, ColumnRole]) -> list[str]:
    """The table's columns that the source's hint or the documentation name as the outcome, best first."""
    out = [c for c, *_ in _documented(record, names, roles)]
    if (stated := stated_target(record, names)) is not None:  # the card's own words (task_design.stated_target)
        out.append(stated.column)
    if (col := hinted_column(record, names, roles)) is not None:
        out.insert(0, col)
    return list(dict.fromkeys(out))


# A description that computes the column from others: vote1's shareA "100*(expendA/(expendA+expendB))",
# OJ's PriceDiff "Sale price of MM less sale price of CH", statsmodels macrodata's realint "Real interest
# rate (tbilrate - infl)" (a spaced minus, never a hyphen). A derived quantity is not what is studied.
_ARITHMETIC_DOC = pattern("derived.arithmetic-entry")


def _words(text: str, shortest: int = 5) -> set[str]:
    """Content words of at least `shortest` letters as 6-letter stems ("diabetic" and "diabetes" meet)."""
    return {prefix_stem(w) for w in letter_words(text) if len(w) >= shortest and w not in TITLE_FRAME_WORDS}


def _full_words(text: str) -> set[str]:
    return {w for w in letter_words(text) if len(w) >= 3 and w not in TITLE_FRAME_WORDS and w not in NOT_TOPICS}


def _meet(names: set[str], title: set[str]) -> set[str]:
    """The words of `names` (three letters or more) that a title word spells with an inflection's ending,
    a final "e" aside: reshape2's "Tipping data" and `tip`, pscl's "Reports of voting" and `vote`; not
    openintro/evals' `cls_profs` in "Professor evaluations", a word of another root."""
    return {w for w in names for t in title if inflects(w, t)}


# A title naming an influence on what it studies: DAAG/nassCDS's "Airbag and other influences on accident
# fatalities" names `airbag` as an influence (read X blind as the target), and "Effects of X on Y" names X.
_INFLUENCE_TITLE = pattern("covariate.influence-title")


def _studied_title(title: str) -> str:
    """The title without the influences it names."""
    if (m := _INFLUENCE_TITLE.search(title)) is None:
        return title
    start, end = m.span("x") if m.group("x") else m.span("x2")
    return title[:start] + title[end:]


def _title_words(doc: str, title: str) -> tuple[int, set[str]]:
    """How many words (4 letters or more) of the description's first sentence the studied title holds, and
    those words of the description."""
    words = _words(doc.split(".")[0], 4)
    return len(words & _words(_studied_title(title), 4)), words


def _named_in(name: str, title: str) -> set[str]:
    """The words of a column's name that the title names: the same 6-letter stem (4 letters or more), or
    the same word inflected (3 letters or more) when the name is that one word. A name the title gives as
    an influence of what it studies is not named (_studied_title)."""
    title = _studied_title(title)
    # The inflected word only for a one-word name: in a compound the title's word qualifies another
    # (modeldata/ames' `House_Style` under "The Ames Housing Data").
    single = len(_full_words(name)) == 1 and not re.search(r"[._\s-]", name.strip("._"))
    return (_words(name, 4) - NOT_TOPICS) & _words(title, 4) | (
        _meet(_full_words(name), _full_words(title)) if single else set())


def _computed_from_others(doc: str, name: str, others: list[str]) -> bool:
    if not _ARITHMETIC_DOC.search(doc):
        return False
    named = [o for o in others if o != name and len(o) >= 2 and re.search(rf"(?<![\w.]){re.escape(o)}(?![\w])", doc)]
    return bool(named) or bool(re.search(r"\bless\b(?!\s+than)|\bminus\b|\bdifference between\b", doc, re.I))


def fallback_score(name: str, record: DatasetRecord, others: list[str] | None = None) -> float:
    """How much a column reads as the studied outcome by its name and its own description (never its place)."""
    doc = record.column_descriptions.get(name, "")
    score = 0.0
    by_name = bool(_OUTCOME_NAME.search(name))
    if by_name:
        score += 2.0
    if _OUTCOME_DOC.search(statistical_wording(doc, record)):
        score += 0.75 if by_name else 1.5  # `income` documented as "income" is one piece of evidence, not two
    if _demographic(name, record):
        score -= 1.0
    if _RATIO_NAME.search(name) and not doc:
        score -= 1.0  # an undescribed ratio of other columns is no series of its own (DAAG/whoops' `ratio`)
    if doc and _computed_from_others(doc, name, others or []):
        score -= 1.5
    score += _title_score(name, doc, record.title)
    if doc:
        score += 0.25
    return score


def _title_score(name: str, doc: str, title: str) -> float:
    # The dataset is named after it: "Choice of Brand for Ketchup" and `choice`, wooldridge's "vote1" and
    # voteA. Whole words only: plm/Wages' `ind` is no part of "Individual".
    if name and _named_in(name, title):
        return 1.5
    if doc:
        shared, words = _title_words(doc, title)
        # "Metabolic Rate of Caterpillars" and Mrate, "metabolic rate"; "U.S. Women's Labor-Force
        # Participation" and lfp, "labor-force participation": the description is the title's words.
        # Two title words in a longer description are a topic, not the outcome (plm/Wages' `union`,
        # "individual's wage set by a union contract?" under "Panel Data of Individual Wages").
        return 2.0 if shared >= 2 and shared >= 0.6 * len(words) else 1.0 if shared else 0.0
    return 0.0


def _title_named(record: DatasetRecord, columns: list[str]) -> list[str]:
    """The outcome columns the title names by a word of their own name (a word that several names share,
    Ketchup's `Ketchup.` prefix, names none), or none at all when some column's description is the
    title's words (Stat2Data/Pulse: `Active`, "Pulse rate after exercise", not `Exercise`)."""
    if any(_title_score("", record.column_descriptions.get(c, ""), record.title) >= 1.5 for c in columns):
        return []
    named = {c: _named_in(c, record.title) for c in columns}
    words = {c: _words(c, 4) | _full_words(c) for c in columns}
    shared = {w for c in columns for w in words[c] if sum(w in words[o] for o in columns) > 1}
    return [c for c in columns if named[c] - shared]


# A price or a wage among the prices a table lists (a farm's seed, fertiliser and labour prices; each
# fishing mode's price): a price the unit faces, a regressor of its production or choice, not what the
# study measures. MIN_OTHER_PRICES other columns so described make the table one of prices.
_PRICE_WORD = pattern("covariate.price-name")
_PRICE_DOC = pattern("covariate.price-entry")
MIN_OTHER_PRICES = 2


def one_price_of_several(name: str, record: DatasetRecord) -> str | None:
    """The other price columns, when the column is a price (by name or own description) beside at least
    MIN_OTHER_PRICES columns whose own entries describe prices, or None."""
    docs = record.column_descriptions
    if not (_PRICE_WORD.search(name) or _PRICE_DOC.search(docs.get(name, ""))):
        return None
    # A column whose description names this one is its transform (wooldridge/engin's `lwage`, "log(wage)"), not
    # another price: `wage`, "monthly salary", beside `lwage` and `swage` is no table of prices.
    others = sorted(c for c, d in docs.items() if c != name and _PRICE_DOC.search(d) and not _transform_of(name, d))
    return ", ".join(others) if len(others) >= MIN_OTHER_PRICES else None


def _transform_of(name: str, doc: str) -> bool:
    """The description computes its column from `name`: "log(wage)", "wage^2", "male*educ"."""
    return applied_to(doc, name) or operand_of(doc, name, "-+*/^")


# A measure taken when the unit started, beside the same measure now: wooldridge/engin's `swage`, "starting
# wage", beside `wage`, "monthly salary" (read X blind: the starting wage predicted from the current one). Like
# a baseline it comes before what is studied; the twin is a column named by the measure's word or describing it.
_STARTING = pattern("covariate.starting-measure")


def starting_twin(name: str, record: DatasetRecord) -> str | None:
    """The column holding the measure this column's description says it took at the start, or None."""
    doc = record.column_descriptions.get(name, "")
    if (m := _STARTING.search(doc)) is None:
        return None
    word = m.group("w").lower()
    return next((c for c, d in sorted(record.column_descriptions.items()) if c != name and not _transform_of(name, d)
                 and not _STARTING.search(d) and (c.lower() == word or re.search(rf"\b{word}s?\b", d, re.I))), None)


# A Format entry shared by several columns ("Action, Animation, Comedy, ...: Binary variables representing if
# movie was classified as belonging to that genre", ggplot2movies/movies) describes a family, not one column:
# its words single out none of them (the genre flag `Animation` was read X blind). So do entries that differ
# only by a number ("Exam 1 grade", "Exam 2 grade", "Exam 3 grade": openintro/exam_grades' `exam1`, the first
# exam predicted from the later ones and the course grade, read X blind).
SHARED_ENTRY_MIN = 3
# Not a year ("1974", "'74"): `re74`/`re78` are the year rule's (task_design.roles), whose later year is an outcome.
_NUMBER = re.compile(r"(?<![\d'’])(?!(?:19|20)\d{2}(?!\d))\d+")


def shared_entry(name: str, record: DatasetRecord) -> bool:
    doc = _NUMBER.sub("#", record.column_descriptions.get(name, "").strip().lower())
    return bool(doc) and sum(_NUMBER.sub("#", d.strip().lower()) == doc
                             for d in record.column_descriptions.values()) >= SHARED_ENTRY_MIN


# An entry naming the occasion of something, not a measure of it: "Semester when grades were recorded"
# (openintro/exam_grades' `semester`, read X blind as the target), "Year in which the survey was taken".
_OCCASION_DOC = pattern("not-outcome.occasion-entry")


PARALLEL_HEAD = 3  # leading words two descriptions share when they describe parallel measures


def title_describes_another(name: str, record: DatasetRecord) -> bool:
    """A parallel column's own description (the same first PARALLEL_HEAD words: "a thermometer rating
    for ...") is the dataset's title's words as well: the title names the table's parallel measures,
    not one outcome among them. A related column (a linkage and the days to it) is no parallel measure."""
    docs = record.column_descriptions
    head = docs.get(name, "").lower().split()[:PARALLEL_HEAD]
    return len(head) == PARALLEL_HEAD and any(
        d.lower().split()[:PARALLEL_HEAD] == head and _title_score("", d, record.title) >= 1.5
        for c, d in docs.items() if c != name)


# The measure taken after the treatment, beside the same measure taken before it: what a trial set out to
# change (mediation/jobs' `depress2`, "Measure of depressive symptoms post-treatment.", beside `depress1`,
# "Measure of depressive symptoms pre-treatment.", which task_design.roles reads as a baseline covariate).
# "post-treatment" says when the measure was taken, not what the design set, so _SET_BY_DESIGN's "treatment"
# does not hold it back; its description words (the timing aside) must be the earlier column's exactly.
_AFTER_TREATMENT = pattern("outcome.after-treatment-entry")
_BEFORE_TREATMENT = pattern("covariate.before-treatment-entry")


def post_treatment_twin(name: str, record: DatasetRecord) -> str | None:
    """The column measuring the same before the treatment, when this column's own description says it was
    measured after it and the two descriptions differ only by that timing, or None."""
    docs = record.column_descriptions
    doc = docs.get(name, "")
    if not _AFTER_TREATMENT.search(doc) or not (measure := _words(_AFTER_TREATMENT.sub(" ", doc), 4)):
        return None
    return next((c for c, d in sorted(docs.items()) if c != name and _BEFORE_TREATMENT.search(d)
                 and _words(_BEFORE_TREATMENT.sub(" ", d), 4) == measure), None)


def _named_as_title(name: str, record: DatasetRecord) -> bool:
    """The dataset is named after this column, whole: wooldridge's "return" and its `return` (the stock's
    return, the study's outcome), above `salary` (the CEO's salary, a regressor), whose "salary" scores higher
    by its word alone."""
    return record.title.strip().lower() == name.lower()


def outcome_reading(name: str, record: DatasetRecord, score: float, class_like: bool,
                    sole_title_name: bool) -> tuple[str, str] | None:
    """(evidence kind, why) when the column's own entry reads as a measured outcome, or None. It needs a
    score of at least FALLBACK_FLOOR and no design, treatment or censoring wording; then either a
    description that says so (for a class column, in words a class can mean), a description in the
    title's words, the title naming this column and no other (`sole_title_name`: Cowles' "Data on
    Volunteering" and `volunteer`), or its outcome name beside its description. A column whose
    description is absent or says nothing ("a numeric vector") reads as an outcome only by a
    conventional name or as the title's sole column."""
    doc = record.column_descriptions.get(name, "").strip()
    if not (_DEMOGRAPHIC.match(name) or _DESIGN_NAME.match(name)) and (twin := post_treatment_twin(name, record)):
        return ("outcome_description", f"its description says {_AFTER_TREATMENT.search(doc).group(0)!r}, beside the "
                                       f"same measure before it, {twin!r}")
    # A `group` its own entry calls diagnostic is what the patients have, not an arm the study set.
    design_named = _DESIGN_NAME.match(name) and not _DIAGNOSTIC_ENTRY.search(doc)
    if score < FALLBACK_FLOOR or _SET_BY_DESIGN.search(doc) or design_named or _demographic(name, record):
        return None
    if (doc and not GENERIC_ENTRY.match(doc) and shared_entry(name, record)) or starting_twin(name, record) or (
            _OCCASION_DOC.search(doc)):
        return None
    if not doc or GENERIC_ENTRY.match(doc):
        if _CONVENTIONAL_OUTCOME_NAME.match(name):
            return "outcome_name", f"its conventional outcome name {name!r} (no description of its own)"
        if sole_title_name:
            return "outcome_name", "the dataset's title names it and no other column (no description of its own)"
        return None
    another_unit = _GENERIC_PHRASE.search(doc) or one_price_of_several(name, record)
    wording = statistical_wording(doc, record)  # "response rate to mailings" is no response
    if (m := (_CLASS_OUTCOME_DOC if class_like else _OUTCOME_DOC).search(wording)) is not None and (
            not (_GENERIC_QUANTITY.match(m.group(0)) or another_unit) or (
                _the_subject(m.group(0), record) and not _qualified_otherwise(m.group(0), doc, record))) and (
            not _RATIO_DOC.search(doc)):
        return "outcome_description", f"its description says {m.group(0)!r}"
    if _title_score("", doc, record.title) >= 1.5 and not title_describes_another(name, record):
        return "outcome_description", "its description is the dataset's title"
    if sole_title_name:
        # A title naming several columns names the study's topics, often covariates among them
        # (Stat2Data/Pulse's `Exercise`, "Typical hours of exercise (per week)", beside the pulse rates).
        return "outcome_description", "the dataset's title names it and no other column"
    if (_OUTCOME_NAME.search(name) and not (class_like and _QUANTITY_NAME.match(name))
            and (not (_GENERIC_NAME.match(name) or another_unit) or _the_subject(name, record))):
        return "outcome_description", f"its name {name!r} reads as an outcome"
    return None


def response_sentences(record: DatasetRecord) -> list[str]:
    """The sentences of the dataset's description that name its response in words."""
    return [s for s in re.split(r"(?<=[.;])\s+", record.description) if _PROSE_RESPONSE.search(s)]


def described_by(doc: str, sentence: str) -> bool:
    """The column's own description is what the sentence names: at least two of its words and
    PROSE_MATCH of them are in it ("number of days absent from school." in "the number of days absent
    from school is the response variable"; not "the school type, a factor with levels ...")."""
    words = _words(doc, 4)
    return len(words) >= 2 and len(words & _words(sentence, 4)) >= PROSE_MATCH * len(words)


# Words that qualify a quantity without naming another one ("Test Score", "Average reading score").
_PLAIN_QUALIFIER = frozenset({"test", "tests", "exam", "exams", "examination", "average", "mean", "median", "total",
                              "overall", "final", "student", "students", "pupil", "pupils", "school", "standardized",
                              "standardised", "raw", "composite", "combined", "annual", "monthly", "weekly", "daily",
                              "hourly", "yearly", "their", "the", "and", "of", "on", "in", "for"})


def _qualified_otherwise(word: str, doc: str, record: DatasetRecord) -> bool:
    """The title names this quantity word with a qualifier the column's own description lacks, while the
    description qualifies it with another: mlmRev/bdf's "Language Scores of 8-Graders" and `IQ.verb`, "verbal IQ
    scores" (read X blind: the documented response is the language test). A plain qualifier ("Test Score",
    "Average reading score") names no other quantity."""
    w = re.escape(word.lower().rstrip("s"))
    before = re.compile(rf"\b([a-z][a-z-]+)\s+{w}s?\b")
    title_q = {q for q in before.findall(record.title.lower()) if q not in _PLAIN_QUALIFIER}
    doc_q = {q for q in before.findall(doc.lower()) if q not in _PLAIN_QUALIFIER}
    doc_stems = {t[:5] for t in re.findall(r"[a-z]+", doc.lower())}
    return bool(title_q) and bool(doc_q) and not any(q[:5] in doc_stems for q in title_q)


def _the_subject(words: str, record: DatasetRecord) -> bool:
    """The title names this quantity: a word of it (4 letters or more) begins or sits inside one of the
    title's (wooldridge's "hprice2" and "price"). Not the description, which often lists every column
    (HSAUR/Forbes2000: "sales, profits, assets and market value")."""
    stems = {w[:5] for w in re.findall(r"[a-z]+", words.lower()) if len(w) >= 4}
    subject = re.findall(r"[a-z]+", record.title.lower())
    return any(stem in w for stem in stems for w in subject)


def targetable(record: DatasetRecord, profile: DatasetProfile, roles: dict[str, ColumnRole],
               eligible: list[str]) -> list[str]:
    """The eligible columns that may be a target at all: outcomes, and soft-role columns that the
    source's hint or the documentation names (any designer, the LLM's included, keeps to these)."""
    named = set(documented_columns(record, profile.names, roles))
    return [c for c in eligible if roles[c].role == "outcome" or (roles[c].role in SOFT_ROLES and c in named)]


def rank_targets(record: DatasetRecord, profile: DatasetProfile, roles: dict[str, ColumnRole],
                 eligible: list[str], rng: np.random.Generator) -> list[RankedTarget]:
    """The eligible columns (already feasible by type) that may be a target, best first."""
    names = profile.names
    allowed = targetable(record, profile, roles, eligible)
    ranked: list[RankedTarget] = []
    seen: set[str] = set()

    def push(col: str, evidence: str, tier: int, kind: TargetEvidenceKind, score: float = 0.0,
             reading: DocumentedReading | None = None) -> None:
        if col in allowed and col not in seen:
            seen.add(col)
            ranked.append(RankedTarget(col, evidence, tier, kind, score, reading))

    if (col := hinted_column(record, names, roles)) is not None:
        push(col, f"source hint: {_source_name(record)} = {record.target_hint!r}", 0, "source_hint")
    for col, evidence, kind, reading in _documented(record, names, roles):
        push(col, evidence, 1, kind, reading=reading)
    classes = {c.name: c.n_unique for c in profile.columns if c.kind == "categorical" or (
        c.kind == "numerical" and c.n_unique <= MAX_STATED_CLASSES)}
    if (stated := stated_target(record, names, classes)) is not None:
        push(stated.column, stated.evidence, 1, "documented_response")
    outcomes = [c for c in allowed if roles[c].role == "outcome" and c not in seen]
    tie = {c: float(r) for c, r in zip(outcomes, rng.random(len(outcomes)))}
    scores = {c: fallback_score(c, record, names) for c in outcomes}
    outcome_columns = [c for c in names if roles[c].role == "outcome"]  # every outcome, the seen ones too
    title_named = _title_named(record, outcome_columns)
    # The description names the response in words: the column it describes is the outcome, and no other
    # column reads as one by its own words (schooldays' `school`, named in the title, beside `absent`).
    prose = response_sentences(record)
    described = {c: s for c in outcomes for s in prose if described_by(record.column_descriptions.get(c, ""), s)}
    # The dataset's own wording singles out what it studies (task_design.study_subject): first among the
    # fallback's readings, unless it is who the unit is or what the design set, or the description already
    # names the response in words, or a column's own entry calls it the response or outcome (each the
    # stronger reading: a local table titled "Clinic visits" whose `label` is "the outcome").
    own_response = any(_says_response(record.column_descriptions.get(c, ""), record) for c in outcomes)
    subject = None if prose or own_response else study_subject(record, outcome_columns)
    if subject is not None and subject.column in scores and not (
            _demographic(subject.column, record) or _DESIGN_NAME.match(subject.column)
            or _SET_BY_DESIGN.search(record.column_descriptions.get(subject.column, ""))):
        push(subject.column, f"study subject among {len(outcomes)} outcome candidates (score "
                             f"{scores[subject.column]:.2f}: {subject.why})", 3, "study_subject",
             scores[subject.column])
    # A measure after the treatment (beside its pre-treatment twin) and the column the dataset is named after
    # read first: their own words tell the outcome better than a score of outcome words.
    for col in sorted(outcomes, key=lambda c: (c not in described, post_treatment_twin(c, record) is None,
                                               not _named_as_title(c, record), -scores[c], tie[c])):
        column = profile.column(col)
        reading = (("outcome_description", f"its description is the response the documentation names: "
                                           f"{described[col]!r}") if col in described else None if prose else
                   outcome_reading(col, record, scores[col], column.kind != "numerical" or column.n_unique <= 10,
                                   title_named == [col]))
        kind: TargetEvidenceKind = reading[0] if reading else "ranked_fallback"
        push(col, f"{kind.replace('_', ' ')} among {len(outcomes)} outcome candidates (score {scores[col]:.2f}: "
                  f"{reading[1] if reading else roles[col].evidence})", 3, kind, scores[col])
    return with_described_subject(record, roles, ranked)


# An experiment's or a trial's own wording: what the study set, so its table's other column is what it measured.
_EXPERIMENT = pattern("experiment.arm-description")


def _sole_measure(record: DatasetRecord, roles: dict[str, ColumnRole], candidates: list[str]) -> StudySubject | None:
    """An experiment's table of its arms and one more column: that column is what the experiment measured
    (openintro/sinusitis' `self_reported_improvement` beside `group`, "treatment or control")."""
    arms = [c for c, r in roles.items() if r.role == "design_factor"]
    measured = [c for c, r in roles.items() if r.role not in ("design_factor", "identifier", "row_index")]
    if not arms or len(candidates) != 1 or measured != candidates or not _EXPERIMENT.search(
            f"{record.title} {record.description[:600]}"):
        return None
    return StudySubject(candidates[0], f"the experiment's table holds its arm {arms[0]!r} and this one measure")


# The words that mark a target read by the last resort, in its evidence.
LAST_RESORT = "none of them reading as an outcome by its own words"


def with_described_subject(record: DatasetRecord, roles: dict[str, ColumnRole],
                           ranked: list[RankedTarget]) -> list[RankedTarget]:
    """The ranked targets, led by the column that the description describes as what was measured
    (task_design.study_subject.described_subject) or an experiment's one measure, when no column has any
    other evidence: a last resort, which never displaces a documented or outcome-reading column. Who
    the unit is and what the design set are never it, as for the study subject."""
    if any(has_evidence(r) for r in ranked):
        return ranked
    fallback = {r.column: r for r in ranked}
    outcome_columns = [c for c, r in roles.items() if r.role == "outcome"]
    attributes = [c for c in roles if _DEMOGRAPHIC.match(c)]
    subject = (described_subject(record, outcome_columns) or title_measure(record, outcome_columns, attributes)
               or _sole_measure(record, roles, list(fallback)))
    if subject is None or subject.column not in fallback or (
            _DEMOGRAPHIC.match(subject.column) or _DESIGN_NAME.match(subject.column)
            or _SET_BY_DESIGN.search(record.column_descriptions.get(subject.column, ""))):
        return ranked
    was = fallback[subject.column]
    chosen = RankedTarget(was.column, f"study subject among {len(fallback)} outcome candidates, "
                                      f"{LAST_RESORT} ({subject.why})", 3, "study_subject", was.score)
    return [chosen] + [r for r in ranked if r.column != was.column]


def is_last_resort(choice: RankedTarget) -> bool:
    """Whether the target rests on the last resort (with_described_subject): a second task never does, since
    the first task's evidence shows that the dataset's columns do read as outcomes by their own words."""
    return choice.kind == "study_subject" and LAST_RESORT in choice.evidence


def has_evidence(choice: RankedTarget) -> bool:
    """Evidence enough for a tabular target, first or second: documented, the LLM's, or an outcome reading."""
    return choice.kind != "ranked_fallback"


def role_exclusions(roles: dict[str, ColumnRole]) -> dict[str, str]:
    """Why each non-outcome column is not a target candidate."""
    return {c: f"{r.role.replace('_', ' ')}: {r.evidence}" for c, r in roles.items() if r.role != "outcome"}
