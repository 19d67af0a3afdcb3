"""Measurements in: every input format (CSV, TSV, Parquet, Extra-P's files, CUBE profiles) read through one
entry, checked cells, repetitions.

The public names are imported on first use (PEP 562), so the command line reads the input formats
(:mod:`automodel.data.readers.formats`), and ``predict`` a model's inputs (:mod:`automodel.data.cells`,
:mod:`automodel.data.rows`), without importing pandas.
"""

from typing import TYPE_CHECKING

from automodel.lazy import lazy_names

#: public name -> module that defines it
_LAZY = {**dict.fromkeys(("numeric", "read_csv"), "automodel.data.cells"),
         **dict.fromkeys(("Dataset", "Runs", "data_unit", "floor_zeros", "load", "load_runs"), "automodel.data.dataset"),
         **dict.fromkeys(("FORMATS", "read"), "automodel.data.readers"),
         **dict.fromkeys(("aggregate_groups", "aggregate_se", "configuration_se"), "automodel.data.repetitions"),
         "one_kernel": "automodel.data.tidy", "AGGREGATES": "automodel.options"}

__all__ = ["Dataset", "Runs", "load", "load_runs", "data_unit", "floor_zeros", "read", "FORMATS", "one_kernel", "aggregate_groups", "aggregate_se",
           "configuration_se", "read_csv", "numeric", "AGGREGATES"]

if TYPE_CHECKING:  # pragma: no cover
    from automodel.data.cells import numeric, read_csv
    from automodel.data.dataset import Dataset, Runs, data_unit, floor_zeros, load, load_runs
    from automodel.data.readers import FORMATS, read
    from automodel.data.repetitions import aggregate_groups, aggregate_se, configuration_se
    from automodel.data.tidy import one_kernel
    from automodel.options import AGGREGATES

__getattr__, __dir__ = lazy_names(globals(), _LAZY)
