"""Measurements in: every input format (CSV, TSV, Parquet, Extra-P's files, CUBE profiles) read through one
entry, checked cells, repetitions.

The names are imported on first use (PEP 562): reading a model's inputs through
:mod:`automodel.data.cells` and :mod:`automodel.data.rows` imports no pandas.
"""

from automodel.lazy import lazy_names

_MODULES = {
    "numeric": "automodel.data.cells", "read_csv": "automodel.data.cells",
    **{name: "automodel.data.dataset" for name in ("Dataset", "Runs", "data_unit", "floor_zeros", "load", "load_runs")},
    "read": "automodel.data.readers", "FORMATS": "automodel.data.readers",
    **{name: "automodel.data.repetitions" for name in ("aggregate_groups", "aggregate_se", "configuration_se")},
    "one_kernel": "automodel.data.tidy", "AGGREGATES": "automodel.options",
}

__all__ = ["Dataset", "Runs", "load", "load_runs", "data_unit", "floor_zeros", "read", "FORMATS", "one_kernel", "aggregate_groups", "aggregate_se",
           "configuration_se", "read_csv", "numeric", "AGGREGATES"]

__getattr__, __dir__ = lazy_names(globals(), _MODULES)
