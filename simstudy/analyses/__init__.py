"""Stand-alone analyses behind the Nedelko reproductions (tie rules, a distribution-free R_hat).

Each module is a function returning a result object plus a ``main`` that writes Markdown and
CSV tables; they reuse the study's random streams so their numbers refer to the study's samples.
"""
