"""Data-driven rho_hat for the K-fold CV t-test: size and power against n.

- :mod:`.config`: the study's settings (:class:`~.config.RhoHatConfig`);
- :mod:`.worker`: what one replicate records (K-fold CV, half-sample CVs, nested CV);
- :mod:`.aggregate`: size and power of every procedure per n, rho and the estimated rho_hat;
- :mod:`.figures`: size, power and rho against n;
- :mod:`.study`: the :class:`~.study.RhoHatStudy` the engine runs.

Importing this package imports nothing else.
"""
