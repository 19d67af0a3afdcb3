"""HTML reports: one self-contained page of a fit (:mod:`~automodel.output.report.fit`) and of a whole profile
(:mod:`~automodel.output.report.profile`).

A page needs no network to be viewed: its styles, scripts and figures are inline, and its
Content-Security-Policy forbids every other source (:mod:`~automodel.output.report.page`). Every string that
comes from the user's data is escaped (``html.escape``, or JSON with ``<``, ``>`` and ``&`` written as
``\\u`` escapes inside a ``<script type="application/json">``).

The report package sits beside :mod:`automodel.fitting` in the import layers: it renders the objects
handed to it (a fit result, the models of many kernels and their measurements) and imports neither the
fitting facade nor the many-kernels search, so that ``FitResult.report`` can call it.
"""
