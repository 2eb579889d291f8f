"""``simstudy-collect SWEEP_DIR``: merge the runs of a multirun into one table and figures."""
from __future__ import annotations

from simstudy.cli.console import disk_message, fail, setup_logging
from simstudy.errors import UserError

__all__ = ["collect_main"]


def collect_main(argv: list[str] | None = None) -> None:
    """``simstudy-collect SWEEP_DIR``: merge the runs of a multirun into one table and figures."""
    import argparse

    from simstudy.sweeps import collect

    parser = argparse.ArgumentParser(prog="simstudy-collect", description=collect_main.__doc__)
    parser.add_argument("sweep_dir", help="the sweep directory of 'simstudy -m ...' (hydra.sweep.dir)")
    args = parser.parse_args(argv)
    setup_logging()
    try:
        result = collect(args.sweep_dir)
    except UserError as exc:
        fail("simstudy-collect", " ".join(str(exc).split()))
    except KeyboardInterrupt:
        fail("simstudy-collect", "interrupted; the run directories are unchanged.", 130)
    except OSError as exc:
        fail("simstudy-collect", disk_message(exc, args.sweep_dir))
    for line in result.headlines:
        print(line)
    print(f"simstudy-collect: {len(result.summary)} summary rows from parameters {result.parameters}; wrote")
    for path in result.files:
        print(f"  {path}")
