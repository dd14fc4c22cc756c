"""One answer for "what is this value?" in a mistake, though two layers word it.

rules/ imports only the standard library and drivers/ nothing of rules/, so each has its
own `describe_value` (rules.config for the tables' settings, drivers.transports.errors for
the transports'); a setting typed wrong reads the same whichever layer refuses it. This
test holds the two to one answer for every value a TOML file can hold, and a few others.
"""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from drivers.transports.errors import describe_value as drivers_describe
from rules.config import describe_value as rules_describe

_SCALARS = (
    st.booleans()
    | st.integers()
    | st.integers(min_value=10**14, max_value=10**40)
    | st.floats()
    | st.text()
    | st.dates()
    | st.datetimes()
    | st.times()
    | st.none()
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(_VALUES, st.booleans())
def test_both_layers_describe_every_value_alike(value: object, show: bool) -> None:  # noqa: FBT001 - a drawn value
    assert drivers_describe(value, show=show) == rules_describe(value, show=show)


def test_the_words_a_person_reads() -> None:
    """Independent of either copy: what a few mistakes look like."""
    for describe in (drivers_describe, rules_describe):
        assert describe("7") == "a string ('7')"
        assert describe(True) == "a boolean (true)"
        assert describe(10**20) == "a whole number (more than 15 digits)"
        assert describe("x" * 50) == f"a string ('{'x' * 37}...')"
        assert describe([1, 2]) == "an array"
        assert describe({"a": 1}) == "a table"
        assert describe(dt.date(2026, 12, 1)) == "a date or time (2026-12-01)"
        assert describe(4800, show=False) == "a whole number"
        assert describe(None) == "a NoneType (None)"  # never in TOML: named as Python has it
