"""The batch queue orders come from one table in the core (``ORDERS``,
``crates/parsched-core/src/policy/batch/order.rs``): the schema's choices of
``order`` and ``backfill_order``, the CLI help and the orders page all list
every row of ``_core.queue_orders()``."""

from __future__ import annotations

import pathlib

from conftest import needs_core, run_cli

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _choices(key: str) -> list[str]:
    from parsched import _core

    (info,) = [k for k in _core.schema("batch") if k["key"] == key]
    return info["choices"]


@needs_core
def test_every_queue_order_is_a_choice_documented_and_in_the_help():
    from parsched import _core

    rows = _core.queue_orders()
    names = [r["name"] for r in rows]
    assert len(names) == len(set(names)) >= 12
    assert {"fcfs", "sjf", "wfp3", "f4", "multifactor"} <= set(names)
    assert _choices("order") == names
    stateless = [r["name"] for r in rows if r["backfill"]]
    assert _choices("backfill_order") == ["priority", *stateless]
    assert [r["name"] for r in rows if r["stateful"]] == ["multifactor"]
    page = (ROOT / "docs" / "policies" / "batch-orders.md").read_text()
    help_text = run_cli("simulate", "batch", "--help").stdout
    flat_help = " ".join(help_text.split())
    for r in rows:
        assert f"| `{r['name']}` | {r['formula']} |" in page, r["name"]
        assert r["doc"] and r["source"], r
        assert r["name"] in flat_help, r["name"]
