"""The stages of the search, one module each (adaptive-model-sanjay-slides.txt, slides 18-22), and their
table :data:`STAGES`, which :mod:`automodel.search.engine` runs in order.

``computation`` and ``communication`` (stages 1 and 2, through :mod:`~automodel.search.stages.parts`),
``processors`` (stage 3), ``p_only`` (data without ``n``), ``parameters`` (extra parameters) and ``pmnf``
(Extra-P's hypothesis space). Each module declares its :class:`~automodel.search.stages.base.Stage`
(``STAGE``: name, typed settings from :mod:`automodel.space.stages`, route, when it applies, how it runs)
and takes its steps through :meth:`automodel.search.state.Search.run`.

A new stage is its module here, its line in :data:`STAGES` (where it runs in its route) and its config
in :data:`automodel.space.stages.STAGE_CONFIGS` (what a space file's ``[stages.<name>]`` may hold).
"""

from automodel.search.stages import communication, computation, p_only, parameters, pmnf, processors
from automodel.search.stages.base import Stage

__all__ = ["STAGES"]

#: stage name -> stage, in the order the engine runs them (each route in turn, its stages in order)
STAGES: dict[str, Stage] = {s.name: s for s in (computation.STAGE, communication.STAGE, processors.STAGE,
                                                 p_only.STAGE, parameters.STAGE, pmnf.STAGE)}
