"""Nedelko's Figure 4: risk estimates of the histogram classifier, computed exactly.

- :mod:`.config`: the study's settings (:class:`~.config.NedelkoHistogramConfig`);
- :mod:`.exact`: enumeration of samples and the exact expectations over a grid of distributions;
- :mod:`.figures`: Figure 4;
- :mod:`.study`: the :class:`~.study.NedelkoHistogramStudy` the engine runs.

Importing this package imports nothing else.
"""
