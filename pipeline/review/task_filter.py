"""`daregen tasks --where/--order-by`: a condition and an order over the index's columns, parsed, never
pasted into SQL.

Pasted, `--where "1=1; COPY tasks TO '/x'"` ran a second statement that wrote a file. Parsed, the text
can only be what the small grammar below admits: columns by name (from the index's own list, quoted
as identifiers), values as bound parameters, and the operators of a filter.

    condition := term ("or" term)*            term := factor ("and" factor)*
    factor    := "not" factor | "(" condition ")" | test
    test      := COLUMN ("=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">=") VALUE
               | COLUMN ["not"] ("like" | "ilike") STRING
               | COLUMN ["not"] "in" "(" VALUE ("," VALUE)* ")"
               | COLUMN ["not"] "between" VALUE "and" VALUE
               | COLUMN "is" ["not"] "null"
    VALUE     := NUMBER | 'STRING' ('' for a quote) | true | false
    order     := COLUMN ["asc" | "desc"] ("," COLUMN ["asc" | "desc"])*
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pipeline.core.sqlite import quote_identifier

_MAX_CHARS = 4096  # a filter is typed by hand; a longer one is a mistake or an attack on the parser
_MAX_DEPTH = 32  # nested parentheses and "not": the parser recurses once per level
_TOKEN = re.compile(r"""(?<!\s)\s*(?:(?P<number>-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)|(?P<string>'(?:[^']|'')*')"""
                    r"""|(?P<op><=|>=|<>|!=|==|=|<|>|\(|\)|,)|(?P<word>[A-Za-z_][A-Za-z0-9_]*))""")
_COMPARE = {"=": "=", "==": "=", "!=": "<>", "<>": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _tokens(text: str, what: str) -> list[tuple[str, str, str]]:
    """(kind, text, as typed) of each token; kind is number, string, op or word (lower-cased, except strings).
    The spelling as typed is for messages: an unquoted `lifeExp` is quoted back as typed."""
    if len(text) > _MAX_CHARS:
        raise ValueError(f"{what}: {len(text)} characters, over the limit of {_MAX_CHARS}")
    out, pos = [], 0
    while pos < len(text):
        if not text[pos:].strip():
            break
        match = _TOKEN.match(text, pos)
        if match is None:
            bad = text[pos:].lstrip()[:20]
            raise ValueError(f"{what}: unexpected {bad!r} (a condition over the index's columns, e.g. "
                             f"\"problem_type = 'regression' and val_rows < 100\")")
        kind = match.lastgroup
        value = match.group(kind)
        out.append((kind, value if kind in ("string", "number") else value.lower(), value))
        pos = match.end()
    return out


class _Parser:
    def __init__(self, text: str, columns: Sequence[str], what: str) -> None:
        self.tokens, self.columns, self.what = _tokens(text, what), tuple(columns), what
        self.pos, self.params = 0, []

    def fail(self, message: str) -> ValueError:
        return ValueError(f"{self.what}: {message}")

    def peek(self, offset: int = 0) -> tuple[str, str, str] | None:
        i = self.pos + offset
        return self.tokens[i] if i < len(self.tokens) else None

    def take(self, *words: str) -> str | None:
        """The next token's text if it is one of `words` (consumed), else None."""
        token = self.peek()
        if token is not None and token[0] in ("word", "op") and token[1] in words:
            self.pos += 1
            return token[1]
        return None

    def expect(self, *words: str) -> str:
        got = self.take(*words)
        if got is None:
            raise self.fail(f"expected {' or '.join(repr(w) for w in words)}, got {self.describe()}")
        return got

    def describe(self) -> str:
        token = self.peek()
        return "the end" if token is None else repr(token[2])

    def column(self) -> str:
        token = self.peek()
        if token is None or token[0] != "word" or token[1] not in self.columns:
            raise self.fail(f"expected a column ({', '.join(self.columns)}), got {self.describe()}")
        self.pos += 1
        return quote_identifier(token[1])

    def value(self) -> str:
        """A bound parameter's placeholder; the value goes to self.params."""
        token = self.peek()
        if token is None:
            raise self.fail("expected a value, got the end")
        kind, text, typed = token
        if kind == "number":
            self.params.append(float(text) if any(c in text for c in ".eE") else int(text))
        elif kind == "string":
            self.params.append(text[1:-1].replace("''", "'"))
        elif kind == "word" and text in ("true", "false"):
            self.params.append(text == "true")
        else:
            hint = (f": text is quoted, '{typed}' (and the whole condition in double quotes for the shell)"
                    if kind == "word" else "")
            raise self.fail(f"expected a value (a number, 'text', true or false), got {typed!r}{hint}")
        self.pos += 1
        return "?"

    def condition(self, depth: int = 0) -> str:
        if depth > _MAX_DEPTH:
            raise self.fail(f"nested deeper than {_MAX_DEPTH} levels")
        parts = [self.term(depth)]
        while self.take("or"):
            parts.append(self.term(depth))
        return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"

    def term(self, depth: int) -> str:
        parts = [self.factor(depth)]
        while self.take("and"):
            parts.append(self.factor(depth))
        return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"

    def factor(self, depth: int) -> str:
        if depth > _MAX_DEPTH:
            raise self.fail(f"nested deeper than {_MAX_DEPTH} levels")
        if self.take("not"):
            return f"(NOT {self.factor(depth + 1)})"
        if self.take("("):
            inner = self.condition(depth + 1)
            self.expect(")")
            return inner
        return self.test()

    def test(self) -> str:
        column = self.column()
        if op := self.take(*_COMPARE):
            return f"({column} {_COMPARE[op]} {self.value()})"
        if self.take("is"):
            negated = " NOT" if self.take("not") else ""
            self.expect("null")
            return f"({column} IS{negated} NULL)"
        negated = "NOT " if self.take("not") else ""
        if op := self.take("like", "ilike"):
            token = self.peek()
            if token is None or token[0] != "string":
                raise self.fail(f"{op} takes a 'pattern', got {self.describe()}")
            return f"({column} {negated}{op.upper()} {self.value()})"
        if self.take("in"):
            self.expect("(")
            values = [self.value()]
            while self.take(","):
                values.append(self.value())
            self.expect(")")
            return f"({column} {negated}IN ({', '.join(values)}))"
        if self.take("between"):
            low = self.value()
            self.expect("and")
            return f"({column} {negated}BETWEEN {low} AND {self.value()})"
        raise self.fail(f"expected a comparison after the column, got {self.describe()}")


def parse_where(text: str, columns: Sequence[str]) -> tuple[str, list]:
    """(SQL condition with `?` placeholders, their values) of a --where text; ValueError names what is
    wrong in one line."""
    parser = _Parser(text, columns, "--where")
    if not parser.tokens:
        raise parser.fail("empty condition")
    sql = parser.condition()
    if parser.peek() is not None:
        raise parser.fail(f"unexpected {parser.describe()} after the condition")
    return sql, parser.params


def parse_order_by(text: str | None, columns: Sequence[str]) -> str:
    """The SQL ORDER BY list of a --order-by text (columns, each optionally asc or desc), ending with
    task_dir so rows that tie come in the same order every time."""
    parser = _Parser(text or "", columns, "--order-by")
    keys: list[str] = []
    while parser.peek() is not None:
        column = parser.column()
        direction = (parser.take("asc", "desc") or "asc").upper()
        keys.append(f"{column} {direction}")
        if parser.peek() is not None:
            parser.expect(",")
    if '"task_dir"' not in {k.split()[0] for k in keys}:
        keys.append('"task_dir" ASC')
    return ", ".join(keys)
