"""File, table and directory names of the DARE-bench layout, defined once.

Every stage imports these instead of spelling the strings, so a layout change is
one edit here (see ../shared/docs/dare-format.md).
"""

SOURCE_DIR = "source"
VERIFY_DIR = "verify"

QUESTION_LIST = "question_list.json"
MANIFEST = "manifest.json"
RUN_REPORT_JSON = "run_report.json"
RUN_REPORT_MD = "run_report.md"
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

# Table names inside the sqlite files.
TRAIN_SET_TABLE = "train_set"
VAL_SET_TABLE = "val_set"
SPLIT_TABLE_PREFIX = "table_"  # train_v1.sqlite holds table_1, table_2, ...

FILE_EXTENSIONS = {"csv": "csv", "parquet": "parquet", "sqlite": "sqlite"}
FILE_TYPES = tuple(FILE_EXTENSIONS)

TASK_SUFFIX = {"classification": "class", "regression": "reg", "time_series_analysis": "ts"}

VARIANTS = ("v1", "v2")


def data_file(stem: str, file_type: str) -> str:
    """`train_v1` + `sqlite` -> `train_v1.sqlite`."""
    if file_type not in FILE_EXTENSIONS:
        raise ValueError(f"unknown file type {file_type!r}; expected one of {FILE_TYPES}")
    return f"{stem}.{FILE_EXTENSIONS[file_type]}"
