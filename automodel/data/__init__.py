"""Measurements in: CSV files and DataFrames of runs, Extra-P text files, checked cells, repetitions."""

from automodel.data.cells import numeric, read_csv
from automodel.data.dataset import Dataset, aggregate_se, configuration_se, load
from automodel.options import AGGREGATES

__all__ = ["Dataset", "load", "aggregate_se", "configuration_se", "read_csv", "numeric", "AGGREGATES"]
