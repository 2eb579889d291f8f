"""Populations: the logistic model's Bayes error, tabular loading, binarisation, sampling."""
import gzip
import hashlib
import io
import json

import joblib
import numpy as np
import pytest
from scipy import special, stats

from simstudy.populations import (
    DataUnavailableError,
    LogisticPopulation,
    TabularPopulation,
    binarize,
    build_population,
    load_openml,
    load_table_file,
)
from simstudy.populations.synthetic import logistic_alpha_for_bayes_error, logistic_bayes_error

from conftest import LETTER_FILE, make_letter_like


# ------------------------------------------------------------------ logistic model
def test_bayes_error_limits_and_hand_value():
    assert logistic_bayes_error(0.0) == pytest.approx(0.5, abs=1e-12)
    assert logistic_bayes_error(1e4) < 1e-3
    # independent computation: composite Simpson rule of E[min(p, 1-p)] over u = s / sqrt(2) ~ N(0, 1)
    u = np.linspace(0.0, 12.0, 200_001)
    f = 2 * special.expit(-1.3 * np.sqrt(2) * u) * stats.norm.pdf(u)
    from scipy.integrate import simpson
    assert logistic_bayes_error(1.3) == pytest.approx(simpson(f, x=u), abs=1e-10)


@pytest.mark.parametrize("target", [0.05, 0.2, 0.45])
def test_alpha_solves_target(target):
    alpha = logistic_alpha_for_bayes_error(target)
    assert logistic_bayes_error(alpha) == pytest.approx(target, abs=1e-10)


def test_bayes_error_against_a_million_points():
    """The Bayes rule sign(x1 + x2) errs with probability R0: binomial test on 10^6 draws."""
    pop = LogisticPopulation(bayes_error=0.15)
    sample = pop.sample(1_000_000, np.random.default_rng(11))
    errors = int(np.sum((sample.X.sum(axis=1) > 0).astype(int) != sample.y))
    assert stats.binomtest(errors, 1_000_000, 0.15).pvalue > 1e-3


@pytest.mark.parametrize("bad", [0.0, 0.5, -0.1])
def test_bayes_error_out_of_range(bad):
    with pytest.raises(ValueError, match="population.bayes_error"):
        LogisticPopulation(bayes_error=bad)


# ------------------------------------------------------------------ files
def test_uci_file_class_first(letter_like_file):
    path, X, y = letter_like_file
    Xl, yl = load_table_file(path)
    np.testing.assert_array_equal(Xl, X)
    np.testing.assert_array_equal(yl, y)


def test_csv_with_header_class_last(tmp_path):
    X, y = make_letter_like(50)
    lines = [",".join([f"f{i}" for i in range(16)] + ["class"])]
    lines += [",".join([str(v) for v in row] + [c]) for c, row in zip(y, X)]
    path = tmp_path / "letter.csv"
    path.write_text("\n".join(lines))
    Xl, yl = load_table_file(path)
    np.testing.assert_array_equal(Xl, X)
    np.testing.assert_array_equal(yl, y)


def test_numeric_classes_default_to_last_column_and_gzip(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 5, (30, 4))
    y = rng.integers(1, 8, 30)
    path = tmp_path / "covtype-like.data.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("\n".join(",".join(map(str, list(r) + [c])) for r, c in zip(X, y)))
    Xl, yl = load_table_file(path)
    np.testing.assert_array_equal(Xl, X)
    np.testing.assert_array_equal(yl, y.astype(str))
    Xf, yf = load_table_file(path, label_column="first")
    np.testing.assert_array_equal(yf, X[:, 0].astype(str))


def test_missing_file_says_how_to_fix(tmp_path):
    with pytest.raises(DataUnavailableError, match="population.path"):
        load_table_file(tmp_path / "nope.data")


def test_real_letter_file_if_available():
    if not LETTER_FILE.exists():
        pytest.skip("shared Letter data not present")
    pop = build_population({"kind": "tabular", "name": "letter", "path": str(LETTER_FILE),
                            "positive": list("ABCDEFGHIJKLM")})
    assert pop.X.shape == (20000, 16)
    assert np.mean(pop.y) == pytest.approx(0.497, abs=5e-4)  # 49.7% positive (STUDIES.md)


# ------------------------------------------------------------------ binarisation
def test_binarize():
    labels = np.array(["A", "N", "B", "Z"])
    np.testing.assert_array_equal(binarize(labels, ["A", "B"]), [1, 0, 1, 0])
    np.testing.assert_array_equal(binarize(labels, None), [0, 2, 1, 3])
    with pytest.raises(ValueError, match="population.positive=.*positive class empty"):
        binarize(labels, ["Q"])
    with pytest.raises(ValueError, match="negative class empty"):
        binarize(labels, ["A", "B", "N", "Z"])


# ------------------------------------------------------------------ sampling
def test_sampling_with_replacement_is_uniform():
    N = 20
    pop = TabularPopulation(np.arange(N)[:, None].astype(float), np.arange(N) % 2)
    rng = np.random.default_rng(0)
    index = np.concatenate([pop.sample(50, rng).index for _ in range(400)])
    counts = np.bincount(index, minlength=N)
    assert stats.chisquare(counts).pvalue > 1e-3
    # with replacement, duplicates occur within a sample of size > N
    assert len(np.unique(pop.sample(40, rng).index)) < 40


def test_sampling_without_replacement():
    pop = TabularPopulation(np.zeros((30, 2)), np.arange(30) % 2, replace=False)
    s = pop.sample(30, np.random.default_rng(1))
    assert sorted(s.index) == list(range(30))
    with pytest.raises(ValueError, match="population.replace=true"):
        pop.sample(31, np.random.default_rng(1))


def test_exact_error_is_error_on_whole_data():
    X = np.arange(10, dtype=float)[:, None]
    y = (np.arange(10) >= 5).astype(int)
    pop = TabularPopulation(X, y)
    assert pop.exact_error(lambda Z: (Z[:, 0] >= 4).astype(int)) == pytest.approx(0.1)
    assert pop.exact_error(lambda Z: np.full(len(Z), Z.dtype == np.float32), dtype=np.float32) == 0.5


# ------------------------------------------------------------------ OpenML (network layer faked)
class _FakeResponse(io.BytesIO):
    def info(self):
        return {}


def _fake_openml(monkeypatch, data_id, X, y, numeric_target=False):
    """Serve a tiny data set through sklearn's OpenML client, replacing only urlopen (a nominal
    class, or with ``numeric_target`` a real-valued target)."""
    import sklearn.datasets._openml as openml_module

    arff = ["@RELATION letter", ""]
    arff += [f"@ATTRIBUTE x{i} NUMERIC" for i in range(X.shape[1])]
    arff += ["@ATTRIBUTE class NUMERIC" if numeric_target else "@ATTRIBUTE class {" + ",".join(sorted(set(y))) + "}",
             "", "@DATA"]
    arff += [",".join([str(v) for v in row] + [c]) for row, c in zip(X, y)]
    arff_bytes = ("\n".join(arff) + "\n").encode()
    file_id = 1234
    description = {"data_set_description": {
        "id": str(data_id), "name": "letter", "version": "1", "format": "ARFF", "description": "fake",
        "url": f"https://api.openml.org/data/v1/download/{file_id}/letter.arff",
        "file_id": str(file_id), "default_target_attribute": "class", "status": "active",
        "md5_checksum": hashlib.md5(arff_bytes).hexdigest()}}
    features = {"data_features": {"feature": [
        {"index": str(i), "name": f"x{i}", "data_type": "numeric", "is_target": "false",
         "is_ignore": "false", "is_row_identifier": "false", "number_of_missing_values": "0"}
        for i in range(X.shape[1])] + [
        {"index": str(X.shape[1]), "name": "class", "data_type": "numeric" if numeric_target else "nominal",
         **({} if numeric_target else {"nominal_value": sorted(set(y))}), "is_target": "true", "is_ignore": "false",
         "is_row_identifier": "false", "number_of_missing_values": "0"}]}}
    qualities = {"data_qualities": {"quality": [{"name": "NumberOfInstances", "value": str(len(y))}]}}
    requested = []

    def fake_urlopen(request, *args, **kwargs):
        url = request.get_full_url()
        requested.append(url)
        if "/download/" in url:
            return _FakeResponse(arff_bytes)
        if "/data/features/" in url:
            return _FakeResponse(json.dumps(features).encode())
        if "/data/qualities/" in url:
            return _FakeResponse(json.dumps(qualities).encode())
        if url.rstrip("/").endswith(f"/data/{data_id}"):
            return _FakeResponse(json.dumps(description).encode())
        raise AssertionError(f"unexpected URL {url}")

    monkeypatch.setattr(openml_module, "urlopen", fake_urlopen)
    return requested


def test_openml_letter_through_fetch_openml(monkeypatch, tmp_path):
    X, y = make_letter_like(120)
    requested = _fake_openml(monkeypatch, 6, X, y)
    pop = build_population({"kind": "tabular", "name": "letter", "source": "openml", "openml_id": 6,
                            "data_home": str(tmp_path), "positive": list("ABCDEFGHIJKLM")})
    np.testing.assert_array_equal(pop.X, X)
    np.testing.assert_array_equal(pop.y, np.isin(y, list("ABCDEFGHIJKLM")).astype(int))
    assert any("/download/" in u for u in requested)
    # second load comes from the cache under data_home: no network at all
    monkeypatch.setattr("sklearn.datasets._openml.urlopen", None)
    X2, y2 = load_openml(6, data_home=str(tmp_path))
    np.testing.assert_array_equal(X2, X)


def test_openml_without_network_names_the_way_out(monkeypatch, tmp_path):
    from urllib.error import URLError

    def offline(*a, **k):
        raise URLError("no network")

    monkeypatch.setattr("sklearn.datasets._openml.urlopen", offline)
    monkeypatch.setattr("sklearn.datasets._openml._retry_on_network_error",
                        lambda *a, **k: (lambda f: f))
    with pytest.raises(DataUnavailableError, match="population.path"):
        load_openml(6, data_home=str(tmp_path))


# ------------------------------------------------------------------ CoverType (cache pre-filled)
def test_covtype_via_sklearn_fetcher_cache(tmp_path):
    """fetch_covtype reads its cache when present; we fill it with small data."""
    rng = np.random.default_rng(4)
    X = rng.integers(0, 50, (60, 54)).astype(float)
    y = rng.integers(1, 8, 60)
    y[:2] = [2, 1]
    cache = tmp_path / "covertype"
    cache.mkdir()
    joblib.dump(X, cache / "samples_py3")
    joblib.dump(y, cache / "targets_py3")
    pop = build_population({"kind": "tabular", "name": "forest", "source": "covtype",
                            "data_home": str(tmp_path), "positive": ["2"]})
    np.testing.assert_array_equal(pop.X, X)
    np.testing.assert_array_equal(pop.y, (y == 2).astype(int))


def test_a_mapping_may_name_a_preset_instead_of_a_kind(letter_like_file):
    """{"name": "letter", ...} and {"kind": "letter", ...} are the letter preset with overrides
    (as population=letter population.path=... on the command line); a mapping with neither a
    kind nor a preset name, or an unknown one, is refused naming the field."""
    from simstudy.errors import ConfigError
    from simstudy.populations import build_population, expand_preset

    path = str(letter_like_file[0])
    for spec in ({"name": "letter", "path": path}, {"kind": "letter", "path": path}):
        cfg = expand_preset(spec)
        assert cfg["kind"] == "tabular" and cfg["path"] == path and cfg["positive"]
        assert build_population(spec).name == "letter"
    assert expand_preset({"kind": "logistic", "bayes_error": 0.1}) == {"kind": "logistic", "bayes_error": 0.1}
    with pytest.raises(ConfigError, match="population.kind is missing"):
        expand_preset({"path": "x"})
    with pytest.raises(ConfigError, match=r"population.kind='lettre' is invalid: choose a kind .* or a preset"):
        expand_preset({"kind": "lettre"})
    with pytest.raises(ConfigError, match=r"population.name='mine' names no preset"):
        expand_preset({"name": "mine", "path": "x"})
