"""``examples/studies.ipynb`` runs end to end (nbclient) and is committed with
its outputs stripped."""

from __future__ import annotations

import json
import os
import time

import pytest

from conftest import needs_core

NOTEBOOK = os.path.join(os.path.dirname(__file__), "..", "examples", "studies.ipynb")


def test_notebook_is_committed_without_outputs():
    with open(NOTEBOOK, encoding="utf-8") as fh:
        nb = json.load(fh)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    md = " ".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for study in ("Processor pools", "Gang scheduling", "Batch scheduling"):
        assert study in md


@needs_core
@pytest.mark.slow
def test_notebook_runs_end_to_end():
    nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (make develop)")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (make develop)")
    pytest.importorskip("ipykernel", reason="ipykernel is not installed (make develop)")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    start = time.perf_counter()
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": os.path.dirname(NOTEBOOK)}})
    client.execute()  # raises CellExecutionError on any failing cell
    elapsed = time.perf_counter() - start
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = " ".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "all three studies:" in text
    # the figures and the tables were produced
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    tables = [o for o in outputs if "text/html" in o.get("data", {})]
    assert len(images) >= 6 and len(tables) >= 3
    assert elapsed < 90, elapsed


BATCH_NOTEBOOK = os.path.join(os.path.dirname(__file__), "..", "examples",
                              "batch_policies.ipynb")


def test_batch_notebook_is_committed_without_outputs():
    with open(BATCH_NOTEBOOK, encoding="utf-8") as fh:
        nb = json.load(fh)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)


@needs_core
@pytest.mark.slow
def test_batch_notebook_trains_and_compares_on_a_real_trace():
    nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (make develop)")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (make develop)")
    pytest.importorskip("ipykernel", reason="ipykernel is not installed (make develop)")
    pytest.importorskip("gymnasium", reason="gymnasium is not installed (make develop)")
    from parsched.reproduce.batch import default_traces_dir

    if not os.path.exists(os.path.join(default_traces_dir(), "KTH-SP2-1996-2.1-cln.swf.gz")):
        pytest.skip("../shared/traces is not available")
    nb = nbformat.read(BATCH_NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": os.path.dirname(
                                         BATCH_NOTEBOOK)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = " ".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "batch policies notebook: done" in text and "iteration 14" in text
    plain = " ".join(o.get("data", {}).get("text/plain", "") for o in outputs)
    for row in ("EASY-fcfs", "EASY-sjf", "learned (linear, CEM)", "multifactor", "wfp2"):
        assert row in plain or row in text, row
    assert [o for o in outputs if "image/png" in o.get("data", {})]
