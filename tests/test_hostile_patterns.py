"""Every regular expression that reads a card, a column name or a description finishes on hostile text (a long
line of one punctuation mark, nested quotes and brackets, a 1 MiB line) within a fixed, generous budget: a
backtracking pattern that is quadratic on such a line stalls a build for hours (issue 48: `stated.target-line`
took 8 s on 2,000 backticks).

The patterns are collected, not listed: every compiled pattern a module of the stages or the kernel holds at
its top level (the evidence registry's matchers among them), and every literal pattern handed to `re.*` in their
source. A new pattern is covered as soon as it is written. A pattern built at run time from a column name or a
vocabulary word cannot be collected; those are named in DYNAMIC, so that a new one fails here until a reviewer
has read it. Each family of strings runs in a child process under a timeout: the budget is a wall clock for the
whole family, far above what a linear pattern needs, never an assertion on normal code's timing."""

from __future__ import annotations

import ast
import importlib
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest

from task_design.evidence import RULES

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sourcing", "task_design", "postprocess", "finalize", "pipeline")
_RE_CALLS = ("compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer")
# Patterns built at run time, by module and source text: each escapes what it splices in (re.escape, a fixed
# vocabulary, a task's own format), or anchors and bounds what it repeats.
DYNAMIC = {
    ('finalize.checks', 'f"random[_ ]state\\\\D{{0,20}}\\\\b{q[\'random_state\']}\\\\b"'),
    ('finalize.checks', "f'(?<![\\\\d.]){re.escape(v)}(?![\\\\d])'"),
    ('finalize.checks', 'stop'),
    ('finalize.metadata_txt', "''.join(out)"),
    ('pipeline.core.column_refs', "'|'.join((f'(?<![\\\\w`])({re.escape(f)})(?![\\\\w`])' for f in sorted(forms, key=lambda f: (-len(f), f))))"),
    ('pipeline.core.column_refs', "f'(?<!\\\\w){re.escape(column)}(?!\\\\w)'"),
    ('pipeline.core.licences', 'pattern'),
    ('pipeline.core.ts_reference', 'pattern'),
    ('pipeline.core.wording', 'f"^({\'|\'.join(words)})$"'),
    ('pipeline.review.reports', 'f\'#({alternation})(?=["\\\\)])\''),
    ('pipeline.review.reports', 'f\'\\\\bid="({alternation})"\''),
    ('sourcing.builtin', 'drop_paragraph'),
    ('sourcing.rdoc', 'f"(?<![\\\\w.-]){family[\'slot\']}(?![\\\\w-])"'),
    ('sourcing.rdoc', "f'(?<![\\\\w.$])({calls})\\\\s*\\\\([^()]*?(?<![\\\\w.$]){name}(?![\\\\w.$(])'"),
    ('task_design.identity', "f'(?<![\\\\w.]){name}\\\\s*{ops}|{ops}\\\\s*{name}(?![\\\\w])'"),
    ('task_design.identity', "f'(?<![\\\\w.]){re.escape(name)}(?![\\\\w])'"),
    ('task_design.identity', "f'\\\\w\\\\(\\\\s*{re.escape(column)}\\\\s*\\\\)'"),
    ('task_design.roles', "f'\\\\W*(the\\\\s+)?{re.escape(other)}\\\\b'"),
    ('task_design.targets', "f'(?<![\\\\w.]){re.escape(o)}(?![\\\\w])'"),
    ('task_design.targets', "f'\\\\b([a-z][a-z-]+)\\\\s+{w}s?\\\\b'"),
    ('task_design.targets', "f'\\\\b{word}s?\\\\b'"),
    ('task_design.targets', "f'\\\\b{word}s?\\\\b(?!\\\\s+variables?\\\\b)'"),
}


def _modules() -> list[str]:
    out = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def _walk(value, found: dict, depth: int = 0) -> None:
    """Compiled patterns in a module-level value: itself, or inside a tuple, list, dict or dataclass (a Rule)."""
    if isinstance(value, re.Pattern):
        if isinstance(value.pattern, str):
            found.setdefault((value.pattern, value.flags), value)
    elif depth < 4 and isinstance(value, (tuple, list, set, frozenset)):
        for item in value:
            _walk(item, found, depth + 1)
    elif depth < 4 and isinstance(value, dict):
        for item in value.values():
            _walk(item, found, depth + 1)
    elif depth < 4 and hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        for field in value.__dataclass_fields__:
            _walk(getattr(value, field, None), found, depth + 1)


def _literal_calls(module) -> tuple[list[re.Pattern], set[tuple[str, str]]]:
    """The patterns of `re.<fn>(pattern, ...)` calls in `module`'s source that its own names evaluate (a
    literal, a concatenation of module constants), and the source text of those they do not."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    compiled, dynamic = [], set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                and node.func.attr in _RE_CALLS):
            continue
        flags_at = {"compile": 1, "search": 2, "match": 2, "fullmatch": 2, "findall": 2, "finditer": 2,
                    "split": 3, "sub": 4, "subn": 4}[node.func.attr]
        flag_nodes = [k.value for k in node.keywords if k.arg == "flags"] + node.args[flags_at:flags_at + 1]
        try:
            pattern = eval(compile(ast.Expression(node.args[0]), module.__file__, "eval"), vars(module))  # noqa: S307
            flags = eval(compile(ast.Expression(flag_nodes[0]), module.__file__, "eval"),  # noqa: S307
                         vars(module)) if flag_nodes else 0
        except NameError:
            dynamic.add((module.__name__, ast.unparse(node.args[0])))
            continue
        compiled.append(pattern if isinstance(pattern, re.Pattern) else re.compile(pattern, flags))
    return compiled, dynamic


def collected() -> tuple[dict[tuple[str, int], re.Pattern], set[tuple[str, str]]]:
    found: dict[tuple[str, int], re.Pattern] = {}
    dynamic: set[tuple[str, str]] = set()
    for name in _modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            _walk(value, found)
        literal, unknown = _literal_calls(module)
        for p in literal:
            found.setdefault((p.pattern, p.flags), p)
        dynamic |= unknown
    return found, dynamic


def hostile_strings(family: str, n: int) -> dict[str, str]:
    """Text no card holds and a hostile one may: runs of every ASCII punctuation mark and space, brackets and
    quotes nested `n` deep, short alternations repeated."""
    if family == "runs":
        return {f"{c!r} x {n}": c * n for c in string.punctuation + " \t\n"} | {"a x n": "a" * n, "1 x n": "1" * n}
    if family == "nested":
        pairs = ["()", "[]", "{}", "<>", "``", '""', "''", "**", "__", "“”", "‘’"]
        return {f"{a}...{b} x {n}": a * (n // 2) + "x" + b * (n // 2) for a, b in pairs} | {
            "([{`\"' x n": "([{`\"'" * (n // 6)}
    if family == "alternating":
        units = ["a ", "a.", "- ", "`a", '"a', "(a", "a-", "a_", "1 ", "1.", "a\n", " \n", "* ", "1,", "a,", "a:",
                 "A ", "a1", "`\n", "\t ", ": ", "x=", "1=", "# ", "(1", "a(", "aA", "a ;", "the ", "target ",
                 "effects of ", "1 = a. ", "- a: target\n", "**a**: ", "with levels ", "| --- "]
        return {f"{u!r} x n": u * (n // len(u)) for u in units}
    if family == "mib":  # the card cap (1 MiB): the line of backticks that stalled `stated.target-line`
        return {f"{c!r} x 1 MiB": c * (1 << 20) for c in "`"}
    raise ValueError(family)


def main(family: str, n: int) -> None:
    """The child: every collected pattern on every string of `family`, each call announced first, so that a
    timeout names the pattern that stalled."""
    patterns, _ = collected()
    if family == "mib":  # the registry's own matchers, on the texts they read, as their owners apply them
        patterns = {(r.matcher.pattern, r.matcher.flags): r.matcher for r in RULES.values()}
    for text_name, text in hostile_strings(family, n).items():
        for p in patterns.values():
            print(f"{p.pattern[:120]!r} on {text_name}", flush=True)
            for _ in p.finditer(text):
                pass
            p.match(text)
            p.fullmatch(text)
    print("done", flush=True)


def helpers(n: int) -> None:
    """The text helpers that read a description without a module-level pattern (column_refs' sentence and clause
    cuts, plain_phrase), on repeated word + punctuation units: `_first_sentence` rescanned its prefix at every
    full stop, so "a. a. a. ..." took 6.5 s at 40 KB and about an hour at 1 MiB (red team of issue 48, #13)."""
    from pipeline.core.column_refs import _first_clause, _first_sentence, description_phrase
    from pipeline.core.text import plain_phrase
    for unit in ("a. ", "vs. ", "e.g. ", "inc. ", "a.", "(a. ", "a, ", "a; ", "1 = a. ", "chl. ", "A. b "):
        text = unit * (n // len(unit))
        print(f"helpers on {unit!r} x n", flush=True)
        _first_sentence(text)
        _first_clause(text)
        plain_phrase(text)
        for whole, qualified in ((False, False), (False, True), (True, False)):
            description_phrase("c", text, whole=whole, qualified=qualified)
    print("done", flush=True)


def test_the_collector_finds_the_registry_and_every_dynamic_pattern_is_known():
    patterns, dynamic = collected()
    assert all((r.matcher.pattern, r.matcher.flags) in patterns for r in RULES.values())
    assert len(patterns) > len(RULES) + 100  # the card readers' own, beside the registry's
    assert dynamic == DYNAMIC, ("a pattern built at run time: check that it escapes what it splices in and bounds "
                                f"its repetitions, then add it to DYNAMIC: {sorted(dynamic ^ DYNAMIC)}")


@pytest.mark.parametrize("family, n, budget", [("runs", 20_000, 600), ("nested", 20_000, 600),
                                               ("alternating", 20_000, 600), ("mib", 0, 600),
                                               ("helpers", 1 << 20, 600)])
def test_every_pattern_finishes_on_hostile_text(family, n, budget):
    proc = subprocess.Popen([sys.executable, "-m", "tests.test_hostile_patterns", family, str(n)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=budget)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        lines = out.strip().splitlines()
        pytest.fail(f"over the {budget} s budget; stalled on {lines[-1] if lines else 'start-up'}")
    assert proc.returncode == 0, out[-3000:]
    assert out.strip().splitlines()[-1] == "done"


if __name__ == "__main__":
    if sys.argv[1] == "helpers":
        helpers(int(sys.argv[2]))
    else:
        main(sys.argv[1], int(sys.argv[2]))
