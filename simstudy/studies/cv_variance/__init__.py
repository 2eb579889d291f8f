"""Grandvalet & Bengio (2006): between-block correlation and CV t-tests (Table 2).

- :mod:`.config`: the study's settings (:class:`~.config.CVVarianceConfig`);
- :mod:`.worker`: what one replicate records;
- :mod:`.aggregate`: rho, Var(mu_hat), the biases of theta1..theta5, type-I errors;
- :mod:`.figures`: rho and the type-I error against n and rho_hat;
- :mod:`.study`: the :class:`~.study.CVVarianceStudy` the engine runs.

Importing this package imports nothing else (the CLI registers every study's config cheaply).
"""
