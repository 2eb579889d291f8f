"""Which machine a benchmark record was measured on.

The machines the benchmarks run on change hardware from time to time (AMD Zen 2/3 with AVX2,
later Zen 5 with AVX-512), and timings are only comparable on the same hardware, so every record in ``results/benchmarks/`` carries the host name, the CPU's model name and
the target numba compiles its kernels for.
"""
from __future__ import annotations

import platform
from pathlib import Path


def _cpu_model() -> str:
    """The first ``model name`` of ``/proc/cpuinfo`` ("unknown" where there is none)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, str]:
    """``{"host", "cpu", "cpu_target"}``: the host name, the CPU's model name and LLVM's name
    for the host CPU (numba's code generation target, e.g. ``znver5``), to merge into a record."""
    try:
        import llvmlite.binding as llvm
        target = llvm.get_host_cpu_name()
    except Exception:  # llvmlite missing or unable to tell: the record still gets written
        target = "unknown"
    return {"host": platform.node(), "cpu": _cpu_model(), "cpu_target": target}
