"""A feature is referred to by its description alone only when metadata.txt singles its column out
by it, and a question an agent cannot fully recover from its text plus metadata.txt is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from finalize.checks import check_instruction
from finalize.instructions import question_v1, spec_references
from finalize.layout import question_block
from pipeline.build import BuildJob, build_one
from pipeline.core import names
from pipeline.core.column_refs import (description_phrase, feature_references, name_match, name_words, resolve,
                                       unnamed_references, why_name_appears, with_name_use)
from pipeline.core.jsonio import read_json
from pipeline.steps import ENTRY_JSON
from task_design.config import DesignConfig
from tests.factories import build_record, build_table, spec_where, task_folder, write_local_dataset

# DARE-bench's Pokemon Unite task's metadata.txt (its columns section), which its question_v1 refers
# to by description alone ("the support stat of the Pokemon").
POKEMON = {
    "Name": "Name of the Pokemon.",
    "Role": "Role of the pokemon in the game.",
    "Ranged_or_Melee": "Whether the attacks of the pokemon are ranged or close",
    "Offense": "Offense stat of the pokemon out of 5.0",
    "Support": "Support stat of the pokemon out of 5.0",
    "Scoring": "Scoring stat of the pokemon out of 5.0",
}


def _refs(documented: dict[str, str], style: str = "dare"):
    return feature_references(list(documented), documented, style)


def test_dare_bench_descriptions_single_out_their_columns():
    refs = _refs(POKEMON)
    assert all(r.by == "description" for r in refs.values()), refs
    assert refs["Support"].phrase == "Support stat of the pokemon out of 5.0"
    assert "next best 0.80" in refs["Support"].reason  # Offense and Scoring share every word but one


@pytest.mark.parametrize("documented, column, reason", [
    ({"a": "Weight of the car in tons", "b": "Weight of the car in tons."}, "a", "column 'b' has the same description"),
    ({"a": "price of the house", "b": "price of the house in dollars"}, "a", "matches column 'b' as well"),
    ({"XC": "x coordinate, a numeric vector", "XCoord": "X coordinate."}, "XC", "has the same description"),
    ({"a": "Age", "b": "height of the child"}, "a", "too short (1 content word)"),
    ({"a": "a numeric vector", "b": "height of the child"}, "a", "no description that says"),
    ({"a": "[no description]", "b": "height of the child"}, "a", "no description that says"),
    ({"birth_year": "Birth year", "b": "height of the child"}, "birth_year", "only repeats the column name"),
])
def test_a_description_that_does_not_single_out_one_column_goes_with_the_name(documented, column, reason):
    ref = _refs(documented)[column]
    assert ref.by == "name" and reason in ref.reason, ref
    assert f"`{column}`" in ref.phrase


def test_a_description_that_mentions_another_column_still_names_its_own_better():
    refs = _refs({"wage": "hourly wage in dollars", "lwage": "log of hourly wage in dollars",
                  "XC": "x coordinate, a numeric vector", "YC": "y coordinate, a numeric vector"})
    assert refs["lwage"].by == "description" and "next best 0.75 for 'wage'" in refs["lwage"].reason
    assert refs["XC"].phrase == "x coordinate" and refs["XC"].by == "description"


def test_level_lists_give_way_to_what_the_factor_indicates():
    refs = _refs({"US": "A factor with levels No and Yes to indicate whether the store is in the US or not",
                  "gender": "Factor indicating gender.", "Urban": "whether the store is urban"})
    assert refs["US"].phrase == "whether the store is in the US or not" and refs["US"].by == "description"
    assert refs["gender"].by == "name"  # "gender" says no more than the column name


@pytest.mark.parametrize("doc, phrase", [
    ("=1 if union member", "whether union member"),
    ("equals 1 if respondent has obtained a GED, 0 otherwise", "whether respondent has obtained a GED"),
    ("factor - equals 1 if subject is black, 0 otherwise", "whether subject is black"),
    ("mother's race (1 = white, 2 = black, 3 = other)", "mother's race"),
    ("husband's wage, in 1975 dollars", "husband's wage"),
    ("ethnicity (African-American, Hispanic or other)", "ethnicity (African-American, Hispanic or other)"),
    ("Frequency with levels year, hour, week.", "Frequency"),
    ("Potassium, a numeric vector", "Potassium"),
    ("(0 = not hispanic, 1 = hispanic).", "whether hispanic"),
    ("1=smoker or 0=nonsmoker", "whether smoker"),
])
def test_phrases_read_as_one_item_of_a_list(doc, phrase):
    """No comma outside brackets (question_v1 lists features with commas), no code list, no levels."""
    assert description_phrase("c", doc) == phrase


# vcdExtra/ICU and stevedata/anes_partytherms, as their help pages write them
FRACTURE = "Admission with a long bone, multiple, neck, single area, or hip fracture? a factor with levels `No` `Yes`"
CREATIN = "Creatinine, from initial blood gases, a factor with levels `<=2` `>2`"
URBANISM = "1 = central cities. 2 = suburban areas. 3 = rural/small towns/outlying areas."


@pytest.mark.parametrize("doc, phrase, named", [
    # a list after the first comma is no qualifier: the phrase is whole, and goes with the column name
    (FRACTURE, FRACTURE.split(" a factor")[0], FRACTURE.split(" a factor")[0] + " (`c`)"),
    # the description's own case, never lowered
    (CREATIN, "Creatinine", "Creatinine"),
    # every code of a codebook line, never only the first
    (URBANISM, "1 = central cities; 2 = suburban areas; 3 = rural/small towns/outlying areas",
     "1 = central cities; 2 = suburban areas; 3 = rural/small towns/outlying areas (`c`)"),
    # "factor" inside a phrase is no storage type
    ("the risk factor score of the patient", "the risk factor score of the patient",
     "the risk factor score of the patient"),
])
def test_a_description_is_never_cut_mid_phrase_and_keeps_its_case(doc, phrase, named):
    assert description_phrase("c", doc) == phrase
    documented = {"c": doc, "other": "Weight of the patient in kilograms"}
    ref = feature_references(["c"], documented, "dare")["c"]
    assert ref.phrase == named, ref


@pytest.mark.parametrize("doc, by", [("Potassium", "description"), ("in years", "name"), ("m = male, f = female", "name"),
                                     ("1= Age>75; 0=Age<=75", "name")])
def test_one_word_is_enough_only_alone_and_code_lists_go_with_the_name(doc, by):
    assert _refs({"c": doc, "other": "height of the child"})["c"].by == by


def test_a_named_column_shows_its_whole_description():
    """Beside the name no cut is needed, and a cut one could mislead ("1st" for a passenger class)."""
    ref = _refs({"passengerClass": "1st, 2nd, or 3rd class.", "age": "age in years"})["passengerClass"]
    assert ref.by == "name" and ref.phrase == "1st, 2nd, or 3rd class (`passengerClass`)"
    assert [c for c, _ in resolve(f"select {ref.phrase} and age in years", {"passengerClass": "1st, 2nd, or 3rd class.",
                                                                           "age": "age in years"})] == \
        ["passengerClass", "age"]


def test_the_overlap_test_is_strict_and_counts_names_too():
    # "the car's weight" shares both its words with `weight_car` (its name) as much as with its own column
    refs = _refs({"w": "the car's weight", "weight_car": "tons"})
    assert refs["w"].by == "name" and "matches column 'weight_car'" in refs["w"].reason


def test_explicit_style_names_every_column_and_keeps_the_description():
    refs = _refs(POKEMON, "explicit")
    assert {r.by for r in refs.values()} == {"name"}
    assert refs["Support"].phrase == "Support stat of the pokemon out of 5.0 (`Support`)"
    assert all("column_references" in r.reason for r in refs.values())


@pytest.mark.parametrize("doc, phrase", [
    ("mos. in prison during 1986", "mos. in prison during 1986"),  # an abbreviation ends no sentence
    ("chl. camp. expends., 1990", "chl. camp. expends."),
    ("Age (Child vs. Adult). A factor", "Age (Child vs. Adult)"),  # nor one in brackets
    ("Band of student's intake score - a factor. Levels are bottom 25%", "Band of student's intake score"),
    ("Number of children. More text", "Number of children"),
    ("1=Urgent/Emerg; 0=elective (type of admission)", "type of admission"),  # what the codes code
])
def test_a_phrase_keeps_abbreviations_and_the_meaning_of_a_code_list(doc, phrase):
    assert description_phrase("c", doc) == phrase


def test_descriptions_that_differ_after_their_first_comma_keep_the_qualifier():
    docs = {"regday": "spending per pupil, regular", "specneed": "spending per pupil, special needs",
            "totday": "spending per pupil, total", "score": "test score, 4th grade"}
    refs = _refs(docs)
    assert {c: r.phrase for c, r in refs.items() if c != "score"} == {
        "regday": "spending per pupil (regular)", "specneed": "spending per pupil (special needs)",
        "totday": "spending per pupil (total)"}
    assert refs["score"].phrase == "test score"  # nothing else reads the same: no need to qualify
    text = "select spending per pupil (total), spending per pupil (regular) and test score"
    assert [c for c, _ in resolve(text, docs)] == ["totday", "regday", "score"]


def test_a_tie_is_broken_only_by_words_in_a_row_that_no_rival_name_has():
    docs = {"goodhealth": "=1 if in good health", "vghealth": "=1 if in very good health", "age": "in years"}
    refs = _refs(docs)
    assert refs["goodhealth"].by == "description" and refs["goodhealth"].phrase == "whether in good health"
    assert "tied with 'vghealth'" in refs["goodhealth"].reason
    assert [c for c, _ in resolve("whether in good health and whether in very good health", docs)] == \
        ["goodhealth", "vghealth"]


def test_why_a_column_name_appears_in_the_question_is_recorded():
    docs = {"age": "mother's age in years", "pcnv": "proportion of prior convictions", "pcnvsq": "pcnv^2",
            "race": "race of the patient", "white": "whether the patient is white or not", "K": "[no description]"}
    refs = _refs(docs)
    text = ("filter mother's age in years, proportion of prior convictions, pcnv^2 and race of the patient "
            'limited to the values "White", "Black"; select `K`. Train a model.')
    recorded = with_name_use(refs, text)
    assert "uses the word 'age' itself" in recorded["age"].name_in_question
    assert "the reference to 'pcnvsq' ('pcnv^2')" in recorded["pcnv"].name_in_question
    assert recorded["K"].name_in_question.startswith("the reference names the column")
    assert "category value" in why_name_appears("white", refs, text)
    assert "uses the word 'race' itself" in recorded["race"].name_in_question
    assert recorded["pcnvsq"].name_in_question == ""  # "pcnv^2" carries `pcnv`, not `pcnvsq`
    assert "fixed wording" in why_name_appears("train", refs, text)  # "Train a model", as a word in any case


def test_resolve_reads_descriptions_and_names_longest_first():
    text = ("Support stat of the pokemon out of 5.0, `Role`, and whether the attacks of the pokemon are "
            "ranged or close (`Ranged_or_Melee`)")
    assert [c for c, _ in resolve(text, POKEMON)] == ["Support", "Role", "Ranged_or_Melee"]
    # an ambiguous phrase is no reference at all
    assert resolve("the price of the house", {"a": "price of the house", "b": "price of the house in dollars"}) == []


@pytest.mark.parametrize("column, words", [
    ("Lot_Area", "lot area"), ("Sepal.Length", "sepal length"), ("Three_season_porch", "three season porch"),
    ("year_built", "year built"), ("passengerClass", "passenger class"),
    # codes, acronyms and single words are no words to refer by
    ("chem_fp_050", ""), ("Total_Bsmt_SF", ""), ("Pool_QC", ""), ("std_7th_delta", ""), ("age", ""), ("x1", ""),
])
def test_name_words_are_the_words_a_compound_name_joins(column, words):
    assert name_words(column) == words


def test_an_undocumented_compound_name_is_referred_to_by_its_words_when_they_are_unique():
    # modeldata's ames and the iris data document no column: DARE-bench's writers say "the sepal length"
    documented = {"Sepal.Length": "[no description]", "Sepal.Width": "", "Petal.Length": "",
                  "Lot_Area": "", "Gr_Liv_Area": "Above grade living area square feet", "Species": "",
                  "chem_fp_050": "", "Area": "the area of the lot in acres"}
    refs = _refs(documented)
    assert refs["Sepal.Length"].by == "name words" and refs["Sepal.Length"].phrase == "sepal length"
    assert refs["Sepal.Width"].phrase == "sepal width"
    assert refs["Species"].by == "name" and refs["Species"].phrase == "`Species`"  # one word says no more
    assert refs["chem_fp_050"].by == "name"  # a code, not words
    # "lot area" would carry `Area`'s name, and `Area`'s description has both words: not unique
    assert refs["Lot_Area"].by == "name", refs["Lot_Area"]
    assert refs["Gr_Liv_Area"].by == "description"  # documented: its description wins
    assert _refs(documented, "explicit")["Sepal.Length"].phrase == "`Sepal.Length`"
    # the oracle reads the words back to their one column, longest first
    text = "filter sepal length between 4.3 and 7.9 inclusive, then use sepal width and `Species`"
    assert [c for c, _ in resolve(text, documented)] == ["Sepal.Length", "Sepal.Width", "Species"]


def test_name_words_another_column_has_are_no_reference():
    refs = _refs({"Sale_Type": "", "Sale_Condition": "the type of sale, normal or abnormal"})
    assert refs["Sale_Type"].by == "name", refs["Sale_Type"]


def test_the_decision_is_deterministic_and_independent_of_the_dict_order():
    forward, backward = _refs(POKEMON), _refs(dict(reversed(POKEMON.items())))
    assert {c: r.by for c, r in forward.items()} == {c: r.by for c, r in backward.items()}


# ------------------------------------------------------------------ the instruction oracle

DOCS = {"x": "The x measurement taken by the probe.", "visits": "Number of visits to the clinic.",
        "colour": "Colour of the item.", "sparse": "a numeric vector", "label": "the outcome"}


@pytest.fixture(scope="module")
def task():
    record = build_record(column_descriptions=DOCS)
    spec = spec_where(build_table(), lambda s: len(s.selected_features) >= 2 and s.categorical_features
                      and s.numerical_features, config=DesignConfig(file_types=("sqlite",)),
                      column_descriptions=DOCS)
    documented = {c: DOCS.get(c, "") for c in build_table().columns}
    refs = spec_references(spec, documented)
    return spec, question_v1(record, spec, refs), question_block(spec), documented, refs


def test_our_question_passes_the_strict_oracle(task):
    spec, text, q, documented, refs = task
    assert any(r.by == "description" for r in refs.values())
    tables = [f"table_{i}" for i in range(1, spec.n_split_tables + 1)] + [names.VAL_SET_TABLE]
    assert check_instruction("t", text, q, documented, strict=True, tables=tables) == []


@pytest.mark.parametrize("edit, fact", [
    (lambda t, s: t.replace(" Keep the joined rows in ascending `row_id` order and drop `row_id` before modelling.",
                            ""), "the training rows' order"),
    (lambda t, s: t.replace("so that its missing values follow the same rule", ""), "missing-value rule"),
    (lambda t, s: t.replace("`val_set`", "its table"), "SQLite table 'val_set'"),
    (lambda t, s: t.replace("ColumnTransformer with the numeric features first", "ColumnTransformer"),
     "the encoding step"),
    (lambda t, s: t.replace("in this order: ", "in this order: `label`, "), "the selected features in order"),
])
def test_a_question_missing_a_fact_is_refused(task, edit, fact):
    spec, text, q, documented, _ = task
    tables = [f"table_{i}" for i in range(1, spec.n_split_tables + 1)] + [names.VAL_SET_TABLE]
    [problem] = check_instruction("t", edit(text, spec), q, documented, strict=True, tables=tables)
    assert problem.severity == "error" and fact in problem.message, problem.message


def test_an_undocumented_compound_name_is_named_by_its_column_not_its_words():
    """Issue 49: "petal width" for `Petal_Width` (a de-camelCased or split name where the card says nothing) is a
    phrase found in no file, which a blind solver had to guess back; the question names the column. The kernel's
    reading (the designers' preference, unnamed_references) is unchanged: wording only."""
    from pipeline.core.column_refs import feature_references

    table = build_table().rename(columns={"x": "Sepal_Length", "visits": "Petal_Width"})
    docs = {"colour": "Colour of the item.", "label": "the outcome"}
    spec = spec_where(table, lambda s: {"Sepal_Length", "Petal_Width"} <= set(s.selected_features),
                      config=DesignConfig(file_types=("sqlite",)), column_descriptions=docs)
    documented = {c: docs.get(c, "") for c in table.columns}
    assert feature_references(["Petal_Width"], documented, "dare")["Petal_Width"].by == "name words"
    refs = spec_references(spec, documented)
    assert (refs["Sepal_Length"].by, refs["Petal_Width"].phrase) == ("name", "`Petal_Width`")
    text = question_v1(build_record(column_descriptions=docs), spec, refs)
    assert "`Petal_Width`" in text and "petal width" not in text.lower()
    tables = [f"table_{i}" for i in range(1, spec.n_split_tables + 1)] + [names.VAL_SET_TABLE]
    assert check_instruction("t", text, question_block(spec), documented, strict=True, tables=tables) == []


def test_a_description_metadata_txt_no_longer_singles_out_is_refused(task):
    """The oracle resolves descriptions through metadata.txt alone: if another column there now reads the
    same, the description-only reference no longer names one column."""
    spec, text, q, documented, refs = task
    column = next(c for c in spec.selected_features if refs[c].by == "description")
    confusable = {**documented, "twin": documented[column]}
    [problem] = check_instruction("t", text, q, confusable, strict=True)
    assert repr(column) in problem.message


def test_swapped_features_are_refused(task):
    spec, text, q, documented, refs = task
    a, b = spec.selected_features[:2]
    swapped = {**q, "selected_features": [b, a, *spec.selected_features[2:]]}
    [problem] = check_instruction("t", text, swapped, documented, strict=True)
    assert "the selected features in order" in problem.message


# ------------------------------------------------------------------ the setting, end to end


def test_column_references_setting_reaches_the_text_the_record_and_the_digest(tmp_path):
    data = write_local_dataset(tmp_path / "data", "clinic", build_table(n=200), title="Clinic visits",
                               column_descriptions=DOCS)
    texts, metas, digests = {}, {}, {}
    for style in ("dare", "explicit"):
        job = BuildJob.make(3, config=DesignConfig(file_types=("csv",), column_references=style))
        root = tmp_path / style
        [outcome] = build_one("local/clinic", "local", str(data), job, root / "work", root / "tasks")
        assert outcome.ok, outcome.reason
        task_dir = task_folder(root, outcome)
        metas[style] = read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA)
        texts[style] = read_json(Path(outcome.work_dir) / ENTRY_JSON)["question_v1"]
        digests[style] = job.design_digest
    assert digests["dare"] != digests["explicit"]  # so the build cache and each task's design_config differ
    for style, meta in metas.items():
        assert meta["daregen"]["design_config"] == digests[style]
        refs = meta["daregen"]["feature_references"]
        assert [r["column"] for r in refs] == list(dict.fromkeys([*meta["question"]["expected_ranges"],
                                                                  *meta["question"]["selected_features"]]))
        assert all(r["reason"] for r in refs)
        by = {r["column"]: r["by"] for r in refs}
        for column, how in by.items():
            assert (f"`{column}`" in texts[style]) == (how == "name")
        if style == "explicit":
            assert set(by.values()) == {"name"}
        else:  # the documented, unambiguous ones by description; `sparse` ("a numeric vector") by name
            assert by.get("x", "description") == "description" and by.get("sparse", "name") == "name"


def test_unnamed_references_are_the_features_the_dare_reference_names_by_meaning_alone():
    """The predicate the designers select by is the question writer's own decision: a description that
    singles its column out and does not use the name, or a name's words; never a description that
    uses the name, a shared one or none."""
    documented = {"age": "the mother's age in years", "ht": "mother's height in inches", "x3": "",
                  "Lot_Area": "", "wt": "weight of the baby", "wt2": "weight of the baby"}
    assert unnamed_references(list(documented), documented) == {"ht", "Lot_Area"}
    refs = feature_references(list(documented), documented, "dare")
    assert [refs[c].phrase for c in ("ht", "Lot_Area")] == ["mother's height in inches", "lot area"]
    assert refs["age"].by == "description" and name_match(refs["age"].phrase, "age")  # by meaning, yet named
    assert {refs[c].by for c in ("x3", "wt", "wt2")} == {"name"}
