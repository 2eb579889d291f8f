"""Studies: one folder per study, each supplying its parts to the engine (see :mod:`.base`).

The studies are named in :data:`simstudy.registry.STUDIES` and imported on first use, so a run
(and each of its workers) imports only its own study.
"""
