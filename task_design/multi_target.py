"""Target lists: one classification task over several categorical outcomes of the same unit.

7 of DARE-bench's 68 eval classification tasks predict a list of 2-3 targets (a mushroom's
species, toxicity and psilocybin; a vehicle's type and eligibility). The rule, applied to a
designed tabular spec and nothing else:

- the source documents the outcomes (DatasetRecord.outcome_columns: OpenML's comma-separated
  default target, a sidecar's `outcome_columns`), at least two of them;
- the designer chose classification, with one of them as the target;
- every documented outcome is a target candidate of the spec and categorical, so none is an
  id, free text, a constant or a number;
- the model is not MLPClassifier, which DARE-bench's template leaves unwrapped and which cannot
  fit several label columns;
- at least one selected feature remains once the other outcomes stop being features.

Then the target becomes the outcomes in the source's order (the chosen one need not be first)
and the other outcomes leave every feature list, recorded in excluded_features. Otherwise the
spec is returned unchanged, so a source without documented outcomes builds as before.
"""

from __future__ import annotations

from pipeline.core.records import DatasetRecord, TaskSpec

UNWRAPPABLE = frozenset({"MLPClassifier"})


def with_documented_outcomes(spec: TaskSpec, record: DatasetRecord) -> TaskSpec:
    """`spec` predicting all of `record.outcome_columns` when the rule above allows it, else `spec`."""
    outcomes = tuple(dict.fromkeys(record.outcome_columns))
    categorical = {c for c in spec.target_candidates if spec.column_type_inference.get(c) == "categorical"}
    if (len(outcomes) < 2 or spec.problem_type != "classification" or spec.target[0] not in outcomes
            or not set(outcomes) <= categorical or spec.model_type in UNWRAPPABLE):
        return spec
    others = set(outcomes) - set(spec.target)
    keep = lambda cols: tuple(c for c in cols if c not in others)  # noqa: E731
    if not keep(spec.selected_features):
        return spec
    return TaskSpec.model_validate({**spec.model_dump(), **{
        "target": outcomes,
        "related_features": keep(spec.related_features),
        "not_filtered_related_features": keep(spec.not_filtered_related_features),
        "selected_features": keep(spec.selected_features),
        "numerical_features": keep(spec.numerical_features),
        "categorical_features": keep(spec.categorical_features),
        "expected_ranges": {c: r for c, r in spec.expected_ranges.items() if c not in others},
        "excluded_features": dict(sorted({**spec.excluded_features,
                                          **{c: "another target of this task" for c in others}}.items())),
    }})
