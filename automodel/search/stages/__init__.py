"""The stages of the staged search, one module each (adaptive-model-sanjay-slides.txt, slides 18-22).

``computation`` and ``communication`` (stages 1 and 2, through :mod:`~automodel.search.stages.parts`),
``processors`` (stage 3), ``p_only`` (data without ``n``), ``parameters`` (extra parameters) and ``pmnf``
(Extra-P's hypothesis space). Each reads its typed settings (:mod:`automodel.space.stages`) and takes its
step through :meth:`automodel.search.state.Search.run`; :mod:`automodel.search.engine` runs them.
"""
