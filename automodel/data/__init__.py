"""Measurements in: every input format (CSV, TSV, Parquet, Extra-P's files, CUBE profiles) read through one
entry, checked cells, repetitions."""

from automodel.data.cells import numeric, read_csv
from automodel.data.dataset import Dataset, Runs, data_unit, floor_zeros, load, load_runs
from automodel.data.readers import FORMATS, read
from automodel.data.repetitions import aggregate_groups, aggregate_se, configuration_se
from automodel.data.tidy import one_kernel
from automodel.options import AGGREGATES

__all__ = ["Dataset", "Runs", "load", "load_runs", "data_unit", "floor_zeros", "read", "FORMATS", "one_kernel", "aggregate_groups", "aggregate_se",
           "configuration_se", "read_csv", "numeric", "AGGREGATES"]
