"""The model level: a searched model and its protocol, its band (interval, calibration), the best process
count, and the load forecast. Model files, which read back term models and templates alike, sit above
both, in :mod:`automodel.model_file`.

Nothing is imported here, so ``import automodel.model.core`` loads only what that module needs.
"""
