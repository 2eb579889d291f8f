"""Every config group composes and instantiates; bad input fails early with field, value, fix."""
from pathlib import Path

import pytest
from hydra.errors import ConfigCompositionException
from omegaconf.errors import ValidationError

from simstudy.cli.hydra import plan_from_config
from simstudy.errors import ConfigError
from simstudy.learners.dispatch import build_learner
from simstudy.populations import build_population
from simstudy.registry import LEARNERS, POPULATIONS

from conftest import validate

CONF = Path(__file__).resolve().parents[1] / "simstudy" / "conf"


def _options(group):
    """The options of a config group: registered parts, or the YAML presets of experiment/sweep."""
    registered = {"learner": LEARNERS, "population": POPULATIONS}
    if group in registered:
        return [name for name in registered[group] if name != "custom"]
    if group == "runner":
        return ["default", "loky", "fork", "threading", "sequential", "dask"]  # config.register_configs
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


def validate_config(cfg):
    """The field checks the CLI runs before anything is loaded."""
    return plan_from_config(cfg)


@pytest.mark.parametrize("learner", _options("learner"))
def test_every_learner_composes_validates_and_instantiates(compose_config, learner):
    cfg = compose_config(f"learner={learner}")
    validate_config(cfg)
    assert build_learner(cfg.learner).name == cfg.learner.name


@pytest.mark.parametrize("population", _options("population"))
def test_every_population_composes(compose_config, population, letter_like_file):
    path = letter_like_file[0]
    overrides = [f"population={population}"]
    if population in ("letter", "forest", "tabular"):
        overrides.append(f"population.path={path}")
    if population in ("forest", "tabular"):
        overrides.append("population.positive=[A,B,C]")
    if population == "forest":
        overrides.append("population.label_column=first")
    if population == "packaged":
        overrides.append("population.dataset=iris")
    if population == "openml_task":
        pytest.skip("needs OpenML's API; tests/test_mechanisms.py composes it with the network layer faked")
    cfg = compose_config(*overrides)
    validate_config(cfg)
    pop = build_population(cfg.population)
    rng = __import__("numpy").random.default_rng(0)
    if population == "gaussian_folds":
        assert pop.residual_blocks(5, 2, rng).shape == (5, 2)
    else:
        assert pop.sample(10, rng).X.shape[0] == 10


@pytest.mark.parametrize("sweep", _options("sweep"))
def test_sweep_presets_compose(compose_config, sweep):
    cfg = compose_config(f"sweep={sweep}")
    validate_config(cfg)
    assert cfg.runner.progress is False


@pytest.mark.parametrize("runner", _options("runner"))
def test_every_runner_composes(compose_config, runner):
    validate_config(compose_config(f"runner={runner}"))


@pytest.mark.parametrize("experiment", _options("experiment"))
def test_every_experiment_composes(compose_config, experiment):
    cfg = compose_config(f"experiment={experiment}")
    validate_config(cfg)
    if experiment == "table2_letter":
        assert list(cfg.study.sizes) == [20, 40, 80, 160, 400, 800, 2000]
        assert cfg.study.replicates == 10000 and cfg.study.K == 10
        assert cfg.population.openml_id == 6
        assert cfg.learner.estimator._target_ == "sklearn.tree.DecisionTreeClassifier"


def test_documented_overrides_work(compose_config, tmp_path):
    cfg = compose_config("study.sizes=[20,400]", "study.replicates=2000", "study.K=10", "study.seed=7",
                         "population=letter", f"population.path={tmp_path}/x.data", "runner.n_jobs=2",
                         "runner.chunk_size=50")
    assert list(cfg.study.sizes) == [20, 400] and cfg.study.replicates == 2000 and cfg.study.seed == 7
    assert cfg.runner.n_jobs == 2 and cfg.runner.chunk_size == 50


@pytest.mark.parametrize("overrides,field", [
    (["study.K=1"], "study.K=1"),
    (["study.sizes=[20,5]", "study.K=10"], "study.sizes"),
    (["study.sizes=[10]"], "folds of 1 example"),
    (["study.replicates=2"], "study.replicates=2"),
    (["study.alpha=1.5"], "study.alpha=1.5"),
    (["study.rho_hats=[0,1.0]"], "study.rho_hats"),
    (["study.mu_true=exact"], "study.truth=true"),
    (["runner.backend=mpi"], "runner.backend='mpi'"),
    (["runner.chunk_size=0"], "runner.chunk_size=0"),
    (["runner.n_jobs=0"], "runner.n_jobs=0"),
    (["learner.estimator._target_=sklearn.tree.NoSuchTree"], "learner.estimator._target_"),
    (["+learner.estimator.max_depth=-3"], "learner.estimator"),
    (["population.bayes_error=0.7"], "population.bayes_error=0.7"),
])
def test_bad_values_fail_validation_with_field_and_fix(compose_config, overrides, field):
    cfg = compose_config(*overrides)
    with pytest.raises(ConfigError) as info:
        validate_config(cfg)
    assert field in str(info.value)


def test_a_regressor_on_a_classification_population_is_refused(compose_config):
    """Regressors are learners (regression studies), but not on a classification population."""
    with pytest.raises(ConfigError, match="regression learner.*classification problem"):
        validate(compose_config("learner.estimator._target_=sklearn.linear_model.LinearRegression"))


def test_unknown_group_option_and_misspelt_key_fail_at_composition(compose_config):
    with pytest.raises(ConfigCompositionException, match="population"):
        compose_config("population=nonexistent")
    with pytest.raises(ConfigCompositionException):
        compose_config("study.sizez=[20]")
    with pytest.raises((ConfigCompositionException, ValidationError)):
        compose_config("study.K=ten")


def test_missing_data_file_and_empty_class_fail_before_work(compose_config, tmp_path, letter_like_file):
    from simstudy.populations import DataUnavailableError

    cfg = compose_config("population=letter", f"population.path={tmp_path}/missing.data")
    validate_config(cfg)
    with pytest.raises(DataUnavailableError, match="population.path=.*no such file"):
        build_population(cfg.population)
    cfg = compose_config("population=letter", f"population.path={letter_like_file[0]}", "population.positive=[a]")
    with pytest.raises(ValueError, match="population.positive"):
        build_population(cfg.population)


@pytest.mark.parametrize("overrides,field", [
    (["experiment=nedelko_fisher", "study.sample_size=22"], "study.sample_size"),
    (["experiment=nedelko_fisher", "study.bayes_error=[0.1,0.6]"], "study.bayes_error"),
    (["experiment=nedelko_fisher", "study.K=1"], "study.K=1"),
    (["experiment=nedelko_fisher", "study.rhat_method=magic"], "study.rhat_method"),
    (["experiment=nedelko_fisher", "study.bootstrap=-1"], "study.bootstrap=-1"),
    (["experiment=nedelko_fisher", "study.rhat_calibration_replicates=10"], "study.rhat_calibration_replicates"),
    (["experiment=nedelko_histogram", "study.sample_size=13"], "study.sample_size"),
    (["experiment=nedelko_histogram", "study.sample_size=40"], "exact enumeration"),
    (["experiment=nedelko_histogram", "study.grid_steps=0"], "study.grid_steps"),
])
def test_nedelko_bad_values(compose_config, overrides, field):
    with pytest.raises(ConfigError) as info:
        validate_config(compose_config(*overrides))
    assert field in str(info.value)


def test_nedelko_scalar_and_list_overrides(compose_config):
    cfg = compose_config("experiment=nedelko_fisher", "study.sample_size=20", "study.bayes_error=[0.1,0.3]")
    validate_config(cfg)
    assert cfg.study.sample_size == 20 and list(cfg.study.bayes_error) == [0.1, 0.3]


def test_engine_numba_is_validated_by_the_same_rule_as_build_learner(compose_config):
    for learner in ("tree", "ridge", "lda"):
        cfg = compose_config(f"learner={learner}", "learner.engine=numba")
        validate_config(cfg)
        assert type(build_learner(cfg.learner)).__name__ != "SklearnLearner"
    with pytest.raises(ConfigError, match="learner.engine='numba'.*no fast kernel"):
        validate(compose_config("learner=knn", "learner.engine=numba"))  # k-NN's kernel needs a finite population


@pytest.mark.parametrize("preset", [""] + [f"{group}={name}" for group in ("experiment", "sweep", "runner")
                                         for name in _options(group)])
def test_no_preset_sets_hydra_mode(preset):
    """The command skips Hydra's composition that only reads ``hydra.mode``
    (``cli.mode_from_command_line``): right only while no config of simstudy's sets the mode."""
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra

    from simstudy.cli.hydra import register_configs

    register_configs()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_module(config_module="simstudy.conf", version_base="1.3"):
            cfg = compose(config_name="config", overrides=[preset] if preset else [], return_hydra_config=True)
    finally:
        GlobalHydra.instance().clear()
    assert cfg.hydra.mode is None


@pytest.mark.parametrize("argv, skipped", [
    (["study.replicates=10"], True),
    (["-m", "population=gaussian_folds"], True),
    (["hydra.mode=MULTIRUN"], False),
    (["+hydra.mode=RUN"], False),
    (["--config-dir", "my_conf"], False),
    (["-cd=my_conf"], False),
    (["hydra.searchpath=[file://x]"], False),
])
def test_hydras_mode_composition_is_skipped_only_when_nothing_can_set_the_mode(argv, skipped):
    from hydra._internal.hydra import Hydra

    from simstudy.cli.hydra import mode_from_command_line

    original = Hydra.get_mode
    with mode_from_command_line(argv):
        assert (Hydra.get_mode is not original) == skipped
    assert Hydra.get_mode is original
