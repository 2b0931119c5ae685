"""Dataset cards in the formats people ship beside their data, each read into the same fields.

A card is the documentation a dataset arrives with: a title, free text, often a features table, a
licence, and rarely a declared target. The formats here are what a user's folder holds:

- `kaggle`: `dataset-metadata.json` as `kaggle datasets metadata` writes it (kagglesdk's DatasetInfo:
  title, subtitle, description, licenses, keywords, `data[].columns[]`) or the older Data Package
  shape (`resources[].schema.fields[]`, also in `datapackage.json`);
- `huggingface`: a README.md with a YAML header (license, pretty_name, dataset_info.features,
  train-eval-index's col_mapping) and a Markdown body;
- `sklearn_descr`: scikit-learn's DESCR text (RST with `:Attribute Information:` and `:Target:`);
- `markdown`: any other Markdown or text card (README.md, metadata.txt, as Kaggle shows a dataset):
  its features tables (`| Column | Description |`), `- **col**: description` lists, and the
  `=== About this file ===` / `=== Columns & descriptions ===` sections of a Kaggle card export.

Every parser is pure (text in, a Card out) and reads only structure: a features table, a field list,
a declared mapping. What the prose says about the target is the designer's to read (task_design's
evidence rules), never guessed here. `FORMATS` is the registry, tried in order by `read_card`;
`CARD_FILES` names the files a folder may hold them in. `fit_card` then fits a card to one table's
columns (the card's spelling to the table's, entries for absent columns dropped with a note).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from pipeline.core.text import shorten

# Files that hold a dataset's card, in the order their fields win when a folder holds several;
# `{stem}` is the table's own file name without its suffix (a card for that table alone).
CARD_FILES: tuple[str, ...] = ("dataset-metadata.json", "datapackage.json", "{stem}.md", "README.md", "readme.md",
                               "metadata.txt", "{stem}.rst", "DESCR.rst", "DESCR.txt", "DESCR")


class Card(BaseModel):
    """What one card says, in the card's own spelling (column names as the card writes them)."""

    model_config = ConfigDict(frozen=True)

    format: str
    title: str = ""
    subtitle: str = ""
    description: str = ""
    about_file: str = ""
    license: str = ""
    url: str = ""
    owner: str = ""
    tags: tuple[str, ...] = ()
    columns: dict[str, str] = {}  # column -> description, the first entry of a column kept
    # Per data file (Kaggle's `data[]`): file name -> {column: description}, and the file's own description.
    file_columns: dict[str, dict[str, str]] = {}
    file_about: dict[str, str] = {}
    target: str = ""  # a column the card's structure declares the target (HF col_mapping, DESCR's `:Target: NAME`)
    target_position: int | None = None  # DESCR's `:Target: Column N` (1-based)
    # A Hugging Face header's declarations, as written: train-eval-index col_mapping (column -> role) and
    # task_categories; which of them names the target is the registry's `declared.*` rules' to read.
    col_mapping: dict[str, str] = {}
    task_categories: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # one line each: what was dropped or read otherwise, for the build log


@dataclass(frozen=True)
class CardFormat:
    name: str
    matches: Callable[[str, str], bool]  # (file name, text) -> whether this format reads it
    parse: Callable[[str], Card]


# ----------------------------------------------------------------- text


def decode_card(name: str, data: bytes) -> tuple[str, tuple[str, ...]]:
    """A card's bytes as text: UTF-8 (a BOM dropped), else Latin-1 with a note (old UCI and R cards
    are Latin-1; every byte decodes, so nothing is lost silently); line ends as `\\n`; control
    characters other than line breaks and tabs dropped (an escape sequence in a card is no text)."""
    notes: tuple[str, ...] = ()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = data.decode("latin-1")
        notes = (f"{name} is not UTF-8 (byte 0x{data[exc.start]:02x} at {exc.start}): read as Latin-1",)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) != "Cc"), notes


def _clean(text: object) -> str:
    return re.sub(r"[ \t]+", " ", str(text or "")).strip()


def _add(columns: dict[str, str], notes: list[str], name: str, description: str, where: str) -> None:
    """One column entry; a second entry for the same column keeps the first, with a note when they differ."""
    name, description = _clean(name), _clean(description)
    if not name:
        return
    if name in columns:
        if columns[name] != description:
            notes.append(f"{where} describes column {name!r} twice: the first entry is kept")
        return
    columns[name] = description


# ----------------------------------------------------------------- Markdown

_NAME_HEADERS = {"column", "column name", "columns", "feature", "feature name", "features", "variable",
                 "variable name", "variables", "field", "field name", "attribute", "name", "col"}
_DESC_HEADERS = {"description", "meaning", "definition", "details", "explanation", "info", "notes",
                 "column description", "feature description", "descriptions"}
# A section whose heading names the columns: there, a plain `- name: description` bullet is an entry.
_FIELD_SECTION = re.compile(r"\b(column|feature|variable|field|attribute|data dictionary|schema|codebook)s?\b", re.I)
_SECTION_LINE = re.compile(r"^=== (.+?) ===[ \t]*$", re.M)  # a Kaggle card export's own section marks
_PLAIN_ENTRY = re.compile(r"^([^:]{1,80}?)\s*(?::|\s[-–—]\s)\s*(.*)$", re.S)
_MD: object = None


def _markdown():
    global _MD
    if _MD is None:
        from markdown_it import MarkdownIt

        _MD = MarkdownIt("commonmark", {"html": False}).enable("table")
    return _MD


def _plain(inline) -> str:
    """An inline token's text without its markup (code spans keep their text)."""
    return "".join(c.content if c.type in ("text", "code_inline") else " " if c.type in ("softbreak", "hardbreak")
                   else "" for c in (inline.children or []))


def _lead_name(inline) -> tuple[str, str] | None:
    """`**name**: rest`, `` `name` - rest `` or `*name*: rest` at the start of an inline: (name, rest)."""
    kids = [c for c in (inline.children or []) if not (c.type == "text" and not c.content.strip())]
    if not kids:
        return None
    if kids[0].type == "code_inline":
        name, after = kids[0].content, kids[1:]
    elif kids[0].type in ("strong_open", "em_open") and len(kids) >= 3 and kids[2].type in ("strong_close", "em_close"):
        if kids[1].type not in ("text", "code_inline"):
            return None
        name, after = kids[1].content, kids[3:]
    else:
        return None
    rest = "".join(c.content if c.type in ("text", "code_inline") else " " if c.type.endswith("break") else ""
                   for c in after)
    rest = rest.strip()
    if rest[:1] in (":", "-", "–", "—", "="):
        rest = rest[1:]
    elif rest and not name.rstrip().endswith(":"):
        return None  # `**Note** that ...`: emphasis in a sentence, no entry
    return name.strip().rstrip(":").strip(), rest.strip()


def _tables(tokens, columns: dict[str, str], notes: list[str]) -> None:
    i = 0
    while i < len(tokens):
        if tokens[i].type != "table_open":
            i += 1
            continue
        rows: list[list[str]] = []
        row: list[str] = []
        j = i + 1
        while tokens[j].type != "table_close":
            t = tokens[j]
            if t.type == "tr_open":
                row = []
            elif t.type == "inline":
                row.append(_plain(t))
            elif t.type == "tr_close":
                rows.append(row)
            j += 1
        i = j + 1
        if not rows:
            continue
        header = [h.strip().lower().rstrip(":") for h in rows[0]]
        name_at = next((k for k, h in enumerate(header) if h in _NAME_HEADERS), None)
        desc_at = next((k for k, h in enumerate(header) if h in _DESC_HEADERS), None)
        if name_at is None or desc_at is None or name_at == desc_at:
            continue  # a data preview or a statistics table, no features table
        for cells in rows[1:]:
            if max(name_at, desc_at) < len(cells):
                _add(columns, notes, cells[name_at], cells[desc_at], "the features table")


def _lists(tokens, columns: dict[str, str], notes: list[str]) -> None:
    """Bullet entries: `- **col**: description` anywhere; `- col: description` under a heading that
    names the columns. A nested list under an entry adds to its description (a class's levels)."""
    heading = ""
    stack: list[str | None] = []  # per open list item: the entry it is, if any
    expect_item_text = False
    for k, t in enumerate(tokens):
        if t.type == "heading_open":
            heading = _plain(tokens[k + 1])
        elif t.type == "list_item_open":
            stack.append(None)
            expect_item_text = True
        elif t.type == "list_item_close":
            stack.pop()
        elif t.type == "inline" and expect_item_text and stack:
            expect_item_text = False
            entry = _lead_name(t)
            if entry is None and _FIELD_SECTION.search(heading):
                m = _PLAIN_ENTRY.match(_plain(t).strip())
                entry = (m.group(1), m.group(2)) if m else None
            if entry is not None and not any(stack[:-1]):  # an entry, not a level of an entry above
                _add(columns, notes, *entry, "the card")
                stack[-1] = _clean(entry[0])
            else:
                parent = next((s for s in reversed(stack[:-1]) if s), None)
                if parent is not None and parent in columns:
                    text = _plain(t).strip()
                    joined = f"{columns[parent]}; {text}" if columns[parent] else text
                    columns[parent] = _clean(joined)


def _title(tokens) -> str:
    for k, t in enumerate(tokens):
        if t.type == "heading_open" and t.tag in ("h1", "h2"):
            return _clean(_plain(tokens[k + 1]))
    return ""


def _markdown_columns(text: str, notes: list[str]) -> tuple[str, dict[str, str]]:
    """(title, column entries) of Markdown text."""
    tokens = _markdown().parse(text)
    columns: dict[str, str] = {}
    _tables(tokens, columns, notes)
    _lists(tokens, columns, notes)
    return _title(tokens), columns


def parse_markdown(text: str) -> Card:
    """A Markdown or text card. A Kaggle card export's `=== About this file ===` section is the file's
    description and its `=== Columns & descriptions ===` lines (`name: description`) are column entries,
    which win over a features table in the description (they are Kaggle's own column metadata)."""
    parts = _SECTION_LINE.split(text)
    body, sections = parts[0], {parts[k].strip().lower(): parts[k + 1] for k in range(1, len(parts) - 1, 2)}
    notes: list[str] = []
    columns: dict[str, str] = {}
    for line in next((v for k, v in sections.items() if "column" in k), "").splitlines():
        name, sep, desc = line.partition(":")
        if sep and name.strip():
            _add(columns, notes, name, desc, "the column list")
    title, table_columns = _markdown_columns(body, notes)
    for name, desc in table_columns.items():  # the two sections' different words for one column both count
        known = columns.get(name)
        columns[name] = desc if known is None or desc in known else known if known in desc or not known \
            else f"{known}; {desc}"
    about = next((v for k, v in sections.items() if k.startswith("about")), "").strip()
    about = re.sub(r"^about this file\s*\n", "", about, flags=re.I).strip()
    return Card(format="markdown", title=title, description=body.strip(), about_file=about, columns=columns,
                notes=tuple(notes))


# ------------------------------------------------------------- Hugging Face

_YAML_HEADER = re.compile(r"\A---[ \t]*\n(.*?\n)---[ \t]*(?:\n|\Z)", re.S)


def _has_yaml_header(name: str, text: str) -> bool:
    return name.lower().endswith(".md") and bool(_YAML_HEADER.match(text))


def _hf_features(info) -> list[str]:
    configs = info if isinstance(info, list) else [info]
    names: list[str] = []
    for config in configs:
        features = config.get("features") if isinstance(config, dict) else None
        for f in features if isinstance(features, list) else []:
            if isinstance(f, dict) and isinstance(f.get("name"), str) and f["name"] not in names:
                names.append(f["name"])
    return names


def _hf_col_mapping(index, notes: list[str]) -> dict[str, str]:
    """train-eval-index's col_mapping entries (column -> role), the first entry's role kept for a column."""
    out: dict[str, str] = {}
    for entry in index if isinstance(index, list) else []:
        mapping = entry.get("col_mapping") if isinstance(entry, dict) else None
        for column, role in mapping.items() if isinstance(mapping, dict) else []:
            _add(out, notes, str(column), str(role), "train-eval-index's col_mapping")
    return out


def _hf_target(mapping: dict[str, str]) -> str:
    """The one column col_mapping maps to `target` (or `label`), else ""."""
    found = {column for column, role in mapping.items() if role.strip().lower() in ("target", "label", "labels")}
    return found.pop() if len(found) == 1 else ""


def parse_huggingface(text: str) -> Card:
    """A Hugging Face dataset card: the YAML header's licence, name, tags and declared target, the
    Markdown body's entries (`- `col`: description` under "Data Fields"), and the header's feature
    names for the columns the body leaves undescribed (empty descriptions: they exist, nothing more)."""
    import yaml

    class NoAliases(yaml.SafeLoader):
        """Safe YAML without anchors' aliases: a card has no use for them, and nine aliases of nine
        aliases of ... are the 'billion laughs' a header could hide."""

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                raise yaml.YAMLError("it uses an alias (*name), which a card header is not read with")
            return super().compose_node(parent, index)

    m = _YAML_HEADER.match(text)
    body = text[m.end():] if m else text
    try:
        header = yaml.load(m.group(1), Loader=NoAliases) if m else {}  # a SafeLoader, less aliases
    except yaml.YAMLError as exc:
        header = {}
        notes = [f"the card's YAML header is not valid YAML ({str(exc).splitlines()[0]}): read as Markdown only"]
    else:
        notes = []
    header = header if isinstance(header, dict) else {}
    title, columns = _markdown_columns(body, notes)
    licence = header.get("license")
    licence = licence[0] if isinstance(licence, list) and licence else licence
    tags = [t for key in ("task_categories", "tags") if isinstance(header.get(key), list) for t in header[key]]
    categories = header.get("task_categories") if isinstance(header.get("task_categories"), list) else []
    mapping = _hf_col_mapping(header.get("train-eval-index"), notes)
    features = _hf_features(header.get("dataset_info"))
    return Card(format="huggingface",
                title=_clean(header.get("pretty_name") or re.sub(r"^dataset card for\s+", "", title, flags=re.I)),
                description=body.strip(), about_file=f"Features: {', '.join(features)}." if features else "",
                license=_clean(licence) if isinstance(licence, str) else "",
                tags=tuple(sorted({_clean(t) for t in tags if isinstance(t, str) and t.strip()})),
                columns=columns, target=_hf_target(mapping), col_mapping=mapping,
                task_categories=tuple(_clean(c) for c in categories if isinstance(c, str) and c.strip()),
                notes=tuple(notes))


# --------------------------------------------------------- scikit-learn DESCR

_DESCR_MARK = re.compile(r"^[^\S\n]*:(Attribute Information|Number of Attributes|Number of Instances):", re.M)
_FIELD = re.compile(r"^(\s*):([^:\n]+):[ \t]*(.*)$")
_BULLET = re.compile(r"^(\s*)-\s+(.*\S)\s*$")
_COLUMN_N = re.compile(r"^\s*column\s+(\d+)\b", re.I)


def _is_descr(name: str, text: str) -> bool:
    return bool(_DESCR_MARK.search(text))


# A name then a wide gap, a colon, or a bracket: module-level, so that tests/test_hostile_patterns.py finds them.
_DESCR_ENTRY_FORMS = (re.compile(r"^(\S+(?: \S+)*?)\s{2,}(.+)$"), re.compile(r"^([^:]+):\s*(.*)$"),
                      re.compile(r"^([^(]+?)(?<!\s)\s*+\((.+)\)$"))


def _descr_entry(line: str) -> tuple[str, str | None]:
    """`age     age in years` / `class: ...` / `radius (mean of ...)` / `sepal length in cm` (a name
    that is its own description: None)."""
    for pattern in _DESCR_ENTRY_FORMS:
        m = pattern.match(line)
        if m:
            return m.group(1).strip(), m.group(2).strip()
    return line.strip(), None


def parse_sklearn_descr(text: str) -> Card:
    """scikit-learn's DESCR: the RST title, `:Attribute Information:`'s bullets (`- name  description`,
    a nested list adds a class's levels), and `:Target:` when it names a column or `Column N`."""
    lines = text.splitlines()
    title = ""
    for k in range(len(lines) - 1):
        if lines[k].strip() and not lines[k].startswith("..") and re.fullmatch(r"[=\-~^*]{3,}", lines[k + 1].strip()):
            title = lines[k].strip()
            break
    notes: list[str] = []
    columns: dict[str, str] = {}
    target_text = ""
    in_attributes, parent, parent_indent = False, None, -1
    for line in lines:
        field = _FIELD.match(line)
        if field:
            in_attributes = field.group(2).strip().lower() == "attribute information"
            if field.group(2).strip().lower() == "target":
                target_text = field.group(3).strip()
            parent = None
            continue
        bullet = _BULLET.match(line)
        if in_attributes and bullet:
            indent = len(bullet.group(1).expandtabs())
            if parent is not None and indent > parent_indent:
                columns[parent] = _clean(f"{columns[parent]}; {bullet.group(2)}" if columns[parent] else bullet.group(2))
                continue
            name, desc = _descr_entry(bullet.group(2))
            _add(columns, notes, name, name if desc is None else desc, "the attribute list")
            parent, parent_indent = _clean(name), indent
        elif in_attributes and line.strip() and not line.startswith((" ", "\t")):
            in_attributes = False
    position = _COLUMN_N.match(target_text)
    named = target_text.split()[0].strip(".,;:") if target_text and not position else ""
    return Card(format="sklearn_descr", title=title, description=text.strip(), columns=columns,
                target=named if named in columns else "",
                target_position=int(position.group(1)) if position else None, notes=tuple(notes))


# ----------------------------------------------------------------- Kaggle


def _is_kaggle_json(name: str, text: str) -> bool:
    return name.lower().endswith(".json")


def parse_kaggle_metadata(text: str) -> Card:
    """`dataset-metadata.json` (kagglesdk's DatasetInfo as `kaggle datasets metadata` writes it, maybe
    wrapped in `info`) or the Data Package shape (`resources[].schema.fields[]`). A features table in
    the description fills the columns no file's metadata describes."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"not valid JSON: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    doc = doc.get("info") if isinstance(doc.get("info"), dict) else doc
    notes: list[str] = []
    file_columns: dict[str, dict[str, str]] = {}
    file_about: dict[str, str] = {}
    for f in [*(doc.get("data") or []), *(doc.get("resources") or [])]:
        if not isinstance(f, dict):
            continue
        fname = _clean(f.get("path") or f.get("name"))  # a Data Package resource's file is its path
        fields = f.get("columns") if isinstance(f.get("columns"), list) else \
            (f.get("schema") or {}).get("fields") if isinstance(f.get("schema"), dict) else []
        cols: dict[str, str] = {}
        for col in fields if isinstance(fields, list) else []:
            if isinstance(col, dict) and isinstance(col.get("name"), str):
                _add(cols, notes, col["name"], col.get("description") or col.get("title") or "", fname or "a file")
        file_columns[fname] = cols
        if isinstance(f.get("description"), str) and f["description"].strip():
            file_about[fname] = f["description"].strip()
    description = doc.get("description") if isinstance(doc.get("description"), str) else ""
    _, described = _markdown_columns(description, notes)
    licences = [lic.get("name") for lic in doc.get("licenses") or [] if isinstance(lic, dict) and lic.get("name")]
    ref = doc.get("id") if isinstance(doc.get("id"), str) and "/" in doc.get("id", "") else \
        f"{doc['ownerUser']}/{doc['datasetSlug']}" if doc.get("ownerUser") and doc.get("datasetSlug") else ""
    keywords = doc.get("keywords") if isinstance(doc.get("keywords"), list) else []
    return Card(format="kaggle", title=_clean(doc.get("title")), subtitle=_clean(doc.get("subtitle")),
                description=description.strip(), license=_clean(licences[0]) if licences else "",
                url=f"https://www.kaggle.com/datasets/{ref}" if ref else "", owner=ref.partition("/")[0],
                tags=tuple(sorted({_clean(k) for k in keywords if isinstance(k, str) and k.strip()})),
                columns=described, file_columns=file_columns, file_about=file_about, notes=tuple(notes))


# ----------------------------------------------------------------- registry

FORMATS: tuple[CardFormat, ...] = (
    CardFormat("kaggle", _is_kaggle_json, parse_kaggle_metadata),
    CardFormat("huggingface", _has_yaml_header, parse_huggingface),
    CardFormat("sklearn_descr", _is_descr, parse_sklearn_descr),
    CardFormat("markdown", lambda name, text: True, parse_markdown),
)


def read_card(name: str, text: str) -> Card:
    """The card in file `name` by the first format that reads it; ValueError (one line) when it cannot."""
    fmt = next(f for f in FORMATS if f.matches(name, text))
    try:
        card = fmt.parse(text)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None
    return card.model_copy(update={"notes": tuple(f"{name}: {n}" for n in card.notes)})


def merge_cards(cards: list[Card]) -> Card | None:
    """Several cards of one dataset as one: a field set by an earlier card wins, column entries too."""
    if not cards:
        return None
    out = cards[0]
    for card in cards[1:]:
        update = {k: v for k, v in card.model_dump().items()
                  if k not in ("format", "columns", "file_columns", "file_about", "col_mapping", "notes") and v
                  and not getattr(out, k)}
        update["col_mapping"] = {**card.col_mapping, **out.col_mapping}
        update["columns"] = {**card.columns, **out.columns}
        update["file_columns"] = {**card.file_columns, **out.file_columns}
        update["file_about"] = {**card.file_about, **out.file_about}
        update["notes"] = out.notes + card.notes
        out = out.model_copy(update=update)
    return out


# ----------------------------------------------------------- fit to a table


def _key(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", name.casefold())


def _tokens(name: str) -> set[str]:
    return set(re.findall(r"[0-9a-z]+", name.casefold()))


def _match(name: str, columns: list[str]) -> str | None:
    """The one table column a card's `name` spells: exactly, up to case and punctuation, or (a name of
    two words or more) a column whose every word the card's name holds (`sepal length in cm` ->
    `sepal length (cm)`); None when none or several fit."""
    if name in columns:
        return name
    for same in (lambda c: c.strip().casefold() == name.strip().casefold(), lambda c: _key(c) == _key(name)):
        hits = [c for c in columns if same(c)]
        if len(hits) == 1:
            return hits[0]
        if hits:
            return None
    words = _tokens(name)
    hits = [c for c in columns if len(_tokens(c)) >= 2 and _tokens(c) <= words]
    return hits[0] if len(hits) == 1 else None


def _file_entry(mapping: dict[str, object], table_name: str):
    names = [k for k in mapping if k.replace("\\", "/").rsplit("/", 1)[-1].casefold() == table_name.casefold()]
    return mapping[names[0]] if names else None


def fit_card(card: Card, table_name: str, columns: list[str] | None) -> tuple[dict, tuple[str, ...]]:
    """DatasetRecord fields from `card` for the table file `table_name` with header `columns` (None: not
    known, names kept as the card spells them), and the notes of what was dropped. The table's own
    file entry (Kaggle's `data[]`) wins over the other files' and the description's columns."""
    notes = list(card.notes)
    own = _file_entry(card.file_columns, table_name)
    merged: dict[str, str] = dict(own or {})
    for other in [v for k, v in sorted(card.file_columns.items()) if v is not own] + [card.columns]:
        for name, desc in other.items():
            if not merged.get(name):  # an empty entry (Kaggle's blank column description) is filled
                merged[name] = desc
    docs: dict[str, str] = {}
    absent: list[str] = []
    twice: list[tuple[str, str]] = []
    for name, desc in merged.items():
        column = _match(name, columns) if columns is not None else name
        if column is None:
            absent.append(name)
            continue
        if column in docs:
            twice.append((column, name))
            continue
        if desc:
            docs[column] = desc
    # One line per kind, however many columns: a card naming 20,000 absent columns is one line of the log.
    if len(absent) == 1:
        notes.append(f"the card describes column {absent[0]!r}, which the table does not have: ignored")
    elif absent:
        notes.append(f"the card describes {len(absent)} columns the table does not have ({_some(map(repr, absent))}): "
                     "ignored")
    if len(twice) == 1:
        notes.append(f"the card describes column {twice[0][0]!r} twice (as {twice[0][1]!r}): the first entry is kept")
    elif twice:
        notes.append(f"the card describes {len(twice)} columns twice ({_some(repr(c) for c, _ in twice)}): "
                     "the first entries are kept")
    fields: dict = {k: getattr(card, k) for k in ("title", "subtitle", "description", "license", "url", "owner", "tags")
                    if getattr(card, k)}
    about = _file_entry(card.file_about, table_name) or card.about_file
    if about:
        fields["about_file"] = about
    if docs:
        fields["column_descriptions"] = docs
    roles = {column: role for name, role in card.col_mapping.items()
             if (column := _match(name, columns) if columns is not None else name) is not None}
    if roles:
        fields["declared_roles"] = roles
    if card.task_categories:
        fields["task_categories"] = card.task_categories
    target = _match(card.target, columns) if card.target and columns is not None else card.target or None
    if target is None and card.target_position is not None and columns is not None \
            and 1 <= card.target_position <= len(columns):
        target = columns[card.target_position - 1]
    if target:
        fields["target_hint"] = target
    elif card.target or card.target_position:
        notes.append(f"the card's declared target ({card.target or f'column {card.target_position}'}) "
                     "is no column of the table: ignored")
    if len(notes) > MAX_NOTES:
        notes = notes[:MAX_NOTES - 1] + [f"and {len(notes) - MAX_NOTES + 1} more notes of the same card"]
    return fields, tuple(notes)


MAX_NOTES = 10  # lines one card may add to the build log


def _some(items, shown: int = 3) -> str:
    """The first `shown` of `items`, and how many more: a note stays one short line."""
    items = list(items)
    more = f", and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(shorten(i, 60) for i in items[:shown]) + more
