"""A stored product's status read by lookup, differential against the enum's own call."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from domain.enums import ProductStatus
from services.products.items import product_status

_VALUES = st.one_of(
    st.sampled_from([member.value for member in ProductStatus]),
    st.sampled_from(list(ProductStatus)),
    st.text(max_size=12),
    st.none(),
    st.integers(),
    st.lists(st.text(max_size=3), max_size=2),
)


def _outcome(read: Any, value: object) -> object:
    try:
        return read(value)
    except Exception as error:  # the very exception is the behaviour
        return type(error)


@given(_VALUES)
def test_product_status_reads_as_the_enum_does(value: object) -> None:
    expected = _outcome(ProductStatus, value)
    actual = _outcome(lambda v: product_status({"status": v}), value)
    assert actual == expected
    assert type(actual) is type(expected)
