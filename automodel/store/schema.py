"""The store's tables (SQLAlchemy Core): applications, runs, candidates, their pool of terms, the
fit state, the ranking history and per-host load samples.

Terms and candidate structures are JSON (:meth:`automodel.space.terms.Term.to_dict`), numeric arrays
are ``.npz`` blobs read with ``allow_pickle=False``: nothing in the store is ever executed.

A run's identity is a content hash (:func:`run_identities`), unique per application, so observing
the same runs twice stores them once. A store written by an older version is brought up to date
when it is opened (:func:`migrate`): missing columns and indexes are added, and the identities of
its runs computed, and the indexes this version replaced (:data:`RETIRED_INDEXES`) dropped.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from sqlalchemy import (Column, Float, ForeignKey, Index, Integer, LargeBinary, MetaData, String, Table,
                        Text, UniqueConstraint, bindparam, func, inspect, select, text, update)
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from automodel.data.cells import finite_number, shown
from automodel.errors import StoreError

__all__ = ["metadata", "applications", "terms", "candidates", "runs", "state", "history", "load_samples",
           "SCHEMA_VERSION", "RETIRED_INDEXES", "run_identities", "newer_version", "outdated", "foreign",
           "foreign_tables",
           "blob_storage", "migrate", "stored_json", "stored_number", "stored_floats", "stored_json_rows"]

#: 2: runs have an ``identity`` (content hash), unique per application; 3: runs are indexed on
#: ``(app_id, id)`` (an update reads the runs stored last) and the history on ``(app_id, update_no)``
SCHEMA_VERSION = 3

#: indexes of older versions that a newer index covers (dropped by :func:`migrate`)
RETIRED_INDEXES = ("ix_runs_app", "ix_history_app")

metadata = MetaData()

#: one row per modelled application; ``options`` holds the online options and fit settings (JSON)
applications = Table(
    "applications", metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(200), nullable=False),
    Column("params", Text, nullable=False),  # JSON list of canonical parameter names
    Column("roles", Text, nullable=False),  # JSON: canonical name -> user's column name
    Column("options", Text, nullable=False),  # JSON OnlineOptions + space name
    Column("created_at", Float, nullable=False),
    Column("n_updates", Integer, nullable=False, default=0),
    Column("schema_version", Integer, nullable=False, default=SCHEMA_VERSION),
    UniqueConstraint("name", name="uq_application_name"),
)

#: the pool of distinct terms of an application; candidates address it by ``idx``
terms = Table(
    "terms", metadata,
    Column("app_id", Integer, ForeignKey("applications.id"), primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("term", Text, nullable=False),  # JSON list of factors
)

#: every candidate ever considered; pruned ones stay, with when and why
candidates = Table(
    "candidates", metadata,
    Column("id", Integer, primary_key=True),
    Column("app_id", Integer, ForeignKey("applications.id"), nullable=False),
    Column("idx", Integer, nullable=False),  # position in the application's candidate arrays
    Column("structure", Text, nullable=False),  # JSON {"comp": [...], "comm": [...], "extra": [...]} of terms
    Column("term_index", Text, nullable=False),  # JSON list of pool indices, the candidate's columns
    Column("status", String(16), nullable=False),  # live | pruned
    Column("created_update", Integer, nullable=False),
    Column("pruned_update", Integer),
    Column("pruned_at", Float),
    Column("pruned_score", Float),
    Column("pruned_reason", Text),
    UniqueConstraint("app_id", "idx", name="uq_candidate_idx"),
)

#: one row per run; ``status``: admitted | flagged (anomaly) | readmitted | excluded (by hand)
runs = Table(
    "runs", metadata,
    Column("id", Integer, primary_key=True),
    Column("app_id", Integer, ForeignKey("applications.id"), nullable=False),
    Column("params", Text, nullable=False),  # JSON: parameter values other than cpu, bw
    Column("cpu", Float),
    Column("bw", Float),
    Column("time", Float, nullable=False),
    Column("observed_at", Float, nullable=False),
    Column("update_no", Integer, nullable=False),
    Column("status", String(16), nullable=False),
    Column("note", Text),
    Column("identity", String(64)),  # run_identities(); NULL for a run stored with allow_duplicates
    Index("ix_runs_app_id", "app_id", "id"),  # the anomaly rule's window: ORDER BY id DESC LIMIT w
    Index("uq_runs_identity", "app_id", "identity", unique=True),
)

#: the fit state: pool statistics, current coefficients/scores and the live candidates (npz blob), rewritten
#: per update
state = Table(
    "state", metadata,
    Column("app_id", Integer, ForeignKey("applications.id"), primary_key=True),
    Column("n_runs", Integer, nullable=False),
    Column("target_ss", Float, nullable=False),
    Column("arrays", LargeBinary, nullable=False),
)

#: one row per update: what it did and who leads afterwards
history = Table(
    "history", metadata,
    Column("id", Integer, primary_key=True),
    Column("app_id", Integer, ForeignKey("applications.id"), nullable=False),
    Column("update_no", Integer, nullable=False),
    Column("at", Float, nullable=False),
    Column("event", String(16), nullable=False),  # search | observe | readmit | exclude
    Column("n_added", Integer, nullable=False),
    Column("n_admitted", Integer, nullable=False),
    Column("n_flagged", Integer, nullable=False),
    Column("n_live", Integer, nullable=False),
    Column("n_pruned", Integer, nullable=False),
    Column("cutoff", Float),
    Column("leader_id", Integer),
    Column("leader_score", Float),
    Column("leader_formula", Text),
    Column("top", Text),  # JSON list of [candidate id, score] of the top 10
    Index("ix_history_app_update", "app_id", "update_no"),
)

#: periodic load samples per host (rational-polynomial-yagnik-icpp2006.txt, sec. 3)
load_samples = Table(
    "load_samples", metadata,
    Column("id", Integer, primary_key=True),
    Column("host", String(200), nullable=False),
    Column("at", Float, nullable=False),
    Column("cpu", Float),
    Column("bw", Float),
    Index("ix_load_host_at", "host", "at"),
)


def run_identities(contents: Iterable[Mapping[str, float]]) -> list[str]:
    """The identity of each run: the SHA-256 of its parameter values and time, and of how many runs
    with the same content came before it in ``contents`` (so repeated measurements of one batch are
    distinct runs, and observing the batch again finds each of them).

    Examples
    --------
    >>> a, b = run_identities([{"n": 1.0, "time": 2.0}, {"time": 2.0, "n": 1.0}])
    >>> a != b and a == run_identities([{"n": 1.0, "time": 2.0}])[0]
    True
    """
    seen: Counter[str] = Counter()
    out = []
    for content in contents:
        key = json.dumps(sorted((k, float(v)) for k, v in content.items()))
        out.append(hashlib.sha256(f"{key}#{seen[key]}".encode()).hexdigest())
        seen[key] += 1
    return out


_JSON_KINDS = {dict: "an object", list: "a list"}


def stored_json(text: object, table: str, row_id: object, column: str, kind: type = dict) -> Any:
    """The JSON ``column`` of the stored row ``row_id`` of ``table``, parsed: a ``kind`` (``dict`` or
    ``list``). A damaged record (not JSON, or not a ``kind``) is a one-line
    :class:`~automodel.errors.StoreError` naming the table, row and column; nothing is ever evaluated."""
    try:
        value = json.loads(text)  # type: ignore[arg-type]
    except (TypeError, ValueError, RecursionError) as exc:
        reason = str(exc).splitlines()[0][:80] if str(exc) else type(exc).__name__
        raise StoreError(f"table '{table}', row {row_id}, column '{column}': damaged record, not JSON "
                         f"({reason})") from None
    if not isinstance(value, kind):
        raise StoreError(f"table '{table}', row {row_id}, column '{column}': damaged record, expected "
                         f"{_JSON_KINDS[kind]}, got {type(value).__name__}")
    return value


def stored_number(value: object, table: str, row_id: object, column: str, kind: type = float) -> Any:
    """The number ``column`` of the stored row ``row_id`` of ``table`` as a ``kind`` (``float`` or ``int``,
    finite); a damaged one (text, NULL, NaN where SQLite's loose typing let it in) is a one-line
    :class:`~automodel.errors.StoreError` naming the table, row and column."""
    if finite_number(value) and (kind is float or float(value).is_integer()):  # type: ignore[arg-type]
        return kind(value)
    raise StoreError(f"table '{table}', row {row_id}, column '{column}': damaged record, expected "
                     f"{'an integer' if kind is int else 'a finite number'}, got {shown(value)}")


def stored_floats(records: Sequence[Mapping[str, Any]], ids: Sequence[object], name: str) -> np.ndarray:
    """The value ``name`` of each parsed ``params`` record of the runs table (ids ``ids``) as floats; a
    record without it or whose value is not a finite number is a one-line :class:`StoreError` naming
    its row (checked one by one only when the columns do not convert at once)."""
    try:
        values = np.array([r[name] for r in records], dtype=float)
        if np.isfinite(values).all():
            return values
    except (KeyError, TypeError, ValueError, OverflowError):
        pass
    for record, row_id in zip(records, ids):
        value = record.get(name)
        if not finite_number(value):
            raise StoreError(f"table 'runs', row {row_id}, column 'params': damaged record, expected a finite "
                             f"number for {name!r}, got {shown(value)}")
    return np.array([r[name] for r in records], dtype=float)


def stored_json_rows(texts: Sequence[object], ids: Sequence[object], table: str, column: str,
                     kind: type = dict) -> list[Any]:
    """:func:`stored_json` of many rows at once (one parse of them all; the rows one by one only to
    name a damaged one).

    Between two rows the parse reads a number drawn afresh for each call, which no row can hold: the
    values are taken only when every one of them is where it was put, so a row is parsed alone or not
    at all. (Rows joined by commas alone let damaged ones pair up: '{"n": 100, "p": "' and '", "p": 2}'
    parsed as one record, '{"n": 200}, {"n": 1}' as two, and the runs between took other runs'
    parameters without a word.)"""
    mark = secrets.randbits(62)
    try:
        values = json.loads("[" + f",{mark},".join(texts) + "]")  # type: ignore[arg-type]
        kept = values[::2]
        if len(values) == 2 * len(texts) - 1 and values[1::2].count(mark) == len(texts) - 1 and all(
                isinstance(v, kind) for v in kept):
            return kept
    except (TypeError, ValueError, RecursionError):
        pass
    return [stored_json(t, table, i, column, kind) for t, i in zip(texts, ids)]


def _content(row, params: Iterable[str]) -> dict[str, float]:
    """What :func:`run_identities` hashes of a stored run: its values of ``params`` and its time."""
    values = {**stored_json(row.params, "runs", row.id, "params"), "cpu": row.cpu, "bw": row.bw}
    return {**{q: values[q] for q in params}, "time": row.time}


def newer_version(conn: Connection) -> int | None:
    """The schema version of the newest application in the database when a newer automodel than this
    one wrote it (above :data:`SCHEMA_VERSION`), else None: such a store is read as before, but this
    version must not write it (its runs, identities and indexes may follow rules it does not know)."""
    if not inspect(conn).has_table(applications.name):
        return None
    newest = conn.execute(select(func.max(applications.c.schema_version))).scalar()
    try:
        newest = int(newest)
    except (TypeError, ValueError):  # no application, or a value that is no version: nothing newer
        return None
    return newest if newest > SCHEMA_VERSION else None


def outdated(conn: Connection) -> bool:
    """Whether a table, column or index of this schema is missing from the database, or PostgreSQL keeps
    the state blob another way than :func:`blob_storage` says."""
    insp = inspect(conn)
    have = set(insp.get_table_names())
    return any(t.name not in have or {c.name for c in t.columns} - {c["name"] for c in insp.get_columns(t.name)}
               or {i.name for i in t.indexes} - {i["name"] for i in insp.get_indexes(t.name)}
               for t in metadata.sorted_tables) or blob_storage(conn) is not None


def blob_storage(conn: Connection) -> str | None:
    """The statement that makes PostgreSQL keep the state blob (rewritten by every update) lz4-compressed
    (PostgreSQL 14 or later built with lz4), else uncompressed, or None when it does already (or the
    database is not PostgreSQL). Its default, pglz, added 1.3 to 2.2 ms to each observe's update of the
    state (85 kB) and 0.3 ms to its read; lz4 adds about 0.1 ms and stores less (37 kB, pglz 44 kB)."""
    if conn.dialect.name != "postgresql":
        return None
    lz4 = conn.execute(text("SELECT 'lz4' = ANY(enumvals) FROM pg_settings "
                            "WHERE name = 'default_toast_compression'")).scalar()
    column = "attcompression" if lz4 else "attstorage"
    kept = conn.execute(text(f"SELECT {column} FROM pg_attribute WHERE attrelid = to_regclass('{state.name}') "
                             "AND attname = 'arrays'")).scalar()
    if kept == ("l" if lz4 else "e"):
        return None
    return f"ALTER TABLE {state.name} ALTER COLUMN arrays SET " + ("COMPRESSION lz4" if lz4 else "STORAGE EXTERNAL")


def foreign(conn: Connection) -> str | None:
    """Why the database holds another program's tables (and must not be written), or None
    (:func:`foreign_tables` of what it holds)."""
    insp = inspect(conn)
    have = set(insp.get_table_names())
    known = {t.name: {c["name"] for c in insp.get_columns(t.name)} for t in metadata.sorted_tables if t.name in have}
    return foreign_tables(have, known, conn.dialect.name == "sqlite")


def foreign_tables(names: set[str], columns: dict[str, set[str]], sqlite: bool) -> str | None:
    """Why a database whose tables are ``names`` (``columns``: the columns of those that bear this
    schema's names) is another program's, or None.

    A SQLite file with tables but no ``applications`` table, or a table of this schema's name without
    one of the columns every version had (those that may not be null; later ones are added by
    :func:`migrate`), is not an automodel store: migrating it would alter that program's tables.

    >>> foreign_tables({"runs"}, {"runs": {"a"}}, sqlite=True)
    "it has tables (runs) and none named 'applications'"
    >>> foreign_tables(set(), {}, sqlite=True) is None
    True
    """
    if sqlite and names and applications.name not in names:
        listed = ", ".join(sorted(names)[:5]) + (f", ... ({len(names)} in all)" if len(names) > 5 else "")
        return f"it has tables ({listed}) and none named {applications.name!r}"
    for table in metadata.sorted_tables:
        if table.name in columns:
            missing = [c.name for c in table.columns if not c.nullable and c.name not in columns[table.name]]
            if missing:
                return f"its table {table.name!r} has no column {missing[0]!r}"
    return None


def migrate(conn: Connection) -> None:
    """Create missing tables; add the columns and indexes an older store lacks, drop the retired
    indexes; identify its runs.

    Columns added to this schema after version 1 are nullable, so ``ALTER TABLE ... ADD COLUMN`` is
    enough. The caller holds the database's write lock (see :mod:`automodel.store.db`).
    """
    metadata.create_all(conn)
    insp = inspect(conn)
    added = set()
    for table in metadata.sorted_tables:
        have = {c["name"] for c in insp.get_columns(table.name)}
        for col in table.columns:
            if col.name not in have:
                conn.execute(text(f"ALTER TABLE {table.name} ADD COLUMN {col.name} "
                                  f"{col.type.compile(conn.dialect)}"))
                added.add(f"{table.name}.{col.name}")
        for index in table.indexes:
            index.create(conn, checkfirst=True)
    for name in RETIRED_INDEXES:
        conn.execute(text(f"DROP INDEX IF EXISTS {name}"))
    _set_blob_storage(conn)
    if "runs.identity" in added:
        _identify_runs(conn)


def _set_blob_storage(conn: Connection) -> None:
    """Run :func:`blob_storage`'s statement, if any; a role that does not own the table keeps the store as
    it is (a matter of speed, not of what is stored)."""
    statement = blob_storage(conn)
    if statement is None:
        return
    try:
        with conn.begin_nested():
            conn.execute(text(statement))
    except DBAPIError as exc:
        if getattr(exc.orig, "sqlstate", None) != "42501":  # insufficient_privilege, must be owner
            raise


def _identify_runs(conn: Connection) -> None:
    """Give the runs of a store from before run identities theirs, in the order they were stored."""
    for app in conn.execute(select(applications.c.id, applications.c.params)).all():
        rows = conn.execute(select(runs).where(runs.c.app_id == app.id).order_by(runs.c.id)).all()
        params = stored_json(app.params, "applications", app.id, "params", list)
        if rows:
            conn.execute(update(runs).where(runs.c.id == bindparam("run_id")).values(identity=bindparam("ident")),
                         [{"run_id": row.id, "ident": identity}
                          for row, identity in zip(rows, run_identities(_content(r, params) for r in rows))])
