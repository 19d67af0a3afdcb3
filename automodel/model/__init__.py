"""The model level: a searched model and its protocol, its band (interval, calibration), the best process
count, model files, and the load forecast.

Nothing is imported here, so ``import automodel.model.file`` loads only what that module needs.
"""
