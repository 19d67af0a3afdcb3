"""automodel: automatic performance models of parallel applications.

>>> import automodel
>>> result = automodel.fit("runs.csv")        # doctest: +SKIP
>>> print(result.leaderboard.head())          # doctest: +SKIP
>>> result.best.predict(larger_runs)          # doctest: +SKIP

The public names are imported on first use (PEP 562), so ``import automodel`` and the command line
start without loading numpy, pandas, scipy or sympy.
"""

from typing import TYPE_CHECKING

from automodel.errors import AutomodelError, DataError, ModelFileError, OptionError, SpaceError, StoreError
from automodel.lazy import lazy_names

#: public name -> module that defines it
_LAZY = {"fit": "automodel.fitting", "FitResult": "automodel.fitting", "load": "automodel.data.dataset",
         "Dataset": "automodel.data.dataset", "Model": "automodel.model.core", "TermModel": "automodel.model.core",
         "BestP": "automodel.model.best_p", "Interval": "automodel.model.interval",
         "load_model": "automodel.model_file", "load_space": "automodel.space.config",
         "SearchSpace": "automodel.space.config", "fit_many": "automodel.kernels.fit_many",
         "ManyResult": "automodel.kernels.fit_many", "read_extrap_text": "automodel.data.readers.extrap_text",
         "read": "automodel.data.readers",
         "AutomodelRegressor": "automodel.sklearn", "suggest": "automodel.suggestion",
         "Plan": "automodel.suggestion"}

__all__ = ["fit", "FitResult", "load", "Dataset", "Model", "TermModel", "BestP", "Interval", "load_model", "load_space",
           "SearchSpace", "fit_many", "ManyResult", "suggest", "Plan", "read", "read_extrap_text", "AutomodelRegressor", "AutomodelError",
           "DataError", "SpaceError", "OptionError", "ModelFileError", "StoreError"]
__version__ = "0.1.0"

if TYPE_CHECKING:  # pragma: no cover
    from automodel.fitting import FitResult, fit
    from automodel.data import Dataset, load
    from automodel.data.readers.extrap_text import read_extrap_text
    from automodel.data.readers import read
    from automodel.kernels.fit_many import ManyResult, fit_many
    from automodel.model.interval import Interval
    from automodel.model.best_p import BestP
    from automodel.model.core import Model, TermModel
    from automodel.model_file import load_model
    from automodel.sklearn import AutomodelRegressor
    from automodel.space.config import SearchSpace, load_space
    from automodel.suggestion import Plan, suggest


__getattr__, __dir__ = lazy_names(globals(), _LAZY)
