"""The chart evaluator compares a quantitative x channel as a number, with the y channel's tolerance
(`18` is `18.0`; df.to_json's 10 significant digits pass), and a nominal x as its label."""

from __future__ import annotations

import json
from pathlib import Path

from finalize.dsagent.evaluator_template import check_vega_lite

X = [18.0, 0.12345678901234, 250.5]
Y = [1.5, 2.25, -3.0]


def _spec(x_type: str, xs: list) -> dict:
    return {"kind": "vega_lite", "file": "chart.vl.json", "mark": "point", "title": "y against x", "rtol": 1e-6,
            "atol": 1e-9, "values": [[str(x), y] for x, y in zip(xs, Y)],
            "encoding": {"x": {"field": "x", "type": x_type, "title": "x"},
                         "y": {"field": "y", "type": "quantitative", "title": "y"}}}


def _chart(tmp_path: Path, x_type: str, xs: list) -> Path:
    chart = {"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "mark": "point", "title": "y against x",
             "encoding": {"x": {"field": "x", "type": x_type, "title": "x"},
                          "y": {"field": "y", "type": "quantitative", "title": "y"}},
             "data": {"values": [{"x": x, "y": y} for x, y in zip(xs, Y)]}}
    (tmp_path / "chart.vl.json").write_text(json.dumps(chart), encoding="utf-8")
    return tmp_path


def test_a_quantitative_x_is_compared_as_a_number(tmp_path: Path) -> None:
    written = [18, float(f"{X[1]:.10g}"), "250.5"]  # an int, to_json's 10 digits, a numeric string
    assert check_vega_lite(_chart(tmp_path, "quantitative", written), _spec("quantitative", X)) == 1.0
    wrong = [19, X[1], X[2]]
    assert check_vega_lite(_chart(tmp_path, "quantitative", wrong), _spec("quantitative", X)) < 0.95


def test_a_nominal_x_stays_a_label(tmp_path: Path) -> None:
    labels = ["a", "b", "c"]
    assert check_vega_lite(_chart(tmp_path, "nominal", labels), _spec("nominal", labels)) == 1.0
    assert check_vega_lite(_chart(tmp_path, "nominal", ["a", "b", "C"]), _spec("nominal", labels)) < 0.95
