"""The designer's knobs, in one hashable record.

Its hash goes into each task's build record, so a change of thresholds shows up
as a changed design configuration rather than as an unexplained diff.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict, Field

from pipeline.core.records import ColumnReferences, NoiseSpec
from pipeline.core.safe_io import InputLimits


class DesignConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    min_rows: int = 30  # after dropping rows with a missing target
    max_rows: int = 20_000  # larger tables are sampled down (seeded) before splitting
    min_class_count: int = 5  # every class must have at least this many rows
    max_classes: int = 20
    max_integer_classes: int = 10  # an integer column with at most this many values can be a class target
    min_regression_unique: int = 10
    # A non-negative integer count with this many values whose rare tail rules out classes is a regression target.
    min_count_regression_unique: int = 6
    max_target_missing: float = 0.3
    # A column whose documentation or own description reads as the outcome may miss up to this share: a wage
    # is recorded only for those who work (carData/SLID's `wages`, 44% missing; Ecdat/RetSchool's `wage76`, 41%).
    # Its rows without one are dropped, as for any target; an undocumented column stays held to max_target_missing.
    max_evidenced_target_missing: float = 0.5
    max_feature_missing: float = 0.5
    max_feature_categories: int = 30  # a categorical feature with more levels is not used
    max_top_share: float = 0.95  # a target whose top value covers more than this is degenerate ...
    min_minority_rows: int = 100  # ... unless the other values still fill this many rows
    max_related_features: int = 15
    # Single-feature CV score at or above which a feature is a leak. 0.95, not 0.99: a feature that
    # alone reaches 0.95 (BS for MedGPA, year for y77) leaves nothing for an agent to model.
    leak_threshold: float = 0.95
    leak_screen_all_max_columns: int = 500  # every MM column is screened up to this width
    # |Spearman| at or above which a numeric feature is a leak: a near-monotone copy of the target, which
    # an expert reads as the answer, not a predictor of it.
    leak_rank_corr: float = 0.99
    leak_sample_rows: int = 2_000
    # 0.7 as DARE-bench uses; a ratio is only drawn when it leaves min_mm_val_rows validation rows.
    train_test_ratios: tuple[float, ...] = (0.7, 0.8)
    # Size floors (so a score means something): on fewer MM validation rows one error moves macro-F1 by ~0.1,
    # so scores are noise. A dataset below a floor is rejected with that reason.
    min_mm_val_rows: int = 40
    ts_min_train_points: int = 40  # per series (entity), before the prediction start
    ts_min_horizon: int = 8  # forecast steps per series after it
    ts_leak_r2: float = 0.95  # an exogenous column reaching this R² on the target alone is a leak
    max_target_attempts: int = 4  # ranked targets tried before the dataset is rejected
    # Design-time estimate of the MM check (task_design.learnable), so a target with nothing to learn
    # is replaced by the next-ranked one rather than dropped at finalize.
    learnable_margin: float | None = 0.03  # None: leave learnability to the MM check alone
    # A fallback target (no hint, no documentation) is held to the MM check's own margin: the next one is
    # cheap to try here, while a borderline one that passes here and fails at finalize loses the dataset.
    learnable_fallback_margin: float = 0.05
    # The design screen drops a feature a little below leak_threshold: it scores by cross-validation,
    # the MM check on the validation rows, and iris' Petal.Width passed one (<0.95) and failed the other (0.955).
    leak_screen_margin: float = 0.02
    learnable_sample_rows: int = 5_000
    # The identity screen (task_design.identity): an out-of-fold R² at or above identity_r2 of a fit on
    # the features, their logs, pairwise products and ratios means the target is computed from them.
    # The fit uses the identity_max_bases columns most related to the target (15 give 346 terms) on
    # identity_sample_rows rows; at most identity_max_drops columns are dropped before the target is.
    identity_r2: float = 0.99
    identity_max_bases: int = 15
    identity_sample_rows: int = 1_000
    identity_max_drops: int = 3
    # A ratio of two linear combinations of two or three features (identity.rate_fit) reaching rate_r2
    # out of fold, and within rate_median_error of the target on half the rows, makes the target a
    # computed rate. Below identity_r2: a published rate leaves out a count or two the table lacks
    # (mlb_players_18's OBP, hit-by-pitch and sacrifice flies: 0.983, 2%); a physical law (trees' Volume
    # from Girth and Height: 0.948, 8%) or a near-copy measure (MetabolicRate's Mrate: 0.973, 20%) is no rate.
    rate_r2: float = 0.98
    rate_median_error: float = 0.05
    noise_fraction: float = NoiseSpec().fraction
    file_types: tuple[str, ...] = ("csv", "sqlite", "parquet")
    # How question_v1 refers to features (pipeline.core.records.ColumnReferences); in the digest, since
    # it changes every IF text.
    column_references: ColumnReferences = "dare"
    # Bounds on reading untrusted source files (a `local:` folder); a config file's [limits] raises
    # them. Left out of the digest: a limit decides whether a dataset is read, never what its task is.
    input_limits: InputLimits = Field(default_factory=InputLimits, exclude=True)

    def digest(self) -> str:
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]
