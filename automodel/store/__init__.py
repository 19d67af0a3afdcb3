"""The persistent store: applications, runs, live candidates, ranking history and load samples in SQLite
(a file) or any SQLAlchemy database URL; online observe / re-rank / prune on top of it, through the
store's interface (:mod:`automodel.store.storage`), which an in-memory store satisfies too
(:mod:`automodel.store.memory`).

The readers and the load samples are imported on first use (PEP 562): ``automodel observe`` does not
load the calibration of the prediction band nor the load forecast (``scipy.signal``).
"""

from typing import TYPE_CHECKING

from automodel.lazy import lazy_names
from automodel.store.db import Store, open_store
from automodel.store.observe import ObserveReport, exclude, observe, readmit

#: public name -> module that defines it, imported on first use
_LAZY = {**dict.fromkeys(("history", "ranking", "runs", "admitted_runs", "leader_model", "verify"),
                         "automodel.store.query"),
         **dict.fromkeys(("record", "import_samples", "samples", "forecast_load"), "automodel.store.machine_load")}

__all__ = ["Store", "open_store", "observe", "readmit", "exclude", "ObserveReport", "ranking", "history",
           "runs", "admitted_runs", "leader_model", "verify", "record", "import_samples", "samples", "forecast_load"]

if TYPE_CHECKING:  # pragma: no cover
    from automodel.store.machine_load import forecast_load, import_samples, record, samples
    from automodel.store.query import admitted_runs, history, leader_model, ranking, runs, verify


__getattr__, __dir__ = lazy_names(globals(), _LAZY)
