#!/usr/bin/env python3
# %% [markdown]
# # mallocbench from Python
#
# A notebook-style walk through the Python API (docs/python.md): each `# %%` cell runs as it
# stands in Jupyter, or the whole file as a script, which `make test` does
# (tests/integration/test_api.py):
#
#     PYTHONPATH=scripts python3 docs/examples/api.py RUN.csv [MALLOCBENCH]
#
# RUN.csv is any run of `mallocbench run` (tests/fixtures/small-run.csv will do);
# MALLOCBENCH, the harness, is needed only by the last cell, which measures a region.

# %%
import os
import subprocess
import sys
import tempfile

import mallocbench

CSV = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/small-run.csv"
HARNESS = sys.argv[2] if len(sys.argv) > 2 else None

# %% [markdown]
# ## A run, as the data layer reads it
# `load` checks every row against the schema (a malformed CSV is one `CsvError` naming file and
# row) and reads the sidecars: configurations in the run's order, the workloads' traits.

# %%
run = mallocbench.load(CSV)
print(f"{len(run.rows)} samples, {len(run.ok)} ok; configurations: {', '.join(run.config_order)}")

# %% [markdown]
# ## The same comparison as `mallocbench compare --json`
# One record per configuration, workload and metric against the baseline (the run's first
# configuration): the paired estimate, its CI and the verdict every view prints for that pair.

# %%
res = mallocbench.compare(run, metrics=["throughput", "faults"])
assert res["schema"] == "mallocbench-compare/1"
for cell in res["cells"]:
    if cell["metric"] == "throughput" and not cell["geomean"]:
        print(f"{cell['workload']:12} {cell['config']:28} {cell['text']:>9} {cell['verdict']}")

# %% [markdown]
# ## As a pandas DataFrame
# One row per sample, numbers as floats, with the unit of work each count is per
# (`python3-pandas`; without it, an ImportError naming the package).

# %%
try:
    df = run.to_pandas()
except ImportError as e:
    print(f"no DataFrame: {e}")
else:
    ok = df[df.status == "ok"]
    per = ok.assign(faults_per_work=ok.region_minor_faults / ok.work)
    print(per.groupby(["workload", "config"]).faults_per_work.median().round(1).head(10))

# %% [markdown]
# ## Marking the measured region of your own program
# `with mallocbench.region():` brackets the work `mallocbench exec` measures; outside the
# harness it does nothing. Regions do not nest.

# %%
with mallocbench.region():
    sum(range(1000))  # run by hand: nothing is measured, nothing fails
try:
    with mallocbench.region():
        with mallocbench.region():
            pass
except mallocbench.RegionError as e:
    print(f"nested: {e}")

# %%
if HARNESS:
    program = ("import time, mallocbench\n"
               "time.sleep(0.3)\n"                       # set-up, not measured
               "with mallocbench.region():\n"
               "    b = [bytearray(1 << 20) for _ in range(64)]\n")
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "prog.py")
        with open(prog, "w") as f:
            f.write(program)
        out = os.path.join(tmp, "region.csv")
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(mallocbench.__file__)))
        subprocess.run([HARNESS, "exec", "-q", "-a", "glibc", "-r", "1", "--warmup-runs", "0", "--no-limit",
                        "-o", out, "--", sys.executable, prog], check=True, env=env)
        row = mallocbench.load(out).ok[0]
        region, whole = float(row["region_wall_s"]), float(row["total_wall_s"])
        print(f"measured region {region:.2f} s of a {whole:.2f} s run")
        assert region < whole - 0.25, "the region leaves the set-up out"
