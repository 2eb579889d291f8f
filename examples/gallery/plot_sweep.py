"""
A sweep and its collected figures
=================================

``simstudy -m`` (Hydra's multirun) runs one study per combination of settings, each into its own
run directory; ``simstudy-collect`` merges them into one table with a column per swept setting
and draws the study's collected figures. Here: the CV t-test on residuals drawn with a known
between-block correlation rho (``population=gaussian_folds``, no learner), for three values of
rho, where Proposition 2 of Grandvalet & Bengio holds exactly.
"""

# %%
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from simstudy.sweeps import collect

sweep_dir = Path(tempfile.mkdtemp()) / "rho"
command = [sys.executable, "-m", "simstudy.cli", "-m", "population=gaussian_folds", "population.rho=0,0.3,0.6",
           "study.sizes=[20,40]", "study.replicates=300", "runner.n_jobs=1", "runner.progress=false",
           f"hydra.sweep.dir={sweep_dir}"]
print(" ".join(command[1:]).replace("-m simstudy.cli", "simstudy"))
finished = subprocess.run(command, check=True, capture_output=True, text=True)

# %%
# ``simstudy-collect multirun/rho`` does the same from the command line.
collected = collect(sweep_dir)
collected.summary[["population.rho", "n", "rho", "rho_se"]]

# %%
# The collected figure: the measured rho against n, one line per swept value.
figure_file = sweep_dir / "collected_figures" / "rho_vs_n.png"
image = mpimg.imread(figure_file)
fig = plt.figure(figsize=(8, 8 * image.shape[0] / image.shape[1]))
ax = fig.add_axes([0, 0, 1, 1])
ax.imshow(image)
ax.set_axis_off()
