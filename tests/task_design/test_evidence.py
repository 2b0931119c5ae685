"""Invariant: every evidence rule of the registry (task_design.evidence) is an entry with an id, a one-sentence
statement, what it reads, its verdict, a priority of its own and cases, and each case holds: the rule fires on
every text it must fire on and on none it must not. A conflict between two verdicts is settled by priority."""

from __future__ import annotations

import pytest

from task_design.evidence import RULES, Case, Rule, registry, rule, strongest
from task_design.evidence.policy import POLICY, render, rewritten

CASES = [pytest.param(r, c, id=f"{r.id}:{'fires' if c.fires else 'quiet'}:{c.text[:40]}")
         for r in RULES.values() for c in r.cases]


@pytest.mark.parametrize(("entry", "case"), CASES)
def test_each_rule_fires_on_its_cases_and_on_nothing_else(entry: Rule, case: Case):
    assert bool(entry.fires(case.text)) is case.fires


def test_every_rule_has_a_statement_a_firing_and_a_quiet_case_and_its_own_priority():
    assert len(RULES) >= 30
    assert len({r.priority for r in RULES.values()}) == len(RULES)
    for r in RULES.values():
        assert r.statement.endswith(".") and r.owner.startswith("task_design.")
        assert any(c.fires for c in r.cases) and not all(c.fires for c in r.cases)


def test_a_registry_refuses_a_rule_without_both_cases_or_a_shared_priority():
    base = rule("outcome.name")
    with pytest.raises(ValueError, match="needs a case"):
        Rule(base.id, base.statement, base.reads, base.verdict, base.priority, base.matcher, (Case("y", True),))
    twin = Rule("outcome.twin", base.statement, base.reads, base.verdict, base.priority, base.matcher, base.cases)
    with pytest.raises(ValueError, match="share priority"):
        registry([base, twin])


def test_a_conflict_is_settled_by_priority_not_by_order():
    # `income` is an outcome's name and a generic quantity's: the covariate verdict outranks the outcome
    # reading whichever fired first.
    fired = [r for r in (rule("outcome.name"), rule("covariate.generic-quantity-name")) if r.fires("income")]
    assert len(fired) == 2
    assert strongest(fired).verdict == "covariate" and strongest(reversed(fired)).verdict == "covariate"
    assert strongest([]) is None


def test_the_committed_policy_holds_the_registry_as_generated():
    doc = POLICY.read_text(encoding="utf-8")
    assert rewritten(doc) == doc, "run: python -m task_design.evidence.policy --write"
    assert all(f"`{r.id}`" in render() and r.statement in render() for r in RULES.values())
