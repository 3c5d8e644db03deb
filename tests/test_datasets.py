"""The workload logs that come with parsched (issue 27): each loads by name
with the job count its provenance states; names work wherever a trace does;
`parsched datasets` lists them."""

from __future__ import annotations

import json

import pytest

import parsched
from conftest import needs_core, run_cli
from parsched import TraceError
from parsched.datasets import DATASETS, names, path, resolve

pytestmark = needs_core


@pytest.mark.parametrize("name", names())
def test_each_bundled_log_loads_by_name_with_its_stated_records(name):
    r = parsched.simulate_batch(name)
    assert r.records == DATASETS[name].jobs
    assert r.summary["procs"] == DATASETS[name].procs
    assert path(name).endswith(DATASETS[name].file)
    assert resolve(DATASETS[name].file) == path(name)


def test_names_work_where_a_trace_does_and_bad_names_list_the_choices(tmp_path):
    r = run_cli("simulate", "batch", "--trace", "hpc2n-subset", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["jobs"] == 3145
    with pytest.raises(TraceError, match="bundled logs: kth-sp2, nasa-ipsc"):
        parsched.simulate_batch("kth")
    listed = run_cli("datasets", "--json")
    assert listed.returncode == 0
    assert [d["name"] for d in json.loads(listed.stdout)] == names()
    table = run_cli("datasets")
    assert "kth-sp2" in table.stdout and "Parallel Workloads Archive" in table.stdout
    pytest.importorskip("gymnasium")
    from parsched.gym import BatchEnv

    env = BatchEnv("lublin-256", episode_jobs=64)
    obs, _ = env.reset(seed=0)
    assert obs["jobs"].shape[1] == 10
