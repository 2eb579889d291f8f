"""A study written outside the package: the .632+ bootstrap against 10-fold CV and leave-one-out.

Importing this package registers it, so that ``simstudy.run_study("bootstrap632", ...)`` works;
the CLI needs no registration (``study=custom study._target_=examples.bootstrap632.study.Bootstrap632Study``).
"""
import simstudy

if "bootstrap632" not in simstudy.STUDIES:
    simstudy.STUDIES.register("bootstrap632", "examples.bootstrap632.study:Bootstrap632Study",
                              "the .632+ bootstrap against 10-fold CV and leave-one-out (an example study)",
                              "examples.bootstrap632.study:Bootstrap632Config")
