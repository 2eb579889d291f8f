"""Nedelko: accuracy of risk estimates for Fisher's discriminant on the 2-D logistic model.

- :mod:`.config`: the study's settings (:class:`~.config.NedelkoFisherConfig`);
- :mod:`.worker`: the draw order, the estimates (LOO, K-fold, empirical, .632, .632+) and exact
  risks of a chunk of samples, batched, under the study's tie rule and (for the sensitivity
  table) the other rules; the oracle R_hat calibration replicates;
- :mod:`.aggregate`: R_hat, means, biases and error functions per (N, R0), paired comparisons
  of Delta0, the tie-rule sensitivity table;
- :mod:`.report`: summary.md; :mod:`.figures`: Figure 3 for each N;
- :mod:`.study`: the :class:`~.study.NedelkoFisherStudy` the engine runs.

Importing this package imports nothing else.
"""
