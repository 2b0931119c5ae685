"""A dataset's DSAgentBench categories depend only on the dataset and each category's own hash: adding a
category changes only the datasets where it ranks in their top two, and the category names are one list."""

from __future__ import annotations

from finalize.dsagent import categories
from finalize.dsagent.build import CATEGORY_TASKS_PER_DATASET as K, SCHEMA_PATH, chosen_categories
from finalize.dsagent.records import CATEGORIES
from pipeline.core.jsonio import read_json

TASKS = [f"owner_dataset{i}_{suffix}" for i in range(600) for suffix in ("class", "reg", "ts")]


def test_adding_a_category_changes_only_the_picks_it_enters() -> None:
    grown = {**categories.GENERATORS, "fake_new_category": categories.GENERATORS["eda"]}
    changed = 0
    for task in TASKS:
        before, after = chosen_categories(0, task, categories.GENERATORS), chosen_categories(0, task, grown)
        assert len(before) == len(after) == K and len(set(after)) == K
        if after != before:
            changed += 1
            assert "fake_new_category" in after, (task, before, after)
            # the rest keep their relative rank: the new one pushed the lowest-ranked pick out
            assert [c for c in after if c != "fake_new_category"] == before[:K - 1], (task, before, after)
    expected_share = K / len(grown)  # the new category ranks in a task's top K with this probability
    assert 0.5 * expected_share < changed / len(TASKS) <= expected_share + 0.04, changed


def test_removing_a_category_changes_only_the_tasks_that_had_it() -> None:
    fewer = {c: g for c, g in categories.GENERATORS.items() if c != "eda"}
    for task in TASKS[:300]:
        before = chosen_categories(0, task, categories.GENERATORS)
        if "eda" not in before:
            assert chosen_categories(0, task, fewer) == before


def test_the_choice_depends_on_the_seed_and_the_task_not_the_registry_order() -> None:
    reversed_registry = dict(reversed(list(categories.GENERATORS.items())))
    picks = {task: chosen_categories(0, task, categories.GENERATORS) for task in TASKS[:300]}
    assert all(chosen_categories(0, t, reversed_registry) == p for t, p in picks.items())
    assert any(chosen_categories(1, t, categories.GENERATORS) != p for t, p in picks.items())
    # every category is drawn, each about equally often
    counts = {c: sum(c in p for p in picks.values()) for c in categories.GENERATORS}
    assert min(counts.values()) > 0.5 * K * len(picks) / len(counts), counts


def test_the_category_literal_and_the_schema_enum_name_the_registry() -> None:
    # modelling is the DARE variants (dare_variants.py, ts_variants.py), not a generator
    assert set(CATEGORIES) == set(categories.GENERATORS) | {"modelling"}
    assert list(read_json(SCHEMA_PATH)["properties"]["category"]["enum"]) == list(CATEGORIES)
