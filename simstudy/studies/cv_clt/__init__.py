"""Bayle, Bayle, Janson & Mackey (2020): calibration of CV intervals and tests for test error.

- :mod:`.config`: the study's settings (:class:`~.config.CVCLTConfig`);
- :mod:`.worker`: what one replicate records for every learner and comparison;
- :mod:`.aggregate`: coverage and width of every interval procedure, size and power of every test;
- :mod:`.figures`: coverage, width, size and power against n;
- :mod:`.study`: the :class:`~.study.CVCLTStudy` the engine runs.

Importing this package imports nothing else.
"""
