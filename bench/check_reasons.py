"""An outsider's check of a built tree's texts: no reason is cut inside a word, and run_report.md's header
counts what question_list.json lists.

    .venv/bin/python bench/check_reasons.py TREE [TREE ...] [--log BUILD_LOG]

Three checks, each printed with its counts and every failure:

  files      every text of every task's verify/all_metadata.json and of question_list.json is whole:
             no "…" right after a letter or digit (a display cut kept in a file), brackets and
             quotes balanced (a fixed-width cut of nested evidence, "(score 1.25: a me)", leaves
             them open), and no text ends on a word that is only the start of a longer word of the
             tree ("va" of "variable") while never standing alone anywhere;
  displays   every "…" in run_report.md, corpus_report.html (and --log, the printed summary) follows
             a whole word: the text before it is found in a whole text of the tree, and there the
             next character is not a letter or digit. A shortened text that cannot be found is
             listed as unmatched (a failure: its whole text is nowhere one file away);
  header     run_report.md's "built: N tasks (a classification, ...)" against question_list.json's
             tasks counted by their problem type (its `task` field).

Exits 1 when any check fails, so it can gate a build in a script.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from collections import Counter
from pathlib import Path

ELLIPSIS = "…"
# A deliberate ellipsis standing for omitted code: "lm(y ~ …)", "arima(log10(x), …)".
CODE_ELLIPSIS = re.compile(r"(~ |, |\(|\[)…")
WORD = re.compile(r"[A-Za-z]+")
OPENERS, CLOSERS = "([{", ")]}"


def strings(value) -> list[str]:
    """Every string inside a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def unbalanced(text: str) -> bool:
    depth = 0
    for ch in text:
        if ch in OPENERS:
            depth += 1
        elif ch in CLOSERS:
            depth -= 1
    return depth != 0


def tree_texts(tree: Path) -> dict[str, list[str]]:
    """File -> its whole texts: every task's all_metadata.json and question_list.json."""
    out = {str(p.relative_to(tree)): strings(json.loads(p.read_text()))
           for p in sorted(tree.glob("*/verify/all_metadata.json"))}
    out["question_list.json"] = strings(json.loads((tree / "question_list.json").read_text()))
    return out


def cut_tails(texts: dict[str, list[str]], whole: str) -> tuple[int, list[str]]:
    """A text quoting a source's description ("... variable: Site is located ... about 190 m abo))") is
    checked where the quote ends: its last clause, found in the sources' metadata.txt, must stop there at
    a word boundary, not go on with a letter or digit. Returns how many quoted tails were found."""
    found, problems = 0, []
    for where, ts in texts.items():
        for t in ts:
            if not (" " in t and "(" in t and len(t) < 2000):
                continue
            tail = re.split(r": |\(", re.sub(r"[)\]}'\"]+$", "", t))[-1]
            if len(tail) < 12:
                continue
            after = [whole[i + len(tail): i + len(tail) + 1] for i in _find_all(whole, tail)]
            if after:
                found += 1
                if all(a.isalnum() for a in after):
                    problems.append(f"{where}: cut inside a word (its source goes on with {after[0]!r}): "
                                    f"...{t[-110:]!r}")
    return found, problems


def unescape(display: str) -> str:
    """A display line back to plain text: Markdown's escaped pipes and entities, HTML's entities."""
    return html.unescape(display.replace("\\|", "|"))


def check_displays(sources: dict[str, str], whole: list[str]) -> tuple[int, list[str]]:
    corpus = "\x00".join(whole)
    checked, problems = 0, []
    for where, text in sources.items():
        for line in unescape(text).splitlines():
            for m in re.finditer(ELLIPSIS, line):
                if CODE_ELLIPSIS.match(line, max(0, m.start() - 2)) or CODE_ELLIPSIS.match(line, max(0, m.start() - 1)):
                    continue
                # The shortened text before the ellipsis, back to its cell or clause start.
                head = re.split(r"[|<>;\x00]|\(| \d+: ", line[: m.start()])[-1].lstrip()
                head = head[-60:]
                if len(head) < 4 or "ending in …" in line or "ending in '…'" in line:
                    continue
                checked += 1
                hits = [corpus[i + len(head): i + len(head) + 1] for i in _find_all(corpus, head)]
                if not hits:
                    problems.append(f"{where}: unmatched (no whole text holds it): {head!r}…")
                elif all(h.isalnum() for h in hits):
                    problems.append(f"{where}: cut inside a word: {head!r}… (whole text goes on {hits[0]!r})")
    return checked, problems


def _find_all(corpus: str, sub: str) -> list[int]:
    out, i = [], corpus.find(sub)
    while i != -1:
        out.append(i)
        i = corpus.find(sub, i + 1)
    return out


def check_header(tree: Path) -> tuple[str, list[str]]:
    report = (tree / "run_report.md").read_text()
    m = re.search(r"^- built: (\d+) tasks? \(([^)]*)\)", report, re.M)
    questions = json.loads((tree / "question_list.json").read_text())
    types = Counter(q["task"] for q in questions)
    if not m:
        return "", ["run_report.md has no '- built: N tasks (...)' line"]
    said = {k: int(n) for n, k in re.findall(r"(\d+) ([\w]+)", m.group(2))}
    problems = []
    if int(m.group(1)) != len(questions):
        problems.append(f"header says {m.group(1)} tasks, question_list.json lists {len(questions)}")
    if said != dict(types):
        problems.append(f"header counts {said} != question_list.json's {dict(types)}")
    return m.group(0), problems


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("trees", nargs="+", type=Path)
    p.add_argument("--log", type=Path, action="append", default=[], help="a build's printed output to check too")
    args = p.parse_args()
    failed = False
    for tree in args.trees:
        texts = tree_texts(tree)
        sources = "\x00".join(p.read_text(errors="replace") for p in sorted(tree.glob("*/source/metadata.txt")))
        whole = [t for ts in texts.values() for t in ts] + [sources]
        report = (tree / "run_report.md").read_text()
        # The rejections table shows each skipped dataset's reason whole: it is the whole text of the
        # shortened reasons in the corpus report.
        whole += [unescape(c) for c in re.findall(r"^\| [^|]+ \| \w+ \| (.*) \|$", report, re.M)]
        displays = {"run_report.md": report, "corpus_report.html": (tree / "corpus_report.html").read_text()}
        displays |= {str(log): log.read_text() for log in args.log}
        # A shortened phrase inside a file (a feature's description in a question) is checked like a display.
        displays |= {where: "\n".join(ts) for where, ts in texts.items()}
        quoted, file_problems = cut_tails(texts, sources)
        checked, display_problems = check_displays(displays, whole)
        header, header_problems = check_header(tree)
        n_texts = sum(len(ts) for ts in texts.values())
        print(f"{tree}: {len(texts) - 1} tasks")
        print(f"  files     {n_texts} texts in all_metadata.json and question_list.json, {quoted} ending on a "
              f"quote of metadata.txt: {len(file_problems)} cut inside a word")
        print(f"  displays  {checked} shortened texts (…) checked in the reports, the log and those files: "
              f"{len(display_problems)} problem(s)")
        print(f"  header    {header!r}: {'matches question_list.json' if not header_problems else 'MISMATCH'}")
        for line in file_problems + display_problems + header_problems:
            print("    " + line)
        failed |= bool(file_problems or display_problems or header_problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
