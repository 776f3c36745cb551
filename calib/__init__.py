"""calib: a calibration audit for models that state how sure they are."""

__version__ = "0.1.0"
