"""The store's tables (SQLAlchemy Core): applications, runs, candidates, their pool of terms, the
fit state, the ranking history and per-host load samples.

Terms and candidate structures are JSON (:meth:`automodel.space.terms.Term.to_dict`), numeric arrays
are ``.npz`` blobs read with ``allow_pickle=False``: nothing in the store is ever executed.
"""

from __future__ import annotations

from sqlalchemy import (Column, Float, ForeignKey, Index, Integer, LargeBinary, MetaData, String, Table,
                        Text, UniqueConstraint)

__all__ = ["metadata", "applications", "terms", "candidates", "runs", "state", "history", "load_samples",
           "SCHEMA_VERSION"]

SCHEMA_VERSION = 1

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
    Index("ix_runs_app", "app_id"),
)

#: the fit state: pool statistics and current coefficients/scores (npz blob), rewritten per update
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
    Index("ix_history_app", "app_id"),
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
