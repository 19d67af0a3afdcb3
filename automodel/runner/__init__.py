"""Run an application over a designed grid of parameters: ``automodel run``."""

from automodel.runner.campaign import *  # noqa: F401,F403
from automodel.runner.campaign import __all__, iter_rows, placeholders  # noqa: F401
