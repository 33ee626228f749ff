"""Read-only copies of what the cache keeps.

A hit hands every caller the same objects, with no copy per hit: the item
(a ``dict``), its nested lists and maps, the page and its list of items. So
what the cache keeps is frozen once, when it is kept: a copy whose every
mutating method raises ``TypeError``. They are still a ``dict`` and a
``list`` (``isinstance``, orjson and ``dict(item)`` see no difference), so a
caller that only reads notices nothing, and a caller that writes into what
it read fails loudly instead of changing what the next reader is served.
The caller of the miss that filled an entry gets the store's own objects,
which the cache does not keep (docs/design.md, Storage cache).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, NoReturn

from ..protocol import Page
from ..values import Item

__all__ = ["FrozenItem", "FrozenList", "FrozenPage", "freeze_item", "freeze_page"]


def _refuse(*_: Any, **__: Any) -> NoReturn:
    raise TypeError(
        "a cached item is read-only: copy it first (dict(item)) (docs/design.md, Storage cache)"
    )


class FrozenItem(dict[str, Any]):
    """A ``dict`` that refuses to change."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {key: copy.deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        return dict, (dict(self),)


class FrozenList(list[Any]):
    """A ``list`` that refuses to change."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = clear = extend = insert = pop = remove = reverse = sort = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(value, memo) for value in self]

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        return list, (list(self),)


def _frozen(value: Any) -> Any:
    kind = type(value)
    if kind is dict or kind is FrozenItem:
        return freeze_item(value)
    if kind is list or kind is FrozenList:
        return FrozenList(_frozen(v) for v in value)
    return value  # str, int, Decimal, bool, None, bytes: immutable already


def freeze_item(item: Item) -> Item:
    if type(item) is FrozenItem:
        return item
    frozen = FrozenItem()
    for key, value in item.items():
        kind = type(value)
        dict.__setitem__(frozen, key, value if kind is str or kind is int else _frozen(value))
    return frozen


class FrozenPage(Page):
    """A page whose items and answer cannot be changed; what a reader above
    derives from it (``derived``) and its end cursor still can be set."""

    __slots__ = ()
    _SETTABLE = frozenset({"_end", "derived", "_derived_bytes", "_charge"})

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._SETTABLE:
            _refuse()
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        _refuse()


def freeze_page(page: Page) -> FrozenPage:
    frozen = object.__new__(FrozenPage)
    store = object.__setattr__
    store(frozen, "items", FrozenList(freeze_item(item) for item in page.items))
    store(frozen, "has_next_page", page.has_next_page)
    store(frozen, "_mint", page.mint)
    store(frozen, "_end", None)
    store(frozen, "beyond", None if page.beyond is None else freeze_item(page.beyond))
    store(frozen, "derived", None)
    store(frozen, "_derived_bytes", 0)
    store(frozen, "_charge", None)
    return frozen
