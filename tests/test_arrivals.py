"""The arrivals CSV loader: good files and one-line errors naming line and field."""

from __future__ import annotations

import pytest

from parsched import ConfigError, load_arrivals


def write(tmp_path, text, name="jobs.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_loads_two_and_three_columns(tmp_path):
    a = load_arrivals(write(tmp_path, "arrival,d\n0,1\n0,3\n2.5,60\n"))
    assert a.arrival == (0.0, 0.0, 2.5) and a.d == (1, 3, 60) and a.para_work is None
    b = load_arrivals(write(tmp_path, "# comment\narrival, d, para_work\n\n1,2,150\n4,4,400.5\n"))
    assert b.d == (2, 4) and b.para_work == (150.0, 400.5)
    assert b.to_dict() == {"arrival": [1.0, 4.0], "d": [2, 4], "para_work": [150.0, 400.5]}


@pytest.mark.parametrize(
    ("text", "field", "line"),
    [
        ("time,d\n0,1\n", "arrivals", 1),             # bad header
        ("arrival,d\n0,1\nx,2\n", "arrival", 3),       # not a number
        ("arrival,d\n0,1\n1,two\n", "d", 3),           # not an integer
        ("arrival,d\n0,1\n1,2.5\n", "d", 3),           # not an integer
        ("arrival,d\n0,1\n1,0\n", "d", 3),             # below 1
        ("arrival,d\n0,1\n1,61\n", "d", 3),            # above P
        ("arrival,d\n5,1\n4,2\n", "arrival", 3),       # decreasing
        ("arrival,d\n-1,1\n", "arrival", 2),           # negative
        ("arrival,d\n0,1\n1,2,3\n", "arrivals", 3),    # wrong field count
        ("arrival,d,para_work\n0,1,0\n", "para_work", 2),
        ("arrival,d,para_work\n0,1,inf\n", "para_work", 2),
    ],
)
def test_errors_name_line_and_field(tmp_path, text, field, line):
    with pytest.raises(ConfigError) as ei:
        load_arrivals(write(tmp_path, text), P=60)
    msg = str(ei.value)
    assert msg.startswith(f"{field}: "), msg
    assert f"line {line}" in msg and "jobs.csv" in msg
    assert "\n" not in msg


@pytest.mark.parametrize("text", ["", "arrival,d\n", "\n\n# only a comment\n"])
def test_empty_files(tmp_path, text):
    with pytest.raises(ConfigError, match=r"^arrivals: "):
        load_arrivals(write(tmp_path, text))


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match=r"^arrivals: cannot read .*nope\.csv"):
        load_arrivals(tmp_path / "nope.csv")


def test_not_utf8(tmp_path):
    p = tmp_path / "bin.csv"
    p.write_bytes(b"arrival,d\n\xff\xfe,1\n")
    with pytest.raises(ConfigError, match=r"^arrivals: "):
        load_arrivals(p)
