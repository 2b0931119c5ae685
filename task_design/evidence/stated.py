"""The registry's entries for a card's plain statement of its target (issue 41, item 1), applied by
task_design.stated_target: "the target variable is ...", "Target: Column 11 ...", "... as the target", "the goal
of this dataset is to predict ...", "classify ... into 7 classes", "the response variable represents the number
of ...". Each matcher captures the words that name the target (group `x`; `before`, the words before "as
the target"; `n`/`k`, a position or a count of classes); task_design.stated_target links them to ONE column by its name or its own description, and a
statement that fits two columns abstains. Kept apart from task_design/evidence/rules.py so that its entries
and these merge independently; task_design.evidence joins both into one registry.

Priorities 521-535 sit between the outcome wording of a column's entry (500) and the covariate readings
(580 and above): a statement of the card is read before any column's wording, and the strongest statement
that fires decides (task_design.stated_target.stated_target)."""

from __future__ import annotations

import re

from task_design.evidence.rule import Case, Rule

OWNER = "task_design.stated_target"
# The words after a statement's verb, up to the sentence's end: what the card says the target is.
_REST = r"(?P<x>[^.;!?\n]{1,160})"
_NUMBER_WORDS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
_COUNT = r"(?P<k>\d{1,2}|" + "|".join(_NUMBER_WORDS) + r")"
# "**Target**", "`Churn`", "'species'": Markdown emphasis and quotes around a name.
_MARK = r"[*_`'\"“”‘’]{0,4}"
_MARK_RUN = r"[*_`'\"“”‘’]*+"  # the same, taken whole where nothing before it can take a mark
# "estimate the effect of college on earnings" names an influence, not what is predicted.
_NOT_CAUSAL = r"(?!(?:the\s+|an?\s+)?(?:causal\s+)?(?:effects?|impacts?|influences?|relationships?|associations?)\b)"

STATED_RULES = (
    Rule(
        id='stated.target-entry', reads='entry', verdict='outcome', priority=535, owner=OWNER,
        statement=("A column whose own entry calls it the target, target variable or label to predict (\"(Target "
                   "Variable) Whether the customer churned\", \"**Target**: Yes or No\") is the card's target, "
                   "when no other column's entry says so."),
        matcher=re.compile(r"^\W*target\b(?!\s+(?:audience|market|group|price|customers?|population|area|"
                           r"date|of|for|to)\b)|\(\s*target(?:\s+(?:variable|column|label))?\s*\)|"
                           r"\btarget\s+(?:variable|column|label|attribute)\b(?!\s+(?:of|for)\b)|"
                           r"\b(?:label|class|value) to (?:be )?predict(?:ed)?\b", re.I),
        cases=(Case('(Target Variable) Whether the customer churned (1 = Yes, 0 = No)', True),
               Case('**Target**: Yes or No', True), Case('Target variable: whether the dog is healthy', True),
               Case('the class label to predict', True), Case('Target audience of the campaign', False),
               Case("the analyst's target price for the stock", False), Case('weight in kg', False),)),
    Rule(
        id='stated.target-line', reads='description', verdict='outcome', priority=534, owner=OWNER,
        statement=("A line of a card's features list whose head is a column and whose text or bracket marks it "
                   "as the target, label or output (\"Personality: Target variable (Extrovert/Introvert)\", "
                   "\"placed (Label) - placement status\") names that column."),
        # Linear on one line of a thousand backticks (tests/test_hostile_patterns.py): the bullets and the
        # marks before the name are taken whole (possessive) and never cross a line, the marks after it are
        # few, and each run of spaces is one run (`\s*\(?\s*` would try every split of it).
        matcher=re.compile(r"^[ \t*+•#>|-]*+(?:\d+[.)]\s*+)?" + _MARK_RUN + r"(?P<x>[^:\n–—|(.;,!?]{1,40}?)" +
                           _MARK + r"\s*+(?:\(\s*+(?:target|label|output|class)(?:\s++variable)?\s*+\)" + _MARK +
                           r"\s*+(?:[:–—|-]|$)|[:–—|-]\s*+" + _MARK + r"(?:\(\s*+)?(?:the\s++)?target\b"
                           r"(?!\s+(?:audience|market|group|price|customers?|population|area|date|of|for|to)\b))",
                           re.I | re.M),
        cases=(Case('        - Personality: Target variable (Extrovert/Introvert).', True),
               Case('7) placed (Label) – Placement status of the individual.', True),
               Case('Virus Present: Target label indicating infection', True), Case('Label (Output):', True),
               Case('Campaign: target audience of the mailing', False), Case('Age: age in years', False),)),
    Rule(
        id='stated.column-position', reads='description', verdict='outcome', priority=533, owner=OWNER,
        statement=("A card saying \"Target: Column N\" (scikit-learn's DESCR) or \"column N is the target\" names "
                   "the table's Nth column as its target."),
        matcher=re.compile(r"\btarget\W{0,3}\s*(?:is\s+)?(?:the\s+)?column\s+(?P<n>\d{1,3})\b|"
                           r"\bcolumn\s+(?P<n2>\d{1,3})\s+(?:is|holds|contains)\s+the\s+(?:\w+\s+)?target\b", re.I),
        cases=(Case('Target: Column 11 is a quantitative measure of disease progression', True),
               Case('column 5 is the class target', True), Case('Column 11: body mass index', False),
               Case('the target is in the last column', False),)),
    Rule(
        id='stated.target-is', reads='description', verdict='outcome', priority=531, owner=OWNER,
        statement=("A sentence saying what the target (variable, column or label) is — \"the target variable is "
                   "whether a dog is healthy\", \"Binary target column: Healthy\", \"Target Variable: Churn\" — "
                   "names it, by a column's name or its own description."),
        matcher=re.compile(r"\b(?:the\s+)?(?:(?:binary|multi-?class|categorical|numeric(?:al)?|continuous|"
                           r"main|primary|prediction|classification|regression)\s+)?(?:target|output(?=\s+(?:variable|parameter|attribute|column)))"
                           r"(?:\s+(?:variable|column|label|attribute|feature|field|parameter))?" + _MARK +
                           r"\s*(?:\((?P<paren>[^)\n]{1,60})\)\s*)?(?:is|are|will be|would be|:|-|–|=)\s*" + _REST +
                           r"|\btarget\s+(?:variable|column|label)\s+(?P<x2>[`*'\"“‘]+[^`*'\"”’\n]{1,40}[`*'\"”’]+)"
                           r"|\bincluding\s+(?:the\s+)?target\s+(?:variable\s+|column\s+)?(?P<x3>[^\s,;)]+)",
                           re.I),
        cases=(Case('the target variable is whether a dog is considered healthy', True),
               Case('- Binary target column: Healthy (Yes/No)', True), Case('Target Variable: Churn', True),
               Case('The target is the approval rating', True),
               Case('with the continuous target variable `Calories`', True),
               Case('Columns: 6 (including target focus_score)', True), Case('Output Parameter: density', True),
               Case('the output of the sensor is logged', False), Case('the target audience is young adults', False),
               Case('targets were set by the ministry', False),)),
    Rule(
        id='stated.as-target', reads='description', verdict='outcome', priority=529, owner=OWNER,
        statement=("A card naming a column \"as the target\" or saying it \"is the (classification) target\" "
                   "(\"Binary classification with Healthy as the target\", \"... classification target (species)"
                   "\") names that column."),
        matcher=re.compile(r"(?<![\w`*'\"“”‘’.-])(?P<before>[\w`*'\"“”‘’.-]+(?:\s+[\w`*'\"“”‘’.-]+){0,3})\s+(?:as|is)\s+(?:the|its|our)\s+"
                           r"(?:\w+\s+)?target\b(?!\s+(?:audience|market|group|price|population|area)\b)|"
                           r"\b(?:classification|regression|prediction)\s+target\s*\((?P<paren>[^)\n]{1,60})\)",
                           re.I),
        cases=(Case('Binary classification with Healthy as the target', True),
               Case('a multi-class classification target (species)', True),
               Case('species is the target', True), Case('young adults as the target audience', False),
               Case('met the annual target', False),)),
    Rule(
        id='stated.goal-predict', reads='description', verdict='outcome', priority=527, owner=OWNER,
        statement=("A card saying its goal, aim, task or purpose is to predict, classify, forecast or estimate "
                   "something (\"The goal of this dataset is to predict COVID-19's death rate\") names that "
                   "quantity as the target."),
        matcher=re.compile(r"\b(?:goal|aim|objective|purpose|task|challenge|intention)\b(?:\s+of\s+(?:this|the)\s+"
                           r"(?:dataset|data|data ?set|competition|challenge|project|study))?\s+(?:is|was)\s+to\s+"
                           r"(?:accurately\s+)?(?:predict|classify|forecast|estimate|model|determine)\s+" + _NOT_CAUSAL + _REST,
                           re.I),
        cases=(Case("The goal of this dataset is to predict COVID-19's death rate", True),
               Case('the task is to classify each mushroom as edible or poisonous', True),
               Case('The goal of the survey was to reach every household', False),
               Case('we predict the price', False),)),
    Rule(
        id='stated.predicting', reads='description', verdict='outcome', priority=525, owner=OWNER,
        statement=("A card that is \"for predicting\" something, \"centers on predicting\" it, or lists a use case "
                   "\"Predict ...\", names that quantity as what its rows are for, read only when no stronger "
                   "statement fires."),
        matcher=re.compile(r"(?:\b(?:for|on|used to|designed to|intended to|can be used to|allows? (?:you )?to|"
                           r"use (?:it|this dataset|this data|the data) to|models? to)\s+|^(?:[^\S\n]|[*+•-])*+)"
                           r"(?:predict(?:ing)?|forecast(?:ing)?|classify(?:ing)?|estimat(?:e|ing))\s+" + _NOT_CAUSAL + _REST,
                           re.I | re.M),
        cases=(Case('This dataset is for predicting hybrid nanofluid density', True),
               Case('centers on predicting caloric energy expenditure', True),
               Case('- Predict student final grades using decision trees', True),
               Case('Build machine learning models to predict personality types.', True),
               Case('predicted values for the test set', False), Case('a prediction interval', False),
               Case('we did not predict anything', False),
               Case('used to estimate the effect of college education on earnings', False),)),
    Rule(
        id='stated.k-classes', reads='description', verdict='class_outcome', priority=523, owner=OWNER,
        statement=("A card saying its instances are classified into K classes (\"features that describe image "
                   "segments into 7 classes\", \"a 3-class problem\") names the one categorical column with "
                   "exactly K values."),
        matcher=re.compile(r"\binto\s+(?:one\s+of\s+)?" + _COUNT + r"\s+(?:\w+\s+)?(?:classes|categories|types|"
                           r"labels)\b|\b" + _COUNT.replace("?P<k>", "?P<k2>") + r"[- ]class\s+"
                           r"(?:classification|problem|task|target)\b", re.I),
        cases=(Case('features that describe image segments into 7 classes', True),
               Case('a 3-class problem', True), Case('the wines are classified into three types', True),
               Case('a sample of 7 classes of a school', False), Case('divided into 7 groups of workers', False),)),
    Rule(
        id='stated.response-represents', reads='description', verdict='outcome', priority=521, owner=OWNER,
        statement=("A sentence saying what the response (or target, dependent) variable represents or measures "
                   "(\"the response variable represents the number of visits\") names the column documented as "
                   "that quantity."),
        matcher=re.compile(r"\b(?:response|dependent|outcome|target)\s+variable\s+(?:represents|measures|counts|"
                           r"records|gives|denotes|indicates)\s+" + _REST, re.I),
        cases=(Case('The response variable represents the number of doctor visits', True),
               Case('the dependent variable measures hours worked', True),
               Case('the response variable is weight gain', False), Case('response rates vary', False),)),
)
