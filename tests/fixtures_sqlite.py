"""A small relational SQLite database for the sqlite source's tests, written from scratch.

Tables (fact table `order`, a SQL keyword):
- `order`.customer_id -> customers.customer_id   declared FOREIGN KEY
- `order`.product_id  -> products.id             no declaration: found by name matching only
- `order`."store key" -> `x"; DROP TABLE t; --`."store key"   declared, hostile table name
- customers.region_id -> regions.region_id       declared (a two-step join path)
- `t`: a bystander the hostile name would drop if it were ever spliced into SQL unquoted.
The hostile table's columns are a keyword (`group`) and a name with quotes and spaces.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import numpy as np

from pipeline.core.jsonio import write_json

HOSTILE_TABLE = 'x"; DROP TABLE t; --'
HOSTILE_COLUMN = 'floor "area"; DROP TABLE t; --'
FACT = "order"


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def build_shop_db(path: Path, n_orders: int = 240, seed: int = 0, sidecar: dict | None = None) -> Path:
    """The database at `path`; `sidecar` is written beside it as `<stem>.json` (sourcing/local.py's convention)."""
    rng = np.random.default_rng(seed)
    if sidecar is not None:
        write_json(path.with_suffix(".json"), sidecar)
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    try:
        con.execute("CREATE TABLE regions (region_id INTEGER PRIMARY KEY, region_name TEXT, climate TEXT)")
        con.executemany("INSERT INTO regions VALUES (?, ?, ?)",
                        [(1, "north", "cold"), (2, "south", "warm"), (3, "east", "mild"), (4, "west", "mild")])
        con.execute("CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, "
                    "region_id INTEGER REFERENCES regions(region_id), segment TEXT, age INTEGER)")
        con.executemany("INSERT INTO customers VALUES (?, ?, ?, ?)", [
            (i, int(rng.integers(1, 5)), str(rng.choice(["retail", "business", "student"])), int(rng.integers(18, 80)))
            for i in range(1, 41)])
        con.execute("CREATE TABLE products (id INTEGER PRIMARY KEY, category TEXT, list_price REAL)")
        con.executemany("INSERT INTO products VALUES (?, ?, ?)", [
            (i, str(rng.choice(["toys", "books", "garden"])), round(float(rng.uniform(2, 80)), 2))
            for i in range(1, 13)])
        con.execute(f"CREATE TABLE {q(HOSTILE_TABLE)} ({q('store key')} INTEGER PRIMARY KEY, {q('group')} TEXT, "
                    f"{q(HOSTILE_COLUMN)} REAL)")
        con.executemany(f"INSERT INTO {q(HOSTILE_TABLE)} VALUES (?, ?, ?)", [
            (i, ["mall", "street", "outlet"][i % 3], float(100 * i + 20)) for i in range(1, 6)])
        con.execute("CREATE TABLE t (x INTEGER)")
        con.execute("INSERT INTO t VALUES (1)")
        con.execute(f"CREATE TABLE {q(FACT)} ({q('order id')} INTEGER PRIMARY KEY, "
                    "customer_id INTEGER REFERENCES customers(customer_id), product_id INTEGER, "
                    f"{q('store key')} INTEGER REFERENCES {q(HOSTILE_TABLE)}({q('store key')}), "
                    f"quantity INTEGER, {q('discount %')} REAL, channel TEXT, returned TEXT)")
        ages = dict(con.execute("SELECT customer_id, age FROM customers").fetchall())
        prices = dict(con.execute("SELECT id, list_price FROM products").fetchall())
        rows = []
        for i in range(1, n_orders + 1):
            cust, prod, store = int(rng.integers(1, 41)), int(rng.integers(1, 13)), int(rng.integers(1, 6))
            qty, disc = int(rng.integers(1, 10)), round(float(rng.uniform(0, 0.5)), 3)
            # `returned` is learnable from the fact and from two dimension tables (age, list_price)
            score = (ages[cust] - 50) / 15 + (prices[prod] - 40) / 20 + (disc - 0.25) * 6 + rng.normal(scale=0.4)
            rows.append((i, cust, prod, store, qty, disc, str(rng.choice(["web", "phone", "shop"])),
                         "yes" if score > 0 else "no"))
        con.executemany(f"INSERT INTO {q(FACT)} VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        con.commit()
    finally:
        con.close()
    return path


def build_patients_db(path: Path, n: int = 220, seed: int = 0) -> Path:
    """A single-table database, as most SQLite files people hold are: `patients`, with a learnable
    `readmitted` outcome and a `patient_id` primary key (a key, never a feature or a target)."""
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    try:
        con.execute("CREATE TABLE patients (patient_id INTEGER PRIMARY KEY, age INTEGER, bmi REAL, "
                    "smoker TEXT, ward TEXT, stay_days INTEGER, readmitted TEXT)")
        rows = []
        for i in range(1, n + 1):
            age, bmi, smoker = int(rng.integers(20, 90)), round(float(rng.normal(27, 4)), 1), str(rng.choice(["yes", "no"]))
            stay = int(rng.integers(1, 15))
            score = (age - 55) / 12 + (bmi - 27) / 4 + (smoker == "yes") + (stay - 7) / 4 + rng.normal(scale=0.5)
            rows.append((i, age, bmi, smoker, str(rng.choice(["a", "b", "c"])), stay, "yes" if score > 0.5 else "no"))
        con.executemany("INSERT INTO patients VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        con.commit()
    finally:
        con.close()
    return path


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
