"""Nedelko: accuracy of risk estimates for Fisher's discriminant on the 2-D logistic model.

- :mod:`.config`: the study's settings (:class:`~.config.NedelkoFisherConfig`);
- :mod:`.worker`: the estimates (LOO, K-fold, empirical, .632, .632+) and exact risks of a
  chunk of samples, batched; the R_hat calibration replicates;
- :mod:`.aggregate`: R_hat's bias correction, means, biases and error functions per (N, R0);
- :mod:`.figures`: Figure 3 for each N;
- :mod:`.study`: the :class:`~.study.NedelkoFisherStudy` the engine runs.

Importing this package imports nothing else.
"""
