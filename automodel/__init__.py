"""automodel: automatic performance models of parallel applications.

>>> import automodel
>>> result = automodel.fit("runs.csv")        # doctest: +SKIP
>>> print(result.leaderboard.head())          # doctest: +SKIP
>>> result.best.predict(larger_runs)          # doctest: +SKIP
"""

from automodel.api import FitResult, fit
from automodel.data import Dataset, load
from automodel.errors import AutomodelError, DataError, ModelFileError, SpaceError, StoreError
from automodel.model import Model, TermModel, load_model
from automodel.space.config import SearchSpace, load_space

__all__ = ["fit", "FitResult", "load", "Dataset", "Model", "TermModel", "load_model", "load_space",
           "SearchSpace", "AutomodelError", "DataError", "SpaceError", "ModelFileError", "StoreError"]
__version__ = "0.1.0"
