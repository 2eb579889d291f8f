"""``python -m simstudy.cli``: the ``simstudy`` command."""
from simstudy.cli.run import console_main

if __name__ == "__main__":  # importing the module (the API reference does) runs nothing
    console_main()
