"""A loopback Kaggle API: `POST /api/v1/datasets.DatasetApiService/<Method>` with JSON bodies.

kagglesdk with KAGGLE_API_ENVIRONMENT=TEST talks to http://localhost:7777 (the
port is fixed in kagglesdk/kaggle_env.py), so `kaggle_server()` serialises
test sessions on a lock file and skips when another program holds the port.
Downloads answer with a 302 to a blob URL, as Kaggle's do.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tests.sourcing.loopback.server import Handler, LoopbackServer

KAGGLE_TEST_PORT = 7777
SECRET = "daregen-secret-token-123"  # the test KAGGLE_KEY: must never reach a log, a task or a cache
SERVICE = "/api/v1/datasets.DatasetApiService/"


@dataclass
class KaggleDataset:
    owner: str
    slug: str
    version: int
    title: str
    licence: str
    archive: bytes
    columns: dict[str, str] = field(default_factory=dict)  # column -> description
    file_name: str = "data.csv"
    tags: tuple[str, ...] = ()
    usability: float = 0.9
    description: str = ""  # the metadata's description (default: one line naming the fixture)

    @property
    def ref(self) -> str:
        return f"{self.owner}/{self.slug}"

    def api_dataset(self) -> dict:
        return {
            "id": zlib.crc32(self.ref.encode()) % 10**6, "ref": self.ref, "title": self.title,
            "subtitle": f"{self.title}, a fixture", "description": f"The {self.title} fixture dataset.",
            "ownerName": self.owner.capitalize(), "ownerRef": self.owner, "licenseName": self.licence,
            "totalBytes": len(self.archive), "lastUpdated": "2024-03-01T10:00:00.000Z",
            "currentVersionNumber": self.version, "usabilityRating": self.usability,
            "url": f"https://www.kaggle.com/datasets/{self.ref}",
            "tags": [{"ref": t, "name": t} for t in self.tags],
        }

    def metadata(self) -> dict:
        return {"info": {
            "datasetSlug": self.slug, "ownerUser": self.owner, "usabilityRating": self.usability,
            "title": self.title, "subtitle": f"{self.title}, a fixture",
            "description": self.description or f"The {self.title} fixture dataset, written for daregen's tests.",
            "keywords": list(self.tags), "licenses": [{"name": self.licence}],
            "data": [{"name": self.file_name, "description": f"One row per {self.slug} record.",
                      "columns": [{"name": k, "description": v, "type": "string"} for k, v in self.columns.items()]}],
        }}


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return buf.getvalue()


def zip_slip_bytes() -> bytes:
    return zip_bytes({"data.csv": b"a,b\n1,2\n", "../../escaped.txt": b"owned"})


def corrupt(archive: bytes) -> bytes:
    """Flip bytes inside the first member's compressed data: the zip opens, its CRC check fails."""
    data = bytearray(archive)
    start = 30 + int.from_bytes(data[26:28], "little") + int.from_bytes(data[28:30], "little")
    for i in range(start + 5, start + 25):
        data[i] ^= 0xFF
    return bytes(data)


def penguins_frame(n: int = 150) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    species = rng.choice(["Adelie", "Gentoo", "Chinstrap"], size=n)
    base = pd.Series(species).map({"Adelie": 38.0, "Gentoo": 47.0, "Chinstrap": 49.0}).to_numpy()
    return pd.DataFrame({
        "bill_length_mm": np.round(base + rng.normal(0, 2.5, n), 1),
        "bill_depth_mm": np.round(17 + rng.normal(0, 1.5, n), 1),
        "flipper_length_mm": np.round(190 + (base - 38) * 2 + rng.normal(0, 6, n)).astype(int),
        "island": rng.choice(["Biscoe", "Dream", "Torgersen"], size=n),
        "species": species,
    })


def housing_frame(n: int = 160) -> pd.DataFrame:
    rng = np.random.default_rng(12)
    rooms = rng.integers(2, 9, n)
    area = np.round(rooms * 18 + rng.normal(0, 10, n), 1)
    age = rng.integers(0, 80, n)
    district = rng.choice(["north", "south", "east", "west"], size=n)
    premium = pd.Series(district).map({"north": 60, "south": 0, "east": 30, "west": -20}).to_numpy()
    # Price rests on area, age and district with noise, so no single feature passes the designer's leak screen.
    return pd.DataFrame({
        "rooms": rooms, "area_m2": area, "age_years": age, "district": district,
        "price_k": np.round(area * 2.5 - age * 1.5 + premium + rng.normal(0, 30, n), 1),
    })


def fixture_datasets() -> dict[str, KaggleDataset]:
    penguins = penguins_frame().to_csv(index=False).encode()
    housing = housing_frame().to_csv(index=False).encode()
    out = [
        KaggleDataset("alice", "penguins", 2, "Palmer Penguins Lite", "CC0: Public Domain",
                      zip_bytes({"penguins.csv": penguins, "README.txt": b"fixture"}),
                      {"bill_length_mm": "Bill length in millimetres.", "species": "Penguin species."},
                      file_name="penguins.csv", tags=("biology", "animals"), description=(
                          "## Palmer Penguins Lite\n\n| Column | Description |\n|---|---|\n"
                          "| `bill_length_mm` | Bill length |\n| `flipper_length_mm` | Flipper length in millimetres |\n"
                          "| `body_mass_g` | Body mass in grams |\n")),
        KaggleDataset("bob", "housing", 1, "Small Housing Prices", "CC BY-SA 4.0",
                      zip_bytes({"housing.csv": housing}), {"price_k": "Sale price in thousands."},
                      file_name="housing.csv", tags=("real estate",), usability=0.7),
        KaggleDataset("mallory", "slip", 1, "Penguins Slip", "CC0: Public Domain", zip_slip_bytes(),
                      tags=("animals",)),
        KaggleDataset("carol", "broken", 3, "Broken Penguins", "CC0: Public Domain",
                      corrupt(zip_bytes({"penguins.csv": penguins})), tags=("animals",)),
        KaggleDataset("dave", "gpl-penguins", 1, "GPL Penguins", "GPL 2", zip_bytes({"penguins.csv": penguins}),
                      tags=("animals",)),
    ]
    return {d.ref: d for d in out}


class KaggleHandler(Handler):
    datasets: dict[str, KaggleDataset] = {}

    def _dataset(self, body: dict) -> KaggleDataset | None:
        return self.datasets.get(f"{body.get('ownerSlug')}/{body.get('datasetSlug')}")

    def _json(self, payload: dict, status: int = 200) -> None:
        self.send_bytes(json.dumps(payload).encode(), "application/json", status)

    def _not_found(self) -> None:
        self._json({"code": 404, "message": "Dataset not found"}, 404)

    def do_POST(self):  # noqa: N802 - http.server's naming
        if not self.path.startswith(SERVICE):
            return self._not_found()
        method = self.path[len(SERVICE):]
        body = self.read_json()
        if method == "ListDatasets":
            if self.fault("ListDatasets") == "handled":
                return None
            terms = (body.get("search") or "").lower()
            found = [d.api_dataset() for _, d in sorted(self.datasets.items())
                     if terms in d.title.lower() or terms in d.ref]
            return self._json({"datasets": found, "nextPageToken": ""})
        ds = self._dataset(body)
        key = f"{method} {ds.ref if ds else '?'}"
        fault = self.fault(key)
        if fault == "handled":
            return None
        if ds is None:
            return self._not_found()
        if method == "GetDataset":
            return self._json(ds.api_dataset())
        if method == "GetDatasetMetadata":
            return self._json(ds.metadata())
        if method == "DownloadDataset":
            version = body.get("datasetVersionNumber") or ds.version
            self.send_response(302)
            self.send_header("Location", f"/blobs/{ds.owner}/{ds.slug}/{version}.zip")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        return self._not_found()

    def do_GET(self):  # noqa: N802
        parts = self.path.strip("/").split("/")
        if len(parts) != 4 or parts[0] != "blobs":
            return self._not_found()
        ds = self.datasets.get(f"{parts[1]}/{parts[2]}")
        key = f"blob {parts[1]}/{parts[2]}"
        fault = self.fault(key)
        if fault == "handled":
            return None
        if ds is None or parts[3] != f"{ds.version}.zip":
            return self._not_found()
        self.send_bytes(ds.archive, "application/zip", truncate=fault == "truncate")
        return None


@contextlib.contextmanager
def kaggle_server(datasets: dict[str, KaggleDataset] | None = None):
    """The loopback Kaggle API on port 7777, one test session at a time; skips if the port is taken."""
    import pytest

    lock_path = os.path.join(tempfile.gettempdir(), "daregen-kaggle-7777.lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another agent's test session waits here
        handler = type("FixtureKaggleHandler", (KaggleHandler,), {"datasets": datasets or fixture_datasets()})
        try:
            server = LoopbackServer(handler, KAGGLE_TEST_PORT)
        except OSError as exc:
            pytest.skip(f"port {KAGGLE_TEST_PORT} (kagglesdk's TEST endpoint) is busy: {exc}")
        with server:
            yield server
