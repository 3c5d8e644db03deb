"""Plot writers: gang slots drawn apart (Gantt lanes, utilization per slot,
never over P), the format chosen by the extension, the Gantt window from the
command line, readable log ticks."""

from __future__ import annotations

import numpy as np
import pytest

import parsched
from conftest import needs_core, one_error_line
from parsched.errors import ConfigError
from parsched.sim.batch import parse_intervals

MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".svg": b"<?xml", ".pdf": b"%PDF"}


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("trace") / "lublin_64.swf"
    parsched.generate_lublin(path, procs=64, jobs=400, load=0.95, seed=5, include_types=False)
    return path


@pytest.fixture(scope="module")
def gang(trace):
    return parsched.simulate_batch(trace, parsched.BatchConfig(policy="gang", mpl=3))


@needs_core
def test_gang_slots_are_the_matrix_slots(gang):
    slots = gang.slot_lanes()
    assert len(slots) == len(gang.jobs) and slots.min() == 0
    assert slots.max() <= 2 and len(set(slots)) > 1  # mpl 3, and more than one used
    # jobs of one slot never hold a processor at the same time
    j = gang.jobs
    start, end = j["starting_time"].to_numpy(), j["finish_time"].to_numpy()
    procs = [{p for a, b in parse_intervals(x) for p in range(a, b + 1)}
             for x in j["allocated_resources"]]
    for s in set(slots):
        idx = np.flatnonzero(slots == s)
        for a in range(len(idx)):
            for b in range(a + 1, len(idx)):
                i, k = idx[a], idx[b]
                if start[i] < end[k] and start[k] < end[i]:
                    assert not procs[i] & procs[k], (i, k)
    # space sharing: one slot
    easy = parsched.simulate_batch(gang.config.with_(policy="easy"))
    assert (easy.slot_lanes() == 0).all()


@needs_core
def test_busy_by_slot_never_over_p(gang):
    P = int(gang.summary["procs"])
    by = gang.busy_by_slot()
    slots = [c for c in by.columns if c.startswith("slot ")]
    assert len(slots) == gang.slot_lanes().max() + 1
    assert (by[slots].to_numpy() <= P).all() and (by[slots].to_numpy() >= 0).all()
    assert (by["in_use"] <= P).all()
    # all slots added up pass P: the old single curve would have
    assert by[slots].sum(axis=1).max() > P
    busy = gang.busy()
    assert list(by["time"]) == list(busy["time"])
    assert np.allclose(by[slots].sum(axis=1), busy["busy"])


@needs_core
@pytest.mark.parametrize("ext", [".png", ".svg", ".pdf"])
def test_every_writer_follows_the_extension(gang, tmp_path, ext):
    for name, write in (("gantt", gang.plot_gantt), ("util", gang.plot_utilization)):
        path = tmp_path / f"{name}{ext}"
        write(path)
        assert path.read_bytes()[:len(MAGIC[ext])] == MAGIC[ext], path
    # the reproductions' writers share the helper
    from parsched.display import pyplot, save_figure

    plt = pyplot()
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    save_figure(fig, str(tmp_path / f"f{ext}"))
    plt.close(fig)
    assert (tmp_path / f"f{ext}").read_bytes()[:len(MAGIC[ext])] == MAGIC[ext]
    with pytest.raises(ConfigError):
        gang.plot_gantt(tmp_path / "g.jpg")


@needs_core
def test_svg_is_reproducible(gang, tmp_path):
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    gang.plot_gantt(a)
    gang.plot_gantt(b)
    assert a.read_bytes() == b.read_bytes()


@needs_core
def test_cli_gantt_window(trace, tmp_path, capsys):
    from parsched.cli import main

    out = tmp_path / "g.svg"
    assert main(["simulate", "batch", "--trace", str(trace), "--set", "policy=gang",
                 "--gantt", str(out), "--gantt-window", "1000:90000", "--utilization",
                 str(tmp_path / "u.pdf")]) == 0
    svg = out.read_text()
    assert "window [1000, 90000] s" in svg and "slot 0" in svg
    assert (tmp_path / "u.pdf").read_bytes()[:4] == b"%PDF"
    capsys.readouterr()
    for bad in ("90000:1000", "abc", "1:2:3"):
        assert main(["simulate", "batch", "--trace", str(trace), "--gantt", str(out),
                     f"--gantt-window={bad}"]) == 2
        assert "START:END" in one_error_line(capsys.readouterr().err)
    assert main(["simulate", "batch", "--trace", str(trace), "--gantt-window", "0:10"]) == 2
    assert "--gantt" in one_error_line(capsys.readouterr().err)
    assert main(["simulate", "batch", "--trace", str(trace), "--gantt",
                 str(tmp_path / "g.gif")]) == 2
    assert "extension" in one_error_line(capsys.readouterr().err)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".parsched")]


@pytest.mark.parametrize("lim", [(0.95, 1.05), (0.5, 5.2), (0.04, 300.0), (1.0, 1.3)])
def test_log_ticks_are_readable(lim):
    from parsched.display import log_ticks, pyplot

    plt = pyplot()
    fig, ax = plt.subplots()
    ax.set_yscale("log")
    ax.set_ylim(*lim)
    log_ticks(ax, "y")
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels()
              if t.get_text() and lim[0] <= t.get_position()[1] <= lim[1]]
    plt.close(fig)
    assert 3 <= len(labels) <= 8, labels
    assert not any("10^" in s or "$" in s for s in labels)
