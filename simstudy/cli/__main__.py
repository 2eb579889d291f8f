"""``python -m simstudy.cli``: the ``simstudy`` command."""
from simstudy.cli.run import console_main

console_main()
