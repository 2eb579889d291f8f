"""Compare the records and tables of two run directories (a refactor must change no number).

    python experiments/compare_runs.py results/table2_letter /tmp/new/table2_letter

For each file present in both (``*.parquet`` records, ``summary.csv``, ``tests.csv``, other CSV
tables) it prints whether the files are byte-identical, else whether the frames are equal, else
the largest absolute difference per numeric column and the number of differing cells. Exit
status 0 when every records file is byte-identical or equal as a frame, 1 otherwise.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _frames(path: Path) -> pd.DataFrame:
    return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)


def _cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Array cells (lists of floats) as tuples so that frames compare cell by cell."""
    out = frame.copy()
    for column in out.columns:
        if out[column].map(lambda v: isinstance(v, (list, np.ndarray))).any():
            out[column] = out[column].map(lambda v: tuple(np.asarray(v, dtype=float).tolist()))
    return out


def compare(a: Path, b: Path) -> tuple[str, bool]:
    """(one line of verdict, same) for two files."""
    if _sha(a) == _sha(b):
        return "byte-identical", True
    fa, fb = _cells(_frames(a)), _cells(_frames(b))
    if fa.shape != fb.shape or list(fa.columns) != list(fb.columns):
        return f"different shape/columns: {fa.shape} vs {fb.shape}", False
    try:
        pd.testing.assert_frame_equal(fa, fb, check_exact=True)
        return "equal frames (bytes differ: metadata)", True
    except AssertionError:
        pass
    worst = []
    for column in fa.columns:
        x, y = fa[column], fb[column]
        if x.dtype.kind == "f" and y.dtype.kind == "f":
            xv, yv = x.to_numpy(), y.to_numpy()
            same = (xv == yv) | (np.isnan(xv) & np.isnan(yv))
            with np.errstate(invalid="ignore"):
                diff = np.where(same, 0.0, np.abs(xv - yv))
            n = int(np.sum(~same))
            if n:
                worst.append(f"{column}: {n} cells, max |diff| {np.nanmax(diff):.3g}")
        else:
            n = int((x != y).sum())
            if n:
                worst.append(f"{column}: {n} cells")
    return "DIFFERENT: " + "; ".join(worst), False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    names = sorted({p.name for p in args.a.glob("*") if p.suffix in (".parquet", ".csv")}
                   & {p.name for p in args.b.glob("*") if p.suffix in (".parquet", ".csv")})
    ok = True
    for name in names:
        verdict, same = compare(args.a / name, args.b / name)
        print(f"{name:<28} {verdict}")
        ok &= same or not name.endswith(".parquet")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
