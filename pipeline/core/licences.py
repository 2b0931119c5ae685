"""Licence names as canonical keys: what sources spell many ways, the filters and the reports read as one.

sourcing filters candidates by these keys (SourceFilters.licences); the tree reports group tasks by them.
"""

from __future__ import annotations

import re

UNKNOWN_LICENCE = "unknown"

# Canonical licence keys. Sources spell licences many ways ("CC0: Public Domain",
# "Attribution 4.0 International (CC BY 4.0)", "Public", "CC BY-SA 4.0"); the
# first matching rule wins, so the specific CC variants come before plain cc-by.
_LICENCE_RULES: tuple[tuple[str, str], ...] = (
    (r"\bcc0\b|cc-zero|public domain|^public$|\bpddl\b", "cc0"),
    (r"by[- ]?nc[- ]?sa|noncommercial-sharealike", "cc-by-nc-sa"),
    (r"by[- ]?nc[- ]?nd|noncommercial-noderiv", "cc-by-nc-nd"),
    (r"by[- ]?nc\b|noncommercial", "cc-by-nc"),
    (r"by[- ]?nd\b|noderiv", "cc-by-nd"),
    (r"by[- ]?sa\b|sharealike", "cc-by-sa"),
    (r"\bcc[- ]?by\b|creative commons attribution|attribution \d", "cc-by"),
    (r"\bodbl\b|open database", "odbl"),  # Kaggle: "Database: Open Database, Contents: ..."
    (r"odc[- ]?by|open data commons attribution", "odc-by"),
    (r"\bmit\b", "mit"),
    (r"apache", "apache-2.0"),
    (r"\bbsd\b", "bsd"),
    (r"\bgpl\b|gnu general public", "gpl"),
    (r"world bank|u\.?s\.? government|open government", "open-government"),
)

# Permissive and Creative Commons licences (the ones real sources may redistribute under); GPL is copyleft and "other"
# or "unknown" say nothing, so neither is allowed by default.
DEFAULT_LICENCES: tuple[str, ...] = tuple(sorted((
    "cc0", "cc-by", "cc-by-sa", "cc-by-nc", "cc-by-nc-sa", "cc-by-nd", "cc-by-nc-nd",
    "odbl", "odc-by", "mit", "apache-2.0", "bsd", "open-government")))


def canonical_licence(text: str | None) -> str:
    """A source's licence name as one of the keys above, or `unknown`."""
    lowered = (text or "").strip().lower()
    if not lowered or lowered in {"unknown", "other", "none", "n/a"}:
        return UNKNOWN_LICENCE
    for pattern, key in _LICENCE_RULES:
        if re.search(pattern, lowered):
            return key
    return UNKNOWN_LICENCE
