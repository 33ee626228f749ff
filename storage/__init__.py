"""Key-only storage: access patterns, typed writes, and the backends behind them.

Callers use ``Storage`` (the protocol), the registered access patterns, and the
write actions. Backends are opened through ``open_sqlite`` / ``open_dynamodb``.
"""

from .access_patterns import REGISTRY
from .conditions import (
    All,
    Any_,
    AttributeAbsent,
    AttributeExists,
    Compare,
    Comparison,
    ItemAbsent,
    ItemExists,
)
from .cursor import CursorCodec
from .forwarding import Forwarding
from .keys import Key, KeyTemplate, encode_int, encode_str, encode_time
from .protocol import Page, Storage
from .registry import AccessPattern
from .table import TABLE
from .values import Item
from .writes import ConditionCheck, Delete, Put, Update, WriteAction

__all__ = [
    "REGISTRY",
    "TABLE",
    "AccessPattern",
    "All",
    "Any_",
    "AttributeAbsent",
    "AttributeExists",
    "Compare",
    "Comparison",
    "ConditionCheck",
    "CursorCodec",
    "Delete",
    "Forwarding",
    "Item",
    "ItemAbsent",
    "ItemExists",
    "Key",
    "KeyTemplate",
    "Page",
    "Put",
    "Storage",
    "Update",
    "WriteAction",
    "encode_int",
    "encode_str",
    "encode_time",
]
