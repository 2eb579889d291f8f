"""Every process the engine starts: worker pools (joblib's loky, forked workers, dask), their
warm-up, loading the report's libraries while the workers compute, and the forked children that
save figures. Nothing outside this package starts a process or a thread."""
