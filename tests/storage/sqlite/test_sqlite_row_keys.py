"""``row_keys``'s shortcut for the common items (no key of an index, or both
as short text) against the plain checks it skips, kept here as the oracle."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from domain.errors import LimitExceeded
from storage.limits import PARTITION_KEY_MAX_BYTES, SORT_KEY_MAX_BYTES
from storage.sqlite._schema import row_keys
from storage.table import TABLE, IndexDefinition


def _reference_gsi_keys(item: dict[str, Any], index: IndexDefinition) -> tuple[Any, Any]:
    partition, sort = item.get(index.partition_key), item.get(index.sort_key)
    for attribute, value, limit in (
        (index.partition_key, partition, PARTITION_KEY_MAX_BYTES),
        (index.sort_key, sort, SORT_KEY_MAX_BYTES),
    ):
        if value is None and attribute not in item:
            continue
        if not isinstance(value, str) or not value:
            raise LimitExceeded(f"Key attribute {attribute} must be a non-empty string")
        if len(value.encode("utf-8")) > limit:
            raise LimitExceeded(f"Key attribute {attribute} is longer than {limit} bytes")
    if partition is None or sort is None:
        return None, None
    return partition, sort


def _reference(item: dict[str, Any]) -> list[Any]:
    keys: list[Any] = [item["PK"], item["SK"]]
    for index in TABLE.global_secondary:
        keys.extend(_reference_gsi_keys(item, index))
    return keys


def _outcome(function: Any, item: dict[str, Any]) -> tuple[str, Any]:
    try:
        return "keys", list(function(item))
    except LimitExceeded as error:
        return "refused", error.message


_GSI_ATTRIBUTES = [a for i in TABLE.global_secondary for a in (i.partition_key, i.sort_key)]
_VALUES = st.one_of(
    st.none(),
    st.integers(0, 3),
    st.text(max_size=4),
    # Lengths either side of the shortcut's bound and of the byte limits.
    st.builds(
        lambda c, n: c * n,
        st.sampled_from(["a", "é", "😀"]),
        st.sampled_from([255, 256, 257, 511, 512, 513, 1024, 1025, 2048, 2049]),
    ),
)


@given(st.dictionaries(st.sampled_from(_GSI_ATTRIBUTES), _VALUES, max_size=4))
def test_row_keys_agree_with_the_plain_checks(keys: dict[str, Any]) -> None:
    item = {"PK": "P#1", "SK": "S", "other": 1, **keys}
    assert _outcome(row_keys, item) == _outcome(_reference, item)


def test_the_common_items_keep_their_keys() -> None:
    assert row_keys({"PK": "P", "SK": "S", "n": 1}) == ["P", "S", None, None, None, None]
    outbox = {"PK": "O#1", "SK": "META", "GSI2PK": "OUTBOX#3", "GSI2SK": "DUE#1"}
    assert row_keys(outbox) == ["O#1", "META", None, None, "OUTBOX#3", "DUE#1"]
