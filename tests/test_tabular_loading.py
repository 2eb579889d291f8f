"""Tabular data: nothing silently wrong.

Missing values, the class column, unreadable files, ragged rows, single rows and classes,
data fingerprints, population size against training size, and the download paths (OpenML,
CoverType) without a network. Every error must name the field, the bad value and the fix.
"""
import gzip
import hashlib
import logging
import shutil
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.utils import Bunch

from simstudy.populations import DataUnavailableError, build_population, finite, load_openml, load_table_file
from simstudy.populations.io.fingerprint import data_fingerprint
from simstudy.populations.io.openml import load_covtype
from simstudy.populations.io.table import MISSING_MARKERS, binarize

from conftest import make_letter_like

LETTER = Path("/work/shared/data/letter-recognition.data")


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def _csv_lines(rows=285, seed=0):
    """Header a,b,c,d,y; four real features, class y in {0, 1} last."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, 4)).round(3)
    y = rng.integers(0, 2, rows)
    return ["a,b,c,d,y"] + [",".join(map(str, list(r) + [c])) for r, c in zip(X, y)], X, y


def _with_cell(lines, line_number, column, value):
    """Copy of ``lines`` with the cell of 1-based ``line_number`` in ``column`` replaced."""
    lines = list(lines)
    cells = lines[line_number - 1].split(",")
    cells[column] = value
    lines[line_number - 1] = ",".join(cells)
    return lines


def _cfg(path, **extra):
    return {"kind": "tabular", "name": "t", "path": str(path), **extra}


# ------------------------------------------------------------------ missing values
@pytest.mark.parametrize("marker", ["?", ""])
def test_missing_value_in_first_column_never_makes_it_the_class(tmp_path, marker):
    """The hostile user's file: one '?' (or empty cell) in column a used to make a the class."""
    lines, X, y = _csv_lines()
    path = _write(tmp_path, "a.csv", "\n".join(_with_cell(lines, 8, 0, marker)))
    with pytest.raises(ValueError, match=r"population.path=.*column 0 \('a'\): 1, first at line 8.*"
                                         r"population.missing=drop_rows"):
        load_table_file(path)
    data = load_table_file(path, missing="drop_rows")
    assert data.dropped_rows == 1 and data.X.shape == (284, 4)
    np.testing.assert_array_equal(data.labels, np.delete(y, 6).astype(str))  # line 8 is data row 6
    np.testing.assert_array_equal(data.X, np.delete(X, 6, axis=0))
    assert finite.build_tabular_population(_cfg(path, missing="drop_rows")).size == 284  # config field


@pytest.mark.parametrize("marker", MISSING_MARKERS)
def test_every_missing_marker_in_a_middle_column_is_refused(tmp_path, marker):
    lines, _, _ = _csv_lines(40)
    path = _write(tmp_path, "m.csv", "\n".join(_with_cell(_with_cell(lines, 5, 2, marker), 9, 2, f" {marker} ")))
    with pytest.raises(ValueError, match=r"2 missing feature value.*column 2 \('c'\): 2, first at line 5"):
        load_table_file(path)


def test_drop_rows_warns_with_the_numbers(tmp_path, caplog):
    lines, _, _ = _csv_lines(40)
    path = _write(tmp_path, "m.csv", "\n".join(_with_cell(_with_cell(lines, 5, 1, "NA"), 9, 3, "?")))
    with caplog.at_level(logging.WARNING, logger="simstudy"):
        data = load_table_file(path, missing="drop_rows")
    assert data.X.shape == (38, 4)
    assert "2 of 40 rows left out" in caplog.text and "column 3 ('d'): 1, first at line 9" in caplog.text


def test_missing_class_is_an_error_naming_the_lines(tmp_path, letter_like_file):
    path, _, _ = letter_like_file
    lines = path.read_text().splitlines()
    bad = _write(tmp_path, "holes.data", "\n".join(_with_cell(_with_cell(lines, 3, 0, "?"), 5, 0, "")))
    for options in ({}, {"missing": "drop_rows"}):
        with pytest.raises(ValueError, match=r"the class is missing at lines 3, 5 \(class in column 0 "
                                             r"\(population.label_column='auto'\)"):
            load_table_file(bad, **options)


def test_unknown_missing_policy_names_the_field(tmp_path, letter_like_file):
    with pytest.raises(ValueError, match="population.missing='ignore' is not valid"):
        load_table_file(letter_like_file[0], missing="ignore")


# ------------------------------------------------------------------ the class column under auto
def test_auto_refuses_when_first_and_last_columns_both_hold_text(tmp_path):
    path = _write(tmp_path, "tt.csv", "A,1,2,x\nB,3,4,y\nA,5,6,x\n")
    with pytest.raises(ValueError, match=r"population.label_column=auto cannot tell.*both the first and "
                                         r"the last column hold text \(column 0: 'A' at line 1; column 3: 'x' at "
                                         r"line 1\)\. Set population.label_column"):
        load_table_file(path)
    with pytest.raises(ValueError, match=r"feature column 3 holds 'x' at line 1"):
        load_table_file(path, label_column="first")


def test_auto_refuses_a_last_column_of_non_integers(tmp_path):
    path = _write(tmp_path, "f.csv", "1,0.5,0.25\n2,0.1,1.75\n1,0.3,0.5\n")
    with pytest.raises(ValueError, match=r"label_column=auto cannot tell.*column 2, holds non-integers "
                                         r"\('0.25' at line 1\)"):
        load_table_file(path)
    np.testing.assert_array_equal(load_table_file(path, label_column="first").labels, ["1", "2", "1"])


def test_auto_refuses_a_column_of_missing_markers(tmp_path):
    path = _write(tmp_path, "e.csv", "x,y\n1,?\n2,NA\n")
    with pytest.raises(ValueError, match=r"column 1 \('y'\) holds only missing markers.*population.label_column"):
        load_table_file(path)


def test_text_feature_names_column_value_and_line(tmp_path):
    lines, _, _ = _csv_lines(30)
    path = _write(tmp_path, "t.csv", "\n".join(_with_cell(lines, 12, 2, "abc")))
    with pytest.raises(ValueError, match=r"feature column 2 \('c'\) holds 'abc' at line 12, which is not a number"):
        load_table_file(path)


def test_infinite_feature_is_refused(tmp_path):
    lines, _, _ = _csv_lines(30)
    path = _write(tmp_path, "inf.csv", "\n".join(_with_cell(lines, 4, 1, "inf")))
    with pytest.raises(ValueError, match=r"column 1 \('b'\) holds 'inf' at line 4"):
        load_table_file(path)


def test_single_class_names_label_column(tmp_path):
    path = _write(tmp_path, "one-class.csv", "1,2,0\n3,4,0\n5,6,0\n")
    with pytest.raises(ValueError, match=r"the class \(in column 2 \(population.label_column='auto'\)\) is '0' "
                                         r"in all 3 rows.*population.label_column"):
        load_table_file(path)


def test_invalid_label_column_names_the_field(letter_like_file):
    for bad in (17, "middle", True):
        with pytest.raises(ValueError, match="population.label_column="):
            load_table_file(letter_like_file[0], label_column=bad)


def test_positive_label_absent_from_the_data(letter_like_file):
    with pytest.raises(ValueError, match=r"population.positive=.*names \['a'\], not a class of the data"):
        binarize(np.array(["A", "B", "C"]), ["A", "a"])


# ------------------------------------------------------------------ unreadable files
def test_directory_is_reported_as_a_directory(tmp_path):
    (tmp_path / "letter.data").write_text("A,1\n")
    with pytest.raises(DataUnavailableError, match=r"population.path=.* is a directory.*it holds: letter.data"):
        load_table_file(tmp_path)


@pytest.mark.parametrize("content, word", [(b"", "empty"), (b"\n \n\n", "blank")])
def test_empty_file_names_the_field(tmp_path, content, word):
    path = tmp_path / "e.csv"
    path.write_bytes(content)
    with pytest.raises(DataUnavailableError, match=rf"population.path=.* is {word}.*Point population.path"):
        load_table_file(path)


@pytest.mark.parametrize("content, what", [
    (bytes(range(256)) * 4, "binary file"),
    (b"PK\x03\x04" + b"x" * 50, "zip archive"),
    ("A,1,2\nÉ,3,4\n".encode("latin-1"), "not UTF-8 text .byte 0xc9 on line 2"),
    ("A,1,2\nB,3,4\n".encode("utf-16"), "UTF-16 text, not UTF-8 text"),
])
def test_binary_file_names_the_field(tmp_path, content, what):
    path = tmp_path / "b.data"
    path.write_bytes(content)
    with pytest.raises(DataUnavailableError, match=rf"population.path=.*{what}.*population.path"):
        load_table_file(path)


def test_gzip_detected_by_content_and_damage_reported(tmp_path, letter_like_file):
    path, X, y = letter_like_file
    packed = tmp_path / "letter.bin"  # gzip without the .gz suffix
    packed.write_bytes(gzip.compress(path.read_bytes()))
    np.testing.assert_array_equal(load_table_file(packed).X, X)
    broken = tmp_path / "broken.data.gz"
    broken.write_bytes(packed.read_bytes()[:200])
    with pytest.raises(DataUnavailableError, match=r"population.path=.* is a damaged gzip file.*download it again"):
        load_table_file(broken)


# ------------------------------------------------------------------ shape of the file
def test_single_row_is_refused(tmp_path):
    for text in ("1,2,0\n", "a,b,y\n1,2,0\n"):
        path = _write(tmp_path, "one.csv", text)
        with pytest.raises(ValueError, match=r"population.path=.*: 1 data row\(s\); a population needs at least 2"):
            load_table_file(path)


@pytest.mark.parametrize("text, line, fields", [("1,2,0\n1,2\n3,4,1\n", 2, 2), ("1,2,0\n3,4,1\n\n5,6,7,1\n", 4, 4)])
def test_ragged_rows_are_refused(tmp_path, text, line, fields):
    path = _write(tmp_path, "r.csv", text)
    with pytest.raises(ValueError, match=rf"line {line} has {fields} fields but line 1 has 3 .separator ','"):
        load_table_file(path)


def test_ragged_blank_separated_rows_explain_empty_cells(tmp_path):
    path = _write(tmp_path, "r.data", "A 1 2\nB 3\nA 5 6\n")
    with pytest.raises(ValueError, match="runs of blanks.*an empty cell cannot be seen"):
        load_table_file(path)


def test_one_column_names_the_delimiter(tmp_path):
    path = _write(tmp_path, "p.txt", "1|2|0\n3|4|1\n")
    with pytest.raises(ValueError, match="splits into 1 field.*population.delimiter"):
        load_table_file(path)
    assert load_table_file(path, delimiter="|").X.shape == (2, 2)
    with pytest.raises(ValueError, match=r"population.delimiter='\|\|' is not a single character"):
        load_table_file(path, delimiter="||")


def test_tab_separated_empty_cell_is_missing_not_shifted(tmp_path):
    """Runs of blanks would merge the two tabs and shift the row: tabs are sniffed instead."""
    path = _write(tmp_path, "t.tsv", "1\t2\t0\n3\t\t1\n5\t6\t0\n")
    with pytest.raises(ValueError, match=r"column 1: 1, first at line 2"):
        load_table_file(path)


def test_semicolons_are_sniffed(tmp_path):
    data = load_table_file(_write(tmp_path, "s.csv", "x;y;class\n1;2;A\n3;4;B\n"))
    np.testing.assert_array_equal(data.X, [[1, 2], [3, 4]])
    assert data.feature_names == ("x", "y")


def test_header_false_with_column_names_points_at_header(tmp_path):
    lines, _, _ = _csv_lines(10)
    path = _write(tmp_path, "h.csv", "\n".join(lines))
    with pytest.raises(ValueError, match=r"both the first and the last column hold text \(column 0: 'a' at line 1; "
                                         r"column 4: 'y' at line 1\); if line 1 holds column names, set "
                                         r"population.header=true"):
        load_table_file(path, header=False)
    with pytest.raises(ValueError, match=r"feature column 0 holds 'a' at line 1.*if the first line holds column "
                                         r"names, set population.header=true"):
        load_table_file(path, header=False, label_column="last")


def test_header_true_over_numbers_warns(tmp_path, caplog):
    path = _write(tmp_path, "h.csv", "1,2,0\n3,4,1\n5,6,0\n")
    with caplog.at_level(logging.WARNING, logger="simstudy"):
        X, _ = load_table_file(path, header=True)
    assert X.shape == (2, 2)
    assert "population.header=true: line 1 holds only numbers" in caplog.text


def test_invalid_header_names_the_field(letter_like_file):
    with pytest.raises(ValueError, match="population.header='yes' is not valid"):
        load_table_file(letter_like_file[0], header="yes")


def test_csv_header_names_the_features(tmp_path):
    data = load_table_file(_write(tmp_path, "n.csv", "id,x,y\n1,0.5,A\n2,0.7,B\n"))
    assert data.feature_names == ("id", "x")
    np.testing.assert_array_equal(data.labels, ["A", "B"])


# ------------------------------------------------------------------ fingerprint and seeds
def test_file_fingerprint_is_the_content_hash_and_ignores_place(tmp_path, letter_like_file):
    path, _, _ = letter_like_file
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    assert data_fingerprint(path) == expected
    packed = tmp_path / "letter.data.gz"
    packed.write_bytes(gzip.compress(path.read_bytes(), mtime=123))
    assert data_fingerprint(packed) == expected  # the content, not its compression
    moved = tmp_path / "elsewhere" / "renamed.csv"
    moved.parent.mkdir()
    shutil.copy(path, moved)
    pops = [finite.build_tabular_population(_cfg(p, positive=list("ABCDEFGHIJKLM"))) for p in (path, moved, packed)]
    assert {p.fingerprint for p in pops} == {expected}
    assert pops[0].seed_params() == pops[1].seed_params() == pops[2].seed_params()


def test_changed_content_changes_fingerprint_not_seed(tmp_path, letter_like_file):
    path, _, _ = letter_like_file
    lines = path.read_text().splitlines()
    value = str((int(lines[6].split(",")[3]) + 1) % 16)
    changed = _write(tmp_path, "changed.data", "\n".join(_with_cell(lines, 7, 3, value)) + "\n")
    a, b = (finite.build_tabular_population(_cfg(p, positive=["A"])) for p in (path, changed))
    assert a.fingerprint != b.fingerprint
    assert a.seed_params() == b.seed_params()


def test_builder_keeps_the_former_seed_params(letter_like_file):
    path, X, y = letter_like_file
    cfg = _cfg(path, positive=list("ABCDEFGHIJKLM"), replace=False)
    new, old = finite.build_tabular_population(cfg), build_population(cfg)
    assert new.seed_params() == old.seed_params() == {
        "kind": "tabular", "name": "t", "replace": False, "positive": list("ABCDEFGHIJKLM"),
        "rows": 400, "features": 16}
    np.testing.assert_array_equal(new.X, old.X)
    np.testing.assert_array_equal(new.y, old.y)
    assert new.source == "file"


def test_array_fingerprint_covers_dtype_and_shape():
    X = np.arange(12, dtype=float).reshape(4, 3)
    y = np.array(["a", "b", "a", "b"])
    fp = data_fingerprint((X, y))
    assert len(fp) == 64 and fp == data_fingerprint((X.copy(), y.copy()))
    assert fp != data_fingerprint((X.reshape(3, 4), y))
    assert fp != data_fingerprint((X.astype(np.float32), y))
    assert fp != data_fingerprint((X, y[::-1]))
    pop = finite.TabularPopulation(X, np.array([0, 1, 0, 1]))
    assert pop.fingerprint == data_fingerprint((pop.X, pop.y))


def test_loaders_still_unpack_as_a_pair(letter_like_file):
    path, X, y = letter_like_file
    Xl, yl = load_table_file(path)
    np.testing.assert_array_equal(Xl, X)
    np.testing.assert_array_equal(yl, y)


def test_population_refuses_non_finite_features():
    X = np.ones((5, 2))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="1 NaN or infinite value.*row 3, column 1.*population.missing=drop_rows"):
        finite.TabularPopulation(X, np.arange(5) % 2)


# ------------------------------------------------------------------ population size vs training size
def test_three_rows_for_training_sets_of_twenty(tmp_path, caplog):
    path = _write(tmp_path, "three.csv", "1,2,0\n3,4,1\n5,6,0\n")
    pop = finite.build_tabular_population(_cfg(path))
    with caplog.at_level(logging.WARNING, logger="simstudy"):
        pop.check_size(20, replace=True)
    assert "has 3 rows, fewer than the largest training size n=20 in study.sizes" in caplog.text
    with pytest.raises(ValueError, match=r"study.sizes asks for training sets of up to n=20 rows drawn without "
                                         r"replacement \(population.replace=false\), but population 't' \(file\) "
                                         r"has only 3 rows.*population.replace=true"):
        pop.check_size(20, replace=False)


def test_check_size_is_quiet_when_the_population_is_large_enough(caplog):
    pop = finite.TabularPopulation(np.zeros((30, 2)), np.arange(30) % 2, replace=False)
    with caplog.at_level(logging.WARNING, logger="simstudy"):
        pop.check_size(30)
        pop.check_size(10, replace=True)
    assert caplog.text == ""
    with pytest.raises(ValueError, match="population.replace=false"):
        pop.check_size(31)  # the population's own setting


# ------------------------------------------------------------------ config dispatch
def test_load_tabular_config_errors():
    with pytest.raises(ValueError, match="population.source='file' without population.path"):
        finite.load_tabular({"kind": "tabular", "source": "file", "path": None})
    with pytest.raises(ValueError, match="population.openml_id=None"):
        finite.load_tabular({"kind": "tabular", "source": "openml", "openml_id": None})


# ------------------------------------------------------------------ real Letter file
def test_real_letter_file():
    if not LETTER.exists():
        pytest.skip("shared Letter data not present")
    pop = finite.build_tabular_population(_cfg(LETTER, name="letter", positive=list("ABCDEFGHIJKLM")))
    assert pop.X.shape == (20000, 16)
    assert np.mean(pop.y) == pytest.approx(0.497, abs=5e-4)
    assert pop.fingerprint == hashlib.sha256(LETTER.read_bytes()).hexdigest()
    former = build_population(_cfg(LETTER, name="letter", positive=list("ABCDEFGHIJKLM")))
    assert pop.seed_params() == former.seed_params()


# ------------------------------------------------------------------ OpenML (fetch_openml faked)
def _openml_frame():
    """Numeric and categorical features with missing values, and a nominal target."""
    data = pd.DataFrame({
        "width": [1.5, np.nan, 3.0, 4.5, 5.0, 6.5],
        "colour": pd.Categorical(["red", "blue", None, "red", "green", "blue"],
                                 categories=["red", "green", "blue"]),
        "count": pd.Categorical(["1", "2", "3", "1", "2", "3"]),
    })
    target = pd.Series(pd.Categorical(["p", "q", "p", "q", "p", "q"]), name="class")
    return data, target


def _fake_fetch(monkeypatch, data, target, seen=None):
    def fetch_openml(data_id, data_home=None, **kwargs):
        if seen is not None:
            seen.append(data_home)
        return Bunch(data=data, target=target)
    monkeypatch.setattr("sklearn.datasets.fetch_openml", fetch_openml)


def test_openml_missing_values_are_refused_by_name(monkeypatch, tmp_path):
    _fake_fetch(monkeypatch, *_openml_frame())
    with pytest.raises(ValueError, match=r"population.openml_id=6: 2 missing feature value\(s\) in 2 of 6 rows "
                                         r"\(column 0 \('width'\): 1, first at row 2; column 1 \('colour'\): 1, "
                                         r"first at row 3.*population.missing=drop_rows"):
        load_openml(6, data_home=str(tmp_path))


def test_openml_drop_rows_encodes_nominal_features(monkeypatch, tmp_path):
    _fake_fetch(monkeypatch, *_openml_frame())
    data = load_openml(6, data_home=str(tmp_path), missing="drop_rows")
    # rows 1, 4, 5, 6 remain; colour in category order red=0, green=1, blue=2; count numeric
    np.testing.assert_array_equal(data.X, [[1.5, 0, 1], [4.5, 0, 1], [5.0, 1, 2], [6.5, 2, 3]])
    np.testing.assert_array_equal(data.labels, ["p", "q", "p", "q"])
    assert data.source == "openml:6" and data.dropped_rows == 2
    assert data.fingerprint == data_fingerprint((data.X, data.labels))
    assert data.feature_names == ("width", "colour", "count")


def test_openml_missing_target_and_no_target(monkeypatch, tmp_path):
    data, target = _openml_frame()
    target = target.copy()
    target[4] = np.nan
    _fake_fetch(monkeypatch, data.fillna({"width": 0.0}).assign(colour=data.colour.fillna("red")), target)
    with pytest.raises(ValueError, match=r"population.openml_id=6: the class is missing at row 5 "
                                         r"\(class in OpenML's target column 'class'"):
        load_openml(6, data_home=str(tmp_path))
    _fake_fetch(monkeypatch, data, None)
    with pytest.raises(ValueError, match="population.openml_id=6: the data set has no default target column"):
        load_openml(6, data_home=str(tmp_path))


def test_openml_cache_path_handling(monkeypatch, tmp_path):
    seen = []
    data, target = _openml_frame()
    _fake_fetch(monkeypatch, data.dropna(), target[data.notna().all(axis=1)], seen)
    monkeypatch.setenv("HOME", str(tmp_path))
    pop = finite.build_tabular_population({"kind": "tabular", "name": "o", "source": "openml", "openml_id": 6,
                                            "data_home": "~/cache/openml"})
    assert seen == [str(tmp_path / "cache" / "openml")] and (tmp_path / "cache" / "openml").is_dir()
    assert pop.source == "openml:6" and pop.X.shape == (4, 3)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(DataUnavailableError, match=r"population.data_home='.*afile' is a file, not a directory"):
        load_openml(6, data_home=str(tmp_path / "afile"))


def _failing(exc):
    """A fetcher that raises ``exc``, as scikit-learn's do without a network."""
    def fetch(*args, **kwargs):
        raise exc
    return fetch


def test_openml_download_failure_names_the_ways_out(monkeypatch, tmp_path):
    from urllib.error import URLError

    monkeypatch.setattr("sklearn.datasets.fetch_openml", _failing(URLError("no network")))
    with pytest.raises(DataUnavailableError, match=r"population.openml_id=6: the download failed \(URLError.*"
                                                   r"population.data_home=.*population.path"):
        load_openml(6, data_home=str(tmp_path))
    monkeypatch.setattr("sklearn.datasets.fetch_openml", _failing(ValueError("Dataset with data_id 999999 not found")))
    with pytest.raises(ValueError, match=r"population.openml_id=999999: OpenML refused the request.*Check the data id"):
        load_openml(999999, data_home=str(tmp_path))
    with pytest.raises(ValueError, match="population.openml_id='letter' is not an integer"):
        load_openml("letter", data_home=str(tmp_path))


# ------------------------------------------------------------------ CoverType (cache pre-filled)
def _covtype_cache(tmp_path, X, y):
    cache = tmp_path / "covertype"
    cache.mkdir()
    joblib.dump(X, cache / "samples_py3")
    joblib.dump(y, cache / "targets_py3")


def test_covtype_fingerprint_and_missing_values(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.integers(0, 50, (60, 54)).astype(float)
    y = rng.integers(1, 8, 60)
    _covtype_cache(tmp_path, X, y)
    other = tmp_path / "other"
    other.mkdir()
    X_nan = X.copy()
    X_nan[10, 5] = np.nan
    _covtype_cache(other, X_nan, y)
    with pytest.raises(ValueError, match=r"population.source=covtype: 1 missing feature value.*column 5: 1, "
                                         r"first at row 11.*population.missing=drop_rows"):
        load_covtype(data_home=str(other))
    data = load_covtype(data_home=str(tmp_path))
    assert data.source == "covtype" and data.fingerprint == data_fingerprint((X, y.astype(str)))


def test_covtype_download_failure(monkeypatch, tmp_path):
    monkeypatch.setattr("sklearn.datasets.fetch_covtype", _failing(OSError("no network")))
    with pytest.raises(DataUnavailableError, match=r"population.source=covtype: the download failed.*"
                                                   r"population.data_home=.*population.path"):
        load_covtype(data_home=str(tmp_path))
