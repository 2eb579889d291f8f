"""Audit of a user's own cross-validation: which interval can be trusted for this data, learner and n?

``simstudy audit DATA`` (or ``simstudy-audit``, or :func:`audit` in Python) treats the user's
data set as the population (Grandvalet & Bengio's protocol), simulates training sets at the
user's n (with replacement) and at n/2 (without), runs the rho_hat study there, and reports the
user's CV estimate with the recommended interval, rho at those sizes, the size and power of every
procedure with Monte Carlo errors, and a plain-words recommendation (Markdown + HTML + figure).

- :mod:`.run`: :func:`audit` and :class:`AuditResult`;
- :mod:`.recommend`: the rule that picks the procedure;
- :mod:`.report`: Markdown, HTML and the figure;
- :mod:`.cli`: the command line (exit code 2 and one line on bad input).
"""
from simstudy.audit.run import AuditResult, audit

__all__ = ["AuditResult", "audit"]
