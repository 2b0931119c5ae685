"""A loopback OpenML server: the XML API under /api/v1/xml and ARFF files under /data/v1/download.

Point the real client at it with `openml.config.server = server.url + "/api/v1/xml"`.
Errors follow OpenML's format (an `oml:error` document with a code), e.g. code
372 for an empty listing, which the client turns into OpenMLServerNoResult.
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
from xml.sax.saxutils import escape

import numpy as np
import pandas as pd

from tests.sourcing.loopback.server import Handler, LoopbackServer

NS = 'xmlns:oml="http://openml.org/openml"'


@dataclass
class OpenMLDatasetFixture:
    did: int
    name: str
    frame: pd.DataFrame
    nominal: dict[str, list[str]]
    target: str
    licence: str = "Public"
    tags: tuple[str, ...] = ("daregen-test",)
    bad_checksum: bool = False  # the description's md5 never matches the served file
    text: str = ""  # the description's Markdown (default: one line naming the fixture)

    def arff(self) -> bytes:
        lines = [f"% {self.name}: daregen fixture", f"@RELATION {self.name}", ""]
        for col in self.frame.columns:
            kind = "{" + ",".join(self.nominal[col]) + "}" if col in self.nominal else "NUMERIC"
            lines.append(f"@ATTRIBUTE {col} {kind}")
        lines += ["", "@DATA"]
        for row in self.frame.itertuples(index=False):
            lines.append(",".join("?" if pd.isna(v) else str(v) for v in row))
        return ("\n".join(lines) + "\n").encode()

    def description(self, base_url: str) -> bytes:
        md5 = "0" * 32 if self.bad_checksum else hashlib.md5(self.arff()).hexdigest()  # noqa: S324 - OpenML's own
        tags = "".join(f"<oml:tag>{escape(t)}</oml:tag>" for t in self.tags)
        return f"""<oml:data_set_description {NS}>
<oml:id>{self.did}</oml:id><oml:name>{escape(self.name)}</oml:name><oml:version>1</oml:version>
<oml:description>{escape(self.text or f"**{self.name}**: a fixture dataset written for daregen's tests.")}</oml:description>
<oml:format>ARFF</oml:format><oml:creator>Daregen Fixtures</oml:creator>
<oml:upload_date>2023-05-04T12:00:00</oml:upload_date><oml:licence>{escape(self.licence)}</oml:licence>
<oml:url>{base_url}/data/v1/download/{self.did}/{self.name}.arff</oml:url><oml:file_id>{self.did}</oml:file_id>
<oml:default_target_attribute>{self.target}</oml:default_target_attribute>{tags}
<oml:visibility>public</oml:visibility><oml:status>active</oml:status>
<oml:md5_checksum>{md5}</oml:md5_checksum>
</oml:data_set_description>""".encode()

    def features(self) -> bytes:
        out = []
        for i, col in enumerate(self.frame.columns):
            kind = "nominal" if col in self.nominal else "numeric"
            values = "".join(f"<oml:nominal_value>{v}</oml:nominal_value>" for v in self.nominal.get(col, []))
            out.append(f"<oml:feature><oml:index>{i}</oml:index><oml:name>{col}</oml:name>"
                       f"<oml:data_type>{kind}</oml:data_type>{values}"
                       f"<oml:is_target>{str(col == self.target).lower()}</oml:is_target>"
                       f"<oml:is_ignore>false</oml:is_ignore><oml:is_row_identifier>false</oml:is_row_identifier>"
                       f"<oml:number_of_missing_values>{int(self.frame[col].isna().sum())}"
                       f"</oml:number_of_missing_values></oml:feature>")
        return f"<oml:data_features {NS}>{''.join(out)}</oml:data_features>".encode()

    def listing_entry(self) -> str:
        qualities = {
            "NumberOfInstances": len(self.frame), "NumberOfFeatures": self.frame.shape[1],
            "NumberOfClasses": len(self.nominal.get(self.target, [])),
            "NumberOfMissingValues": int(self.frame.isna().sum().sum()),
        }
        q = "".join(f'<oml:quality name="{k}">{v}.0</oml:quality>' for k, v in qualities.items())
        return (f"<oml:dataset><oml:did>{self.did}</oml:did><oml:name>{self.name}</oml:name>"
                f"<oml:version>1</oml:version><oml:status>active</oml:status><oml:format>ARFF</oml:format>"
                f"<oml:file_id>{self.did}</oml:file_id>{q}</oml:dataset>")


def fixture_datasets() -> dict[int, OpenMLDatasetFixture]:
    rng = np.random.default_rng(21)
    n = 140
    petal = np.round(rng.uniform(1, 7, n), 1)
    flowers = pd.DataFrame({
        "petal_length": petal, "petal_width": np.round(petal / 3 + rng.normal(0, 0.2, n), 2),
        "sepal_length": np.round(4.5 + petal / 2 + rng.normal(0, 0.3, n), 1),
        "colour": rng.choice(["blue", "white"], n),
        "kind": np.where(petal < 2.5, "setosa", np.where(petal < 5, "versicolor", "virginica")),
    })
    flowers.loc[[3, 17], "sepal_length"] = np.nan
    temp = np.round(rng.uniform(-5, 30, n), 1)
    energy = pd.DataFrame({"temperature": temp, "hour": rng.integers(0, 24, n),
                           "load_mw": np.round(500 - temp * 6 + rng.normal(0, 15, n), 1)})
    return {d.did: d for d in (
        OpenMLDatasetFixture(9001, "fixture-flowers", flowers,
                             {"colour": ["blue", "white"], "kind": ["setosa", "versicolor", "virginica"]}, "kind"),
        OpenMLDatasetFixture(9002, "fixture-energy", energy, {}, "load_mw", licence="CC BY 4.0", text=(
            "**Author**: Daregen Fixtures  \n**Source**: written for daregen's tests\n\nHourly electricity load of "
            "a small grid.\n\n### Attribute information\n\n- temperature: outdoor air temperature, degrees "
            "Celsius\n- hour: hour of the day, 0-23\n- load_mw: electricity load in megawatts\n"
            "- humidity: relative humidity, percent\n")),
        OpenMLDatasetFixture(9003, "fixture-bad-file", energy, {}, "load_mw", bad_checksum=True),
        OpenMLDatasetFixture(9004, "fixture-gpl", energy, {}, "load_mw", licence="GPL-3", tags=("daregen-test",)),
    )}


def _error(code: int, message: str) -> bytes:
    return (f"<oml:error {NS}><oml:code>{code}</oml:code><oml:message>{message}</oml:message>"
            f"</oml:error>").encode()


class OpenMLHandler(Handler):
    datasets: dict[int, OpenMLDatasetFixture] = {}

    def _xml(self, body: bytes, status: int = 200) -> None:
        # OpenML gzips its API answers, and the client warns on every answer that is not.
        self.send_bytes(gzip.compress(body, mtime=0), "text/xml; charset=utf-8", status,
                        extra={"Content-Encoding": "gzip"})

    def do_GET(self):  # noqa: N802
        path = self.path.split("?")[0]
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        if path.startswith("/data/v1/download/"):
            did = int(path.split("/")[4])
            fault = self.fault(f"arff {did}")
            if fault == "handled":
                return None
            return self.send_bytes(self.datasets[did].arff(), "text/plain", truncate=fault == "truncate")
        if not path.startswith("/api/v1/xml/"):
            return self._xml(_error(100, "unknown endpoint"), 412)
        call = path[len("/api/v1/xml/"):].split("/")
        if call[:2] == ["data", "list"]:
            if self.fault("list") == "handled":
                return None
            filters = dict(zip(call[2::2], call[3::2]))
            chosen = [d for _, d in sorted(self.datasets.items())
                      if ("tag" not in filters or filters["tag"] in d.tags)
                      and ("data_id" not in filters or str(d.did) in filters["data_id"].split(","))]
            if "number_instances" in filters:
                lo, _, hi = filters["number_instances"].partition("..")
                chosen = [d for d in chosen if int(lo) <= len(d.frame) <= int(hi or lo)]
            offset = int(filters.get("offset", 0))
            chosen = chosen[offset: offset + int(filters.get("limit", 10000))]
            if not chosen:
                return self._xml(_error(372, "No results"), 412)
            return self._xml(f"<oml:data {NS}>{''.join(d.listing_entry() for d in chosen)}</oml:data>".encode())
        if call[0] == "data" and len(call) == 3 and call[1] == "features":
            d = self.datasets.get(int(call[2]))
            return self._xml(d.features()) if d else self._xml(_error(271, "Unknown dataset"), 412)
        if call[0] == "data" and len(call) == 2 and call[1].isdigit():
            did = int(call[1])
            if self.fault(f"description {did}") == "handled":
                return None
            d = self.datasets.get(did)
            return self._xml(d.description(base)) if d else self._xml(_error(111, "Unknown dataset"), 412)
        return self._xml(_error(100, "unknown endpoint"), 412)


def openml_server(datasets: dict[int, OpenMLDatasetFixture] | None = None) -> LoopbackServer:
    handler = type("FixtureOpenMLHandler", (OpenMLHandler,), {"datasets": datasets or fixture_datasets()})
    return LoopbackServer(handler)
