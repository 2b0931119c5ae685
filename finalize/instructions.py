"""The instruction texts: question_v1 (IF) spells out every step of the reference
workflow in order; question_v2 (MM) asks for free modelling.

The wording follows the published DARE-bench tasks. Columns are named by their
natural-language description where the dataset documents one, with the column
name in backticks beside it so that the instruction is never ambiguous.
"""

from __future__ import annotations

import json
import re

from pipeline.core import names
from pipeline.core.csv_convention import QUESTION_V1_PHRASE
from pipeline.core.if_workflow import MULTI_OUTPUT_WRAPPED, make_model
from pipeline.core.records import DatasetRecord, JoinStep, TaskSpec
from postprocess.relational import task_join_path

PREAMBLE = (
    "Please complete the task as described below without asking any follow-up questions or requesting "
    "additional information. "
)
_FORMAT_WORD = {"csv": "CSV", "parquet": "Parquet", "sqlite": "SQLite"}
_IMPUTER_WORDS = {
    "mean": "the mean",
    "median": "the median",
    "most_frequent": "the most frequent value",
}
# R documentation often opens a column's entry with its storage type ("a numeric
# vector", "Factor.") or is nothing but its level list ("a factor with levels: no;
# yes"); neither says what the column means, so both are cut from the phrase.
_LEVELS = re.compile(r"[,;:]?\s*\b(an? )?(ordered )?factor\b.*$", re.I)
_BOILERPLATE = re.compile(
    r"^(an? )?(numeric|integer|logical|character|double)( vector| variable)?[\s.:,;-]*"
    r"((with|giving|indicating|coded)\b[\s:]*)?",
    re.I,
)
MAX_PHRASE = 90


def column_phrase(column: str, descriptions: dict[str, str]) -> str:
    """`the number of years of education (`education`)`, or just `` `education` ``."""
    desc = (descriptions.get(column) or "").strip()
    desc = re.sub(r"^(an? )?factor\.\s*", "", desc, flags=re.I)  # "Factor. Does the ..." keeps its question
    desc = _LEVELS.sub("", desc).strip()
    desc = _BOILERPLATE.sub("", desc).strip()
    desc = re.split(r"(?<=[a-z0-9)])\.\s", desc, maxsplit=1)[0].strip().rstrip(".;:,")
    if len(desc) > MAX_PHRASE:
        desc = desc[:MAX_PHRASE].rsplit(" ", 1)[0].rstrip(".;:,(") + "…"
    if len(desc) < 3 or desc.lower() == column.lower():
        return f"`{column}`"
    if len(desc) > 1 and desc[0].isupper() and not desc[1].isupper():
        desc = desc[0].lower() + desc[1:]
    return f"{desc} (`{column}`)"


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    if len(items) == 2:
        return f"{items[0]} and {items[1]}"
    return ", ".join(items[:-1]) + f", and {items[-1]}"


def _features(kind: str, n: int) -> str:
    return f"a {kind} feature" if n == 1 else f"{kind} features, in the listed order"


def format_number(value) -> str:
    # repr is the shortest text that reads back as the same float, so an agent
    # filtering with these bounds keeps exactly the rows the reference keeps.
    return str(value) if isinstance(value, int) else repr(float(value))


def quoted_value(value) -> str:
    """A category value as the instruction spells it: a JSON string, so quotes and backslashes are escaped."""
    return json.dumps(str(value), ensure_ascii=False)


def _range_rule(column: str, allowed: list, kind: str, descriptions: dict[str, str]) -> str:
    phrase = column_phrase(column, descriptions)
    if kind == "numerical":
        return f"{phrase} between {format_number(allowed[0])} and {format_number(allowed[1])} inclusive"
    values = ", ".join(quoted_value(v) for v in allowed)
    return f"{phrase} limited to the values {values}"


def column_descriptions(record: DatasetRecord, spec: TaskSpec) -> dict[str, str]:
    """What the IF text names columns by: the source's own documentation wins, and a
    designer's phrase (spec.feature_descriptions) only fills a gap."""
    return {**spec.feature_descriptions, **{c: t for c, t in record.column_descriptions.items() if t.strip()}}


def _relational_load(train_file: str, join_path: list[JoinStep]) -> tuple[str, str]:
    """The load and first-step sentences of a relational task: every join, its tables, keys and type."""
    fact = join_path[0].left
    dims = _join([f"`{s.right}`" for s in join_path])
    load = (f"You are given access to a training SQLite file `{train_file}`, a relational database: the fact table "
            f"`{fact}` holds one row per training example and the dimension table{'s' if len(join_path) > 1 else ''} "
            f"{dims} hold{'' if len(join_path) > 1 else 's'} further attributes, linked by the foreign keys it "
            "declares; these tables must be joined to reconstruct the full training dataset.")
    joins = [f"left join `{s.right}` on `{s.left}`.`{s.left_on}` = `{s.right}`.`{s.right_on}`" for s in join_path]
    first = (f"First, reconstruct the full training dataset from `{train_file}`: start from the table `{fact}` and, "
             f"in this order, {_join(joins)}. Each join is many-to-one onto a unique key and keeps every row of the "
             "left side, so the result has exactly one row per row of "
             f"`{fact}`; after each join drop the right key column, which repeats the left one.")
    return load, first


def _targets(spec: TaskSpec, plural: str = "the target columns", singular: str = "the target column") -> str:
    """`the target column `y`` or, for a target list, `the target columns `a`, `b`, and `c``."""
    cols = [f"`{t}`" for t in spec.target]
    return f"{singular} {cols[0]}" if len(cols) == 1 else f"{plural} {_join(cols)}"


def question_v1(record: DatasetRecord, spec: TaskSpec) -> str:
    d = column_descriptions(record, spec)
    ftype = spec.save_file_type
    train_file = names.data_file(names.TRAIN_V1, ftype)
    val_file = names.data_file(names.VAL_V1, ftype)
    target = _targets(spec)
    join_path = task_join_path(record, spec)
    if join_path:  # a relational source: the agent gets its tables and must do the joins itself
        load, first = _relational_load(train_file, join_path)
    elif ftype == "sqlite":
        load = (f"You are given access to a training SQLite file `{train_file}`, which contains multiple tables "
                f"sharing the key column `{names.ROW_ID}`; these tables must be joined on `{names.ROW_ID}` to "
                "reconstruct the full training dataset.")
        first = f"First, join all of the tables in `{train_file}` on `{names.ROW_ID}` to reconstruct the full training dataset."
    else:
        load = f"You are given access to a training {_FORMAT_WORD[ftype]} file `{train_file}` containing the training data."
        first = f"First, load the training data from `{train_file}`."
        if ftype == "csv":  # DARE-bench's CSV convention (pipeline.core.csv_convention), in its own words
            first = f"First, load the training data from `{train_file}`, {QUESTION_V1_PHRASE}."
    intro = (
        PREAMBLE + "Proceed under the assumption that all required information is provided. " + load
        + f" You are also provided with a metadata file `{names.METADATA_TXT}` that describes the original dataset "
        f"and each of its columns. Your task is to perform {spec.problem_type} using this data and predict "
        f"{target} for the validation set located in `{val_file}`. Unless stated otherwise, use "
        "default parameters for all steps including model training and preprocessing."
    )
    rules = "\n".join(
        f"{i}. {_range_rule(c, spec.expected_ranges[c], spec.column_type_inference[c], d)}"
        for i, c in enumerate(spec.expected_ranges, start=1)
    )
    filtering = (
        f"{first} Next, filter the training dataset using the expected ranges defined in the following order, "
        "while retaining any rows that have missing values in the relevant columns and excluding only those rows "
        "whose known (non-missing) values violate these ranges:\n" + rules
    )
    nums = [column_phrase(c, d) for c in spec.numerical_features]
    cats = [column_phrase(c, d) for c in spec.categorical_features]
    selected = [column_phrase(c, d) for c in spec.selected_features]
    typing = []
    if nums:
        typing.append(f"Treat {_join(nums)} as {_features('numeric', len(nums))}")
    if cats:
        typing.append(f"{'treat' if nums else 'Treat'} {_join(cats)} as {_features('categorical', len(cats))}")
    typing_sentence = ", and ".join(typing) + "."
    if not cats:
        typing_sentence += " There are no categorical features."
    if not nums:
        typing_sentence += " There are no numeric features."
    selection = (
        f"After filtering, drop any training rows {_targets(spec, 'in which any of the targets', 'whose target')} "
        "is missing. Then select only the "
        f"following features for model training, in this order: {_join(selected)}. {typing_sentence}"
    )

    has_seed = "random_state" in make_model(spec.model_type, 0).get_params()
    seed_clause = (f" with random_state set to {spec.random_state} and all other parameters at their defaults"
                   if has_seed else " with its default parameters")
    if len(spec.target) > 1:  # exactly what DARE-bench's reference template does with a target list
        seed_clause += (", wrapped in scikit-learn's MultiOutputClassifier (one model per target column)"
                        if spec.model_type in MULTI_OUTPUT_WRAPPED else
                        ", fitted on all target columns at once (it supports several outputs natively)")
    modelling = (
        f"Handle missing values by imputing {_IMPUTER_WORDS[spec.imputer_type]} (\"{spec.imputer_type}\") for the "
        "numeric features and the most frequent value (\"most_frequent\") for the categorical features. Preprocess "
        "the data by applying a standard scaler to the numeric features and a one-hot encoder to the categorical "
        "features with handle_unknown set to \"ignore\" and sparse_output set to False, combined in a "
        "ColumnTransformer with the numeric features first and the categorical features second. Train a single "
        f"{spec.model_type} model using scikit-learn{seed_clause}. Finally, load the validation set from `{val_file}`, make predictions and save the results to a "
        f"CSV file at `{names.PREDICTION}`. The file must contain the column `{names.ROW_ID}` (as provided in the "
        f"original `{val_file}`) and the corresponding predictions in {_targets(spec, 'columns named', 'a column named')}, with each "
        "prediction aligned to its row_id so that performance can be computed correctly."
    )
    return "\n\n".join([intro, filtering, selection, modelling])


def question_v2(spec: TaskSpec) -> str:
    ftype = spec.save_file_type
    train_file = names.data_file(names.TRAIN_V2, ftype)
    val_file = names.data_file(names.VAL_V2, ftype)
    return (
        PREAMBLE + "Your task is to achieve good performance while balancing training time and accuracy in the "
        f"sandbox. You are provided with a processed dataset, along with a metadata file `{names.METADATA_TXT}` that "
        f"describes the original dataset and each of its columns. Load data in `{train_file}` as your full training "
        f"set. Once that's done, using only CPU resources, train a {spec.problem_type} model on this training data. "
        f"Then use `{val_file}` to generate a prediction for {_targets(spec, 'each of', '').strip()} for each "
        f"`{names.ROW_ID}`. The model "
        f"should output a file named `{names.PREDICTION}`. The file must contain the column `{names.ROW_ID}` (as "
        f"provided in the original `{val_file}`) and the corresponding predictions. Each prediction should be "
        "aligned with its row_id so that performance can be computed correctly."
    )
