"""File, table and directory names of the DARE-bench layout, defined once.

Stages import these rather than spelling the strings, so a layout change starts here
(see docs/dare-format.md). One exception: finalize/reference_solution.py, kept readable on
its own next to the instruction, still spells the data file stems out.
"""

SOURCE_DIR = "source"
VERIFY_DIR = "verify"

QUESTION_LIST = "question_list.json"
MANIFEST = "manifest.json"
RUN_REPORT_JSON = "run_report.json"
RUN_REPORT_MD = "run_report.md"
# The DSAgentBench report's list (run_report.json's dsagentbench) of the desktop tasks the machine dropped, not
# their inputs (a sandboxed validation job past its wall time on a loaded machine): finalize.dsagent.build writes
# it, pipeline.build rebuilds a tree that holds one rather than keep it.
MACHINE_DROPPED = "machine_dropped"
DIFF_MD = "diff.md"  # what changed since the generation before, at a generation's root (pipeline.review.diff)
CORPUS_REPORT_HTML = "corpus_report.html"  # the tree report a curator opens first (pipeline.review.reports)
ENVIRONMENT = "environment.json"

METADATA_TXT = "metadata.txt"
ALL_METADATA = "all_metadata.json"
GROUND_TRUTH = "ground_truth.csv"
SIMULATED_PRED = "simulated_pred_local.csv"
PREDICTION = "prediction.csv"

# Stems of the tabular data files; the extension comes from save_file_type.
TRAIN_V1 = "train_v1"
TRAIN_V1_NO_ERR = "train_v1_no_err"
VAL_V1 = "val_v1"
TRAIN_V2 = "train_v2"
VAL_V2 = "val_v2"

ROW_ID = "row_id"

# pandas.read_csv's default NA spellings (pandas/_libs/parsers.pyx STR_NA_VALUES): a CSV cell
# spelled so reads back as missing.
CSV_NA_STRINGS = frozenset(
    {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
     "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
)

# Table names inside the sqlite files.
TRAIN_SET_TABLE = "train_set"
VAL_SET_TABLE = "val_set"
# How question_v1 may name a feature ([build] column_references): "dare" by its metadata.txt
# description alone where that singles the column out (DARE-bench's own style), "explicit" always
# as "description (`column`)". The first is the default.
COLUMN_REFERENCE_STYLES = ("dare", "explicit")
SPLIT_TABLE_PREFIX = "table_"  # train_v1.sqlite holds table_1, table_2, ...

FILE_EXTENSIONS = {"csv": "csv", "parquet": "parquet", "sqlite": "sqlite"}
FILE_TYPES = tuple(FILE_EXTENSIONS)

TASK_SUFFIX = {"classification": "class", "regression": "reg", "time_series_analysis": "ts"}
TIME_SERIES_PROBLEM = "time_series_analysis"  # question.problem_type and question_list `task` of a `_ts` task

VARIANTS = ("v1", "v2")

# `daregen build --publish`: every task (for training), or only the tasks a curator approved at their
# current design digest (a release); the others are withheld, each with why (pipeline.core.curation).
PUBLISH_MODES = ("all", "approved")
# `daregen build`'s --out when none is given: a folder inside generated/, which a checkout tracks only for its
# README (a build refuses a non-empty folder it did not write, so generated/ itself would be refused).
DEFAULT_OUT = "generated/tasks"


def data_file(stem: str, file_type: str) -> str:
    """`train_v1` + `sqlite` -> `train_v1.sqlite`."""
    if file_type not in FILE_EXTENSIONS:
        raise ValueError(f"unknown file type {file_type!r}; expected one of {FILE_TYPES}")
    return f"{stem}.{FILE_EXTENSIONS[file_type]}"


def task_dir_name(slug: str, problem_type: str) -> str:
    """The task folder: `<source>_<slug>` + `_class`, `_reg` or `_ts` by problem type."""
    return f"{slug}_{TASK_SUFFIX[problem_type]}"


# Time-series task files, always CSV: source/train.csv (with val_v1, val_v2) and
# verify/ground_truth_v1.csv, verify/ground_truth_v2.csv in place of the tabular ground_truth.csv.
TS_TRAIN = "train"
TS_GROUND_TRUTH_V1 = "ground_truth_v1"
TS_GROUND_TRUTH_V2 = "ground_truth_v2"
TS_TRAIN_CSV = data_file(TS_TRAIN, "csv")
GROUND_TRUTH_V1 = data_file(TS_GROUND_TRUTH_V1, "csv")
GROUND_TRUTH_V2 = data_file(TS_GROUND_TRUTH_V2, "csv")
# Wall-clock seconds one dataset's design may take by default (pipeline.steps.bounded_design_step): a design takes
# seconds (the 300-candidate build's slowest well under a minute); a card that stalls a pattern would take hours.
# The operator changes it (OperatorSettings.design_budget_s, `--design-budget`); a run's trigger cannot.
DESIGN_BUDGET_S = 600.0
