"""column_decisions says of every column what the heuristic designer decides, and nothing it does not: the role and
the feature exclusion are the designer's, the column the designer picks is the ranking's first with the same
evidence, a column that cannot be a target says why, and a table no task can come from keeps its roles with the
reason. Same inputs, same decisions."""

from __future__ import annotations

import numpy as np

from pipeline.core.seeding import rng_for
from task_design.heuristic import design
from task_design.inspection import column_decisions
from task_design.profile import profile_table
from tests.factories import OUTCOME_DESCRIPTIONS, REF, UNIT_CONFIG, build_record, build_table


def _inputs(n: int = 200):
    table = build_table(n=n, id=lambda k: [f"c{i:04d}" for i in range(k)])
    record = build_record(column_descriptions={c: d for c, d in OUTCOME_DESCRIPTIONS.items() if c in table})
    return record, profile_table(table), table


def test_the_designers_target_leads_the_ranking_with_the_same_evidence():
    record, profile, table = _inputs()
    spec = design(record, profile, table, rng_for(0, REF, "design"), UNIT_CONFIG)
    decisions = column_decisions(record, profile, table, UNIT_CONFIG, rng_for(0, REF, "design"))
    by_name = {d.name: d for d in decisions.columns}
    assert [d.name for d in decisions.columns] == list(table.columns) and decisions.frame_problem is None
    target = by_name[spec.target[0]]
    assert target.rank == 1 and target.target_evidence == spec.target_evidence
    assert target.evidence_kind == spec.target_evidence_kind and target.documentation == OUTCOME_DESCRIPTIONS["label"]
    for name, why in spec.excluded_features.items():  # the designer's feature exclusions, word for word
        if name in by_name and by_name[name].not_feature is not None:
            assert by_name[name].not_feature == why


def test_an_identifier_is_no_feature_and_no_target_and_says_why():
    record, profile, table = _inputs()
    ident = next(d for d in column_decisions(record, profile, table, UNIT_CONFIG, rng_for(0, REF, "design")).columns
                 if d.name == "id")
    assert ident.not_feature and ident.not_target and ident.rank is None and ident.target_type is None


def test_a_table_too_small_for_any_task_keeps_its_roles_and_gives_the_reason():
    record, profile, table = _inputs(n=20)
    decisions = column_decisions(record, profile, table, UNIT_CONFIG, rng_for(0, REF, "design"))
    assert decisions.frame_problem.startswith("too few rows (20 <")
    assert all(d.role and d.role_evidence and d.rank is None for d in decisions.columns)


def test_the_same_inputs_give_the_same_decisions():
    record, profile, table = _inputs()
    a = column_decisions(record, profile, table, UNIT_CONFIG, np.random.default_rng(3))
    b = column_decisions(record, profile, table, UNIT_CONFIG, np.random.default_rng(3))
    assert a == b


def test_a_regular_series_no_target_passes_names_the_time_column_a_pin_must_drop():
    # Issue 49: the pin hint of a dated table did not say that its time column must go (kept, design_frame reads
    # the rows as a series and refuses every target). Dropped as a pin drops it, the table is accepted.
    import pandas as pd

    from pipeline.core.curation import Pin
    from task_design.pinned import design_pinned, without_columns

    rng = np.random.default_rng(3)
    n = 300
    x, z, w = rng.normal(size=(3, n))
    table = pd.DataFrame({"Week": pd.date_range("2019-01-07", periods=n, freq="W-MON").strftime("%Y-%m-%d"),
                          "x": x, "z": z, "w": w, "y": x + z + w + rng.normal(size=n)})
    record, profile = build_record(), profile_table(table)
    decisions = column_decisions(record, profile, table, UNIT_CONFIG, rng_for(0, REF, "design"))
    assert decisions.frame_problem is not None and decisions.pin_drops == ("Week",)
    kept = without_columns(profile, table, ("Week",))
    spec = design_pinned(record, *kept, rng_for(0, REF, "design"), UNIT_CONFIG, Pin(ref=REF, target=("y",), drop=("Week",)))
    assert spec.target == ("y",) and "Week" not in spec.related_features
    plain = build_table(n=200)
    assert column_decisions(build_record(), profile_table(plain), plain, UNIT_CONFIG,
                            rng_for(0, REF, "design")).pin_drops == ()
