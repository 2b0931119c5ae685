"""The SQLite source finds relations (declared keys first, then names), joins without duplicating
fact rows, quotes every identifier, and never changes the database it reads."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from pipeline.core.jsonio import write_json
from pipeline.core.records import DatasetRejected
from sourcing.registry import parse_sources
from pipeline.core.sqlite import connect_read_only, quote_identifier
from sourcing.sqlite_source import SQLiteSource
from tests.factories import FACT, HOSTILE_COLUMN, HOSTILE_TABLE, build_patients_db, build_shop_db, file_sha256, q

REF = f"sqlite/shop/{FACT}"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return build_shop_db(tmp_path / "dbs" / "shop.db")


def test_relations_declared_first_then_by_name_in_a_stable_order(shop: Path):
    record = SQLiteSource(shop.parent).record(REF)
    steps = [(s.left, s.left_on, s.right, s.right_on) for s in record.join_path]
    # declared keys of the fact table (PRAGMA order), then the name match, then the next hop
    assert steps == [(FACT, "store key", HOSTILE_TABLE, "store key"), (FACT, "customer_id", "customers", "customer_id"),
                     (FACT, "product_id", "products", "id"), ("customers", "region_id", "regions", "region_id")]
    assert all(s.how == "left" for s in record.join_path)
    assert record.join_path[1].columns == ("region_id", "segment", "age")
    assert "order.product_id -> products.id (matched by name)" in record.description
    assert "customers.region_id -> regions.region_id (declared foreign key)" in record.description
    assert SQLiteSource(shop.parent).record(REF) == record  # deterministic


def test_candidates_are_fact_tables_with_stable_refs(shop: Path):
    src = SQLiteSource(shop.parent)
    # customers links out too, but `order` links to it: not a fact table; the bystander `t` takes part
    # in no relation, so it is a plain tabular candidate of its own
    assert src.candidates() == [REF, "sqlite/shop/t"]
    assert SQLiteSource(shop).candidates() == [REF, "sqlite/shop/t"]  # a single file works as well
    assert parse_sources(f"sqlite:{shop.parent}") == [("sqlite", str(shop.parent))]


def test_join_keeps_every_fact_row_and_matches_sql(shop: Path):
    df = SQLiteSource(shop.parent).load_table(REF)
    con = sqlite3.connect(shop)
    n_orders = con.execute(f"SELECT COUNT(*) FROM {q(FACT)}").fetchone()[0]
    expected = pd.read_sql_query(
        f"SELECT o.{q('order id')} AS oid, c.segment, r.climate, p.category, s.{q('group')} AS grp, "
        f"s.{q(HOSTILE_COLUMN)} AS area FROM {q(FACT)} o JOIN customers c USING (customer_id) "
        f"JOIN regions r ON r.region_id = c.region_id JOIN products p ON p.id = o.product_id "
        f"JOIN {q(HOSTILE_TABLE)} s ON s.{q('store key')} = o.{q('store key')} ORDER BY oid", con)
    con.close()
    assert len(df) == n_orders == len(expected)
    assert df["order id"].tolist() == expected["oid"].tolist()
    for ours, theirs in (("segment", "segment"), ("climate", "climate"), ("category", "category"),
                         ("group", "grp"), (HOSTILE_COLUMN, "area")):
        assert df[ours].tolist() == expected[theirs].tolist(), ours
    assert "id" not in df.columns and list(df.columns).count("customer_id") == 1  # right keys are not repeated


def test_hostile_names_work_and_leave_the_database_unchanged(shop: Path):
    before = file_sha256(shop)
    src = SQLiteSource(shop.parent)
    record = src.record(REF)
    df = src.load_table(REF)
    assert HOSTILE_COLUMN in df.columns and "group" in df.columns
    assert record.join_path[0].right == HOSTILE_TABLE
    assert file_sha256(shop) == before
    con = sqlite3.connect(shop)
    assert con.execute("SELECT x FROM t").fetchall() == [(1,)]  # the bystander the name would drop
    con.close()


def test_read_only_connection_refuses_writes(shop: Path):
    before = file_sha256(shop)
    con = connect_read_only(shop)
    for sql in ("DROP TABLE t", "DELETE FROM t", "CREATE TABLE u (x)",
                f"UPDATE {q(HOSTILE_TABLE)} SET {q('group')} = 'x'"):
        with pytest.raises(sqlite3.DatabaseError):
            con.execute(sql)
    con.close()
    assert file_sha256(shop) == before


@pytest.mark.parametrize("name", ['x"; DROP TABLE t; --', "order", "select", "a b", '"', "'; --", "ünï code"])
def test_quote_identifier_round_trips_any_name(name: str):
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (x)")
    con.execute(f"CREATE TABLE {quote_identifier(name)} ({quote_identifier(name)} INTEGER)")
    con.execute(f"INSERT INTO {quote_identifier(name)} VALUES (?)", (7,))
    assert con.execute(f"SELECT {quote_identifier(name)} FROM {quote_identifier(name)}").fetchall() == [(7,)]
    assert con.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)


def test_a_non_unique_one_side_is_never_joined(tmp_path: Path):
    db = tmp_path / "dup.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE teams (team_id INTEGER, city TEXT)")  # team 1 twice: a join would duplicate rows
    con.executemany("INSERT INTO teams VALUES (?, ?)", [(1, "a"), (1, "b"), (2, "c")])
    con.execute("CREATE TABLE leagues (league_id INTEGER PRIMARY KEY, tier INTEGER)")
    con.executemany("INSERT INTO leagues VALUES (?, ?)", [(1, 1), (2, 2)])
    con.execute("CREATE TABLE players (player_id INTEGER PRIMARY KEY, team_id INTEGER REFERENCES teams(team_id), "
                "league_id INTEGER, score REAL)")
    con.executemany("INSERT INTO players VALUES (?, ?, ?, ?)", [(i, 1 + i % 2, 1 + i % 2, i * 1.5) for i in range(10)])
    con.commit()
    con.close()
    src = SQLiteSource(db)
    assert src.candidates() == ["sqlite/dup/players", "sqlite/dup/teams"]  # teams joins nothing: its own candidate
    record = src.record("sqlite/dup/players")
    assert [(s.right, s.right_on) for s in record.join_path] == [("leagues", "league_id")]
    assert len(src.load_table("sqlite/dup/players")) == 10


def test_sniffs_the_header_not_the_extension(shop: Path):
    folder = shop.parent
    (folder / "broken.db").write_text("id,name\n1,a\n")  # named like a database, is a csv
    (folder / "renamed.bin").write_bytes(shop.read_bytes())  # a database under another name
    (folder / "notes.txt").write_text("not a database")
    src = SQLiteSource(folder)
    assert src.candidates() == ["sqlite/broken", f"sqlite/renamed/{FACT}", "sqlite/renamed/t", REF,
                                "sqlite/shop/t"]  # by stem
    with pytest.raises(ValueError, match="not a SQLite database"):
        src.record("sqlite/broken")
    assert len(src.load_table(f"sqlite/renamed/{FACT}")) == len(src.load_table(REF))


def test_licence_is_unknown_unless_a_sidecar_says_otherwise(shop: Path):
    assert SQLiteSource(shop.parent).record(REF).license == "unknown"
    write_json(shop.with_suffix(".json"), {"license": "CC-BY-4.0", "title": "Toy shop",
                                           "column_descriptions": {"customers.segment": "customer segment"}})
    record = SQLiteSource(shop.parent).record(REF)
    assert (record.license, record.title) == ("CC-BY-4.0", "Toy shop")
    assert record.column_descriptions["segment"] == "customer segment"
    assert record.column_descriptions["climate"] == "climate from table regions, declared TEXT"
    write_json(shop.with_suffix(".json"), {"target_hint": f"{FACT}.returned"})
    assert SQLiteSource(shop.parent).record(REF).target_hint == "returned"  # `table.column` -> its analysis name
    write_json(shop.with_suffix(".json"), {"licence": "typo"})
    with pytest.raises(ValueError, match="unknown fields"):
        SQLiteSource(shop.parent).record(REF)


def test_names_match_only_with_compatible_types_and_unrelated_tables_are_plain_candidates(tmp_path: Path):
    db = tmp_path / "loose.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, age INTEGER)")
    con.execute("CREATE TABLE visits (visit_id INTEGER PRIMARY KEY, customer_id TEXT, minutes REAL)")
    con.executemany("INSERT INTO customers VALUES (?, ?)", [(1, 30), (2, 40)])
    con.executemany("INSERT INTO visits VALUES (?, ?, ?)", [(1, "c-1", 3.0), (2, "c-2", 4.0)])
    con.commit()
    con.close()
    src = SQLiteSource(db)
    # TEXT customer_id cannot key an INTEGER one: two unrelated tables, each an ordinary candidate
    assert src.candidates() == ["sqlite/loose/customers", "sqlite/loose/visits"]
    record = src.record("sqlite/loose/visits")
    assert record.join_path == () and record.slug == "sqlite_loose_visits"
    assert list(src.load_table("sqlite/loose/visits").columns) == ["visit_id", "customer_id", "minutes"]


def test_a_single_table_database_is_a_tabular_candidate(tmp_path: Path):
    db = build_patients_db(tmp_path / "patients.db", n=12)
    before = file_sha256(db)
    src = SQLiteSource(tmp_path)
    assert src.candidates() == ["sqlite/patients/patients"]
    record = src.record("sqlite/patients/patients")
    assert record.join_path == () and record.title == "patients: patients"
    assert "Table patients of the SQLite database patients.db" in record.description
    table = src.load_table("sqlite/patients/patients")
    assert len(table) == 12 and table["patient_id"].tolist() == list(range(1, 13))  # rowid order
    assert file_sha256(db) == before


def test_a_database_without_tables_is_one_rejected_candidate(tmp_path: Path):
    sqlite3.connect(tmp_path / "empty.db").execute("CREATE TABLE x (a)").connection.execute("DROP TABLE x")
    src = SQLiteSource(tmp_path)
    assert src.candidates() == ["sqlite/empty"]
    with pytest.raises(ValueError, match="holds no table"):
        src.record("sqlite/empty")


def test_a_primary_key_wins_over_a_column_that_happens_to_be_unique(tmp_path: Path):
    db = tmp_path / "pay.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE payments (pay_no INTEGER PRIMARY KEY, customer_id INTEGER, id INTEGER, paid REAL)")
    con.executemany("INSERT INTO payments VALUES (?, ?, ?, ?)", [(1, 2, 7, 9.5), (2, 1, 8, 3.0)])  # unique by chance
    con.execute("CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, age INTEGER)")
    con.executemany("INSERT INTO customers VALUES (?, ?)", [(1, 30), (2, 40)])
    con.execute("CREATE TABLE orders (id INTEGER, customer_id INTEGER, amount REAL)")
    con.executemany("INSERT INTO orders VALUES (?, ?, ?)", [(i, 1 + i % 2, i * 2.0) for i in range(6)])
    con.commit()
    con.close()
    record = SQLiteSource(db).record("sqlite/pay/orders")
    # customers' primary key, not payments' by-chance-unique column; a bare `id` is never a foreign key
    assert [(s.left_on, s.right, s.right_on) for s in record.join_path] == [("customer_id", "customers", "customer_id")]


@pytest.mark.parametrize("table", ["dim\n__import__('os').system('touch MARKER')\n#", "esc\x1bname"])
def test_a_dimension_table_named_with_a_control_character_rejects_the_dataset(tmp_path: Path, table: str):
    """Table names are read back by name (the relational IF files keep them), so one is never rewritten:
    a line break or any other control character in it is a rejection with a one-line reason."""
    db = tmp_path / "dbs" / "odd.db"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    con.execute(f"CREATE TABLE {q(table)} (dim_id INTEGER PRIMARY KEY, label TEXT)")
    con.execute(f"CREATE TABLE facts (id INTEGER PRIMARY KEY, dim_id INTEGER REFERENCES {q(table)}(dim_id), x REAL)")
    con.commit()
    con.close()
    with pytest.raises(DatasetRejected) as caught:
        SQLiteSource(db.parent).record("sqlite/odd/facts")
    assert "holds a" in caught.value.reason and caught.value.reason.isprintable()
