"""The persistent store: applications, runs, live candidates, ranking history and load samples in SQLite
(a file) or any SQLAlchemy database URL; online observe / re-rank / prune on top of it."""

from automodel.store.db import Store, open_store
from automodel.store.machine_load import forecast_load, import_samples, record, samples
from automodel.store.observe import ObserveReport, exclude, observe, readmit
from automodel.store.query import history, leader_model, ranking, runs, verify

__all__ = ["Store", "open_store", "observe", "readmit", "exclude", "ObserveReport", "ranking", "history",
           "runs", "leader_model", "verify", "record", "import_samples", "samples", "forecast_load"]
