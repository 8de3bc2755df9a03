"""mallocbench - the Python half of mallocbench: everything that reads the harness's CSV.

The harness (`mallocbench`, C) measures and writes one CSV schema; these modules only read
it.  Each entry runs as `python3 -m mallocbench.MODULE ...`, as scripts/MODULE.py (a shim),
or through the harness (`mallocbench compare`, `report`, `tune`, `diagnose`, `run --profile`):

    summary     the tables of one or more runs            compare    paired statistics, verdicts
    report      a Markdown report with plots               plots      PNG/SVG figures
    tune        the tunables search of `mallocbench tune`  frameworks make frameworks' report
    history     the nightly history's store                detect     its change-point detector
    dashboard   the nightly dashboard as a static site     flamegraph perf.data to flame graphs
    diagnose    the words of `mallocbench diagnose`        k8s        a Kubernetes Job of a plan's shards
    thp         huge pages as a condition (`make thp`)

and what they share: change (the one estimator of a change and its cells) and words (every
figure as text, the one Markdown renderer), the middle layer; mbcsv (the schema and the strict
reader, the one sidecar reader), mbdata (the data layer: runs, the metric registry, params,
traits), machines (what a machine is: a boot of a host; its id and its kind), disturb (what
disturbed a sample from outside), sequential (the one rule by which a comparison stops sampling), programs (which program of the framework suite a row
measures), nightly (the
nightly history read: its machines, series and fleet series), stats (the estimators), mbout (how a file is written), cli (how an entry ends: modules raise cli.Fail,
only an entry's __main__ exits); region (a measured program's region, for the API below).
A view too large for one file has helpers, imported by it and each other alone: plots draws
through plotkit (the data, styles and drawing its figures share), plotbars (a bar figure per
group) and plotfigs (the figures across groups); tune through tunerun (a round's run, the
stop signals), tunesearch (the candidates, the racing, the journal) and tunereport (the
winner and tune.md).

The Python API (docs/python.md; a notebook-style example in docs/examples/api.py):

    import mallocbench
    run = mallocbench.load("results/run.csv")       # the data layer's Run (mbdata.Run)
    df = run.to_pandas()                            # one row per sample (python3-pandas)
    res = mallocbench.compare(run)                  # the records of `compare --json`
    with mallocbench.region():                      # the measured region of this program
        work()
"""
from .region import RegionError, region  # noqa: F401  (standard library only)


def load(paths):
    """One or more run CSVs (a path or a list) as the data layer's Run: .rows, .ok, .configs,
    .workloads, .groups, .to_pandas().  mbcsv.CsvError for input that is not a mallocbench CSV."""
    from . import mbdata
    return mbdata.load(paths)


def __getattr__(name):
    """mallocbench.compare: the module, loaded on first use (import mallocbench stays light for
    a measured program that only marks its region); calling it, mallocbench.compare(run), gives
    the records of `compare --json` (compare.api)."""
    if name == "compare":
        import importlib
        return importlib.import_module(".compare", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
