"""``parsched report``: :mod:`~parsched.report.html` builds one self-contained HTML page
from the ``reproduce`` outputs; :mod:`~parsched.display` holds the Markdown-table,
number-formatting and JSON helpers the ``reproduce`` commands share."""
