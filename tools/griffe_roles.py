"""A griffe extension for the documentation site (``mkdocs.yml``): the
package's docstrings use Sphinx roles (``:class:`~parsched.sim.result.SimResult```,
``:func:`simulate_pools```), which Markdown would show as written; each role
becomes inline code of the name it shows (the last component after ``~``)."""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const):`(~?)([^`]+)`")


def _name(m: re.Match[str]) -> str:
    target = m.group(2)
    return f"`{target.rsplit('.', 1)[-1]}`" if m.group(1) else f"`{target}`"


def plain_roles(text: str) -> str:
    """``text`` with every Sphinx cross-reference role turned into inline code."""
    return ROLE.sub(_name, text)


class SphinxRoles(Extension):
    def on_object(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = plain_roles(obj.docstring.value)
