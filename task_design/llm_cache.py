"""Content-addressed cache of LLM exchanges, one JSON file per key.

key = sha256(model id, prompt file hash, answer schema hash, input hash). The
files are canonical JSON (pipeline.core.jsonio), so a cache folder can be shared or
committed and diffs cleanly. Only real model answers are stored (malformed ones
included, since the validation retry is derived from them); transport failures
(timeouts, 429, 5xx) are not, so a transient outage never freezes a fallback.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pipeline.core.jsonio import dumps, write_text


def cache_key(model_id: str, prompt_sha256: str, schema_sha256: str, input_sha256: str) -> str:
    material = json.dumps([model_id, prompt_sha256, schema_sha256, input_sha256])
    return hashlib.sha256(material.encode()).hexdigest()


class LLMCache:
    def __init__(self, root: str | Path):
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        path = self._path(key)
        if not path.exists():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None  # a truncated or hand-edited file is a miss, not a crash
        ok = isinstance(entry, dict) and entry.get("key") == key and isinstance(entry.get("content"), str)
        return entry if ok else None

    def put(self, key: str, entry: dict) -> None:
        write_text(self._path(key), dumps({**entry, "key": key}))
