"""The instruction texts: question_v1 (IF) spells out every step of the reference
workflow in order; question_v2 (MM) asks for free modelling.

The wording follows the published DARE-bench tasks. A feature is named by its metadata.txt
description alone where that singles its column out, and as "description (`column`)" elsewhere
or when the build asks for explicit references (pipeline.core.column_refs decides, per feature). The
text also states what the reference's result depends on beyond the choices: the SQLite tables to
read, the training rows' order and the validation file's missing-value rule.
"""

from __future__ import annotations

import json

from pipeline.core import names
from pipeline.core.column_refs import description_phrase, feature_references, named_text
from pipeline.core.csv_convention import QUESTION_V1_PHRASE
from pipeline.core.if_workflow import MULTI_OUTPUT_WRAPPED, make_model
from pipeline.core.metrics import scoring_sentence
from pipeline.core.records import DatasetRecord, JoinStep, TaskSpec
from pipeline.core.task_metadata import FeatureReference
from pipeline.core.text import md_name
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
# The sentences that state what the reference's row order and missing values are; the instruction
# oracle (finalize.checks.check_instruction) looks for them.
VAL_MISSING_RULE = "read it as the training data is read, so that its missing values follow the same rule"
SELECTION_ANCHOR = "following features for model training, in this order: "
# The order of the preprocessing steps, said outright: sentence order alone leaves a solver free to
# scale first and impute the scaled values, which changes every mean-imputed value.
IMPUTE_THEN_SCALE = "Impute first, then scale and encode: after imputation,"


def column_phrase(column: str, descriptions: dict[str, str]) -> str:
    """The explicit reference: `the number of years of education (`education`)`, or just `` `education` ``."""
    return named_text(column, description_phrase(column, descriptions.get(column) or ""))


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


def _range_rule(column: str, allowed: list, kind: str, refs: dict[str, FeatureReference]) -> str:
    phrase = refs[column].phrase
    if kind == "numerical":
        return f"{phrase} between {format_number(allowed[0])} and {format_number(allowed[1])} inclusive"
    values = ", ".join(quoted_value(v) for v in allowed)
    return f"{phrase} limited to the values {values}"


def referenced_columns(spec: TaskSpec) -> list[str]:
    """The columns question_v1 refers to by name or description: the filtered ones, then the selected."""
    return list(dict.fromkeys([*spec.expected_ranges, *spec.selected_features]))


def spec_references(spec: TaskSpec, documented: dict[str, str]) -> dict[str, FeatureReference]:
    """How question_v1 refers to each feature, decided on `documented`: metadata.txt's
    {column: description} (finalize.metadata_txt.metadata_descriptions)."""
    return findable_references(feature_references(referenced_columns(spec), documented, spec.column_references,
                                                  fallback=spec.feature_descriptions))


def findable_references(refs: dict[str, FeatureReference]) -> dict[str, FeatureReference]:
    """`refs` as a solver can look each one up: an undocumented column by its name, never by the words its name
    joins ("life exp" for `lifeExp`, found in no file). Wording only: the columns and their order are those of
    `refs` (the designers' choice, task_design, is untouched)."""
    return {c: r.model_copy(update={"by": "name", "phrase": md_name(c),
                                    "reason": f"{r.reason}; its name's words appear in no file, so it is named"})
            if r.by == "name words" else r for c, r in refs.items()}


def _documented(record: DatasetRecord, spec: TaskSpec) -> dict[str, str]:
    """A stand-in for metadata.txt's descriptions when the caller has none: the record's, for the
    documented columns and every column the design names."""
    columns = dict.fromkeys([*record.column_descriptions, *spec.target, *spec.related_features,
                             *spec.selected_features, *spec.expected_ranges])
    return {c: " ".join((record.column_descriptions.get(c) or "").split()) for c in columns}


def _relational_load(train_file: str, join_path: list[JoinStep]) -> tuple[str, str]:
    """The load and first-step sentences of a relational task: every join, its tables, keys and type."""
    fact = join_path[0].left
    dims = _join([md_name(s.right) for s in join_path])
    load = (f"You are given access to a training SQLite file `{train_file}`, a relational database: the fact table "
            f"{md_name(fact)} holds one row per training example and the dimension table{'s' if len(join_path) > 1 else ''} "
            f"{dims} hold{'' if len(join_path) > 1 else 's'} further attributes, linked by the foreign keys it "
            "declares; these tables must be joined to reconstruct the full training dataset.")
    joins = [f"left join {md_name(s.right)} on {md_name(s.left)}.{md_name(s.left_on)} = {md_name(s.right)}.{md_name(s.right_on)}" for s in join_path]
    first = (f"First, reconstruct the full training dataset from `{train_file}`: start from the table {md_name(fact)} and, "
             f"in this order, {_join(joins)}. Each join is many-to-one onto a unique key and keeps every row of the "
             "left side, so the result has exactly one row per row of "
             f"{md_name(fact)}; after each join drop the right key column, which repeats the left one.")
    return load, first


def split_table_names(n: int) -> list[str]:
    """The tables a flat task's train_v1.sqlite is split into (postprocess.formats.write_split_tables)."""
    return [f"{names.SPLIT_TABLE_PREFIX}{i}" for i in range(1, n + 1)]


def row_order_sentence(file_type: str, fact_table: str | None) -> str:
    """How the reference orders the training rows: an order-sensitive model (an MLP shuffles them
    with its seed) predicts differently on the same rows in another order."""
    if fact_table is not None:
        return f"Keep the joined rows in the order of the rows of {md_name(fact_table)}."
    if file_type == "sqlite":
        return f"Keep the joined rows in ascending `{names.ROW_ID}` order and drop `{names.ROW_ID}` before modelling."
    return "Keep the rows in the order they appear in the file."


def missing_value_rule(file_type: str) -> str:
    """What a missing value is in a `file_type` file, as the reference reads it (pipeline.core.if_workflow.read_table):
    the validation file's rule names it, so no format leaves it to a guess."""
    if file_type == "csv":
        return QUESTION_V1_PHRASE
    return {"parquet": "a missing value is a Parquet null, which pandas.read_parquet reads as NaN or None; "
                       "no text value counts as missing",
            "sqlite": "a missing value is an SQL NULL, which pandas.read_sql_query reads as NaN or None; "
                      "no text value counts as missing"}[file_type]


def validation_source(file_type: str) -> str:
    """Where the validation rows are read: the file, and in SQLite its one table."""
    val_file = names.data_file(names.VAL_V1, file_type)
    return f"the table `{names.VAL_SET_TABLE}` of `{val_file}`" if file_type == "sqlite" else f"`{val_file}`"


def _targets(spec: TaskSpec, plural: str = "the target columns", singular: str = "the target column") -> str:
    """`the target column `y`` or, for a target list, `the target columns `a`, `b`, and `c``."""
    cols = [md_name(t) for t in spec.target]
    return f"{singular} {cols[0]}" if len(cols) == 1 else f"{plural} {_join(cols)}"


def preprocessing_text(spec: TaskSpec, has_missing: bool = True) -> str:
    """The imputation and encoding sentences, naming only the steps the reference runs
    (pipeline.core.if_workflow.build_pipeline: a ColumnTransformer of the feature kinds present), and saying so
    when imputation changes no value (`has_missing` False: no selected feature has a missing value in the
    files): a step spelled out for features or values the data does not have sent a solver looking for them."""
    nums, cats = bool(spec.numerical_features), bool(spec.categorical_features)
    imputers = ([f"{_IMPUTER_WORDS[spec.imputer_type]} (\"{spec.imputer_type}\") for the numeric features"] if nums
                else []) + (["the most frequent value (\"most_frequent\") for the categorical features"] if cats else [])
    text = f"Handle missing values by imputing {_join(imputers)}."
    if not has_missing:
        text += (" No selected feature has a missing value in the training or validation file, so the imputation "
                 "changes no value; it is part of the workflow all the same.")
    encoding = ("a one-hot encoder to the categorical features with handle_unknown set to \"ignore\" and "
                "sparse_output set to False")
    if nums and cats:
        return (text + f" {IMPUTE_THEN_SCALE} apply a standard scaler to the numeric features and {encoding}, each "
                "feature type's imputer followed by its transformer, combined in a ColumnTransformer with the "
                "numeric features first and the categorical features second.")
    if nums:
        return (text + " Impute first, then scale: after imputation, apply a standard scaler to the numeric features, "
                "the imputer followed "
                "by the scaler in a ColumnTransformer of the numeric features alone (there is no categorical "
                "feature, hence no categorical imputer and no encoder).")
    return (text + f" Impute first, then encode: after imputation, apply {encoding}, the imputer followed by the "
            "encoder in a "
            "ColumnTransformer of the categorical features alone (there is no numeric feature, hence no numeric "
            "imputer and no scaler).")


def question_v1(record: DatasetRecord, spec: TaskSpec, refs: dict[str, FeatureReference] | None = None,
                has_missing: bool = True) -> str:
    """`refs`: spec_references on metadata.txt's columns (worked out from the spec without them). `has_missing`:
    whether a selected feature has a missing value in train_v1 or val_v1 (preprocessing_text)."""
    refs = refs if refs is not None else spec_references(spec, _documented(record, spec))
    ftype = spec.save_file_type
    train_file = names.data_file(names.TRAIN_V1, ftype)
    val_file = names.data_file(names.VAL_V1, ftype)
    target = _targets(spec)
    join_path = task_join_path(record, spec)
    if join_path:  # a relational source: the agent gets its tables and must do the joins itself
        load, first = _relational_load(train_file, join_path)
    elif ftype == "sqlite":
        tables = _join([md_name(t) for t in split_table_names(spec.n_split_tables)])
        load = (f"You are given access to a training SQLite file `{train_file}`, which contains the tables {tables}, "
                f"all sharing the key column `{names.ROW_ID}`; these tables must be joined on `{names.ROW_ID}` to "
                "reconstruct the full training dataset.")
        first = (f"First, join the tables {tables} of `{train_file}` on `{names.ROW_ID}` to reconstruct the full "
                 "training dataset.")
    else:
        load = f"You are given access to a training {_FORMAT_WORD[ftype]} file `{train_file}` containing the training data."
        first = f"First, load the training data from `{train_file}`."
        if ftype == "csv":  # DARE-bench's CSV convention (pipeline.core.csv_convention), in its own words
            first = f"First, load the training data from `{train_file}`, {QUESTION_V1_PHRASE}."
    first += " " + row_order_sentence(ftype, join_path[0].left if join_path else None)
    intro = (
        PREAMBLE + "Proceed under the assumption that all required information is provided. " + load
        + f" You are also provided with a metadata file `{names.METADATA_TXT}` that describes the original dataset "
        f"and each of its columns. Your task is to perform {spec.problem_type} using this data and predict "
        f"{target} for the validation set located in `{val_file}`. Unless stated otherwise, use "
        "default parameters for all steps including model training and preprocessing."
    )
    rules = "\n".join(
        f"{i}. {_range_rule(c, spec.expected_ranges[c], spec.column_type_inference[c], refs)}"
        for i, c in enumerate(spec.expected_ranges, start=1)
    )
    filtering = (
        f"{first} Next, filter the training dataset using the expected ranges defined in the following order, "
        "while retaining any rows that have missing values in the relevant columns and excluding only those rows "
        "whose known (non-missing) values violate these ranges:\n" + rules
    )
    nums = [refs[c].phrase for c in spec.numerical_features]
    cats = [refs[c].phrase for c in spec.categorical_features]
    selected = [refs[c].phrase for c in spec.selected_features]
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
        f"is missing. Then select only the {SELECTION_ANCHOR}{_join(selected)}. {typing_sentence}"
    )

    has_seed = "random_state" in make_model(spec.model_type, 0).get_params()
    seed_clause = (f" with random_state set to {spec.random_state} and all other parameters at their defaults"
                   if has_seed else " with its default parameters")
    if len(spec.target) > 1:  # exactly what DARE-bench's reference template does with a target list
        seed_clause += (", wrapped in scikit-learn's MultiOutputClassifier (one model per target column)"
                        if spec.model_type in MULTI_OUTPUT_WRAPPED else
                        ", fitted on all target columns at once (it supports several outputs natively)")
    modelling = (
        preprocessing_text(spec, has_missing) + " Train a single "
        f"{spec.model_type} model using scikit-learn{seed_clause}. Finally, load the validation set from "
        f"{validation_source(ftype)} and {VAL_MISSING_RULE} ({missing_value_rule(ftype)}). "
        "Make predictions and save the results to a "
        f"CSV file at `{names.PREDICTION}`. The file must contain the column `{names.ROW_ID}` (as provided in the "
        f"original `{val_file}`) and the corresponding predictions in {_targets(spec, 'columns named', 'a column named')}, one row "
        f"for each row of `{val_file}`, with each prediction aligned to its row_id so that performance can be computed "
        "correctly. "
        + scoring_sentence(spec.problem_type, "v1", len(spec.target))
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
        f"provided in the original `{val_file}`) and the corresponding predictions in "
        f"{_targets(spec, 'columns named', 'a column named')}, one row for each row of `{val_file}`. Each prediction "
        "should be aligned with its row_id so that performance can be computed correctly. "
        + scoring_sentence(spec.problem_type, "v2", len(spec.target))
        # A short panel's validation rows are its last time points (postprocess.split.split_by_time): said, so
        # an agent validates as the task is scored, on later time points, not on a random draw.
        + (f" Every row of `{val_file}` comes after every row of `{train_file}` in `{spec.split_time_column}`: "
           "the predictions are for the later time points." if spec.split_time_column else "")
    )
