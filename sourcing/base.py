"""The one interface every source adapter implements.

A source lists candidate refs in a stable order, describes each one as a
DatasetRecord, and loads its table. Adapters are looked up by key in
sourcing.registry; they own network access and caches, nothing else does.
"""

from __future__ import annotations

from typing import Protocol

import pandas as pd

from pipeline.records import DatasetRecord


class Source(Protocol):
    key: str

    def candidates(self) -> list[str]:
        """All refs this source offers, in a stable order."""

    def record(self, ref: str) -> DatasetRecord:
        """Metadata for one ref (title, description, column docs, licence)."""

    def load_table(self, ref: str) -> pd.DataFrame:
        """The raw table for one ref, before normalisation."""
