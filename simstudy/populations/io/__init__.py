"""Reading data sets for finite populations: delimited text files (:mod:`.text`), OpenML and
CoverType downloads (:mod:`.openml`), what every source returns and the checks they share
(:mod:`.table`), file access (:mod:`.files`) and the one data fingerprint (:mod:`.fingerprint`).

Nothing is guessed silently. A cell is *missing* when, stripped of blanks, it is one of
:data:`.table.MISSING_MARKERS` (the empty cell, ``?``, ``NA``, ``N/A``, ``NaN``, ``nan``, ``null``,
``NULL``, ``None``); missing features are refused (``missing="error"``, the default) or their
rows dropped with a warning (``missing="drop_rows"``), and a missing class is always an error.
Every error names the configuration field, the bad value and the fix, and is a
:class:`~simstudy.errors.DataUnavailableError` when the data cannot be read at all, a
``ValueError`` otherwise.

Each loader returns a :class:`~.table.TabularData` whose ``fingerprint``
(:func:`~.fingerprint.data_fingerprint`) identifies the data content: it lets a resumed run refuse
changed data. It is separate from the population's seed parameters, so moving or re-compressing a
file changes no seed.
"""
