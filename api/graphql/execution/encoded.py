"""A list the responses of many requests share, encoded once.

A page the storage cache keeps is served to request after request as one
object, and carries its projected edges (``projection.py``); the edges are
then an ``EncodedList``: a list to everything that reads the data, written
by the response's encoder (``api/wire/json_response.py``, which asks any
subclass of a builtin for ``json_fragment``) as the bytes it encoded the
first time. It refuses to change, so the bytes stay its own
(docs/design.md, Projected pages).
"""

from __future__ import annotations

from typing import Any, NoReturn

import orjson

__all__ = ["EncodedList"]


def _refuse(*_: Any, **__: Any) -> NoReturn:
    raise TypeError("an encoded list is read-only (docs/design.md, Projected pages)")


class EncodedList(list[Any]):
    __slots__ = ("_fragment",)
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = clear = extend = insert = pop = remove = reverse = sort = _refuse

    def __init__(self, values: list[Any]) -> None:
        super().__init__(values)
        self._fragment: orjson.Fragment | None = None

    def json_fragment(self) -> orjson.Fragment:
        """The list as JSON, encoded the first time it is asked for."""
        fragment = self._fragment
        if fragment is None:
            # Plain values only (the projection writes str, None and enum
            # names), so orjson's defaults write it as the response would.
            fragment = self._fragment = orjson.Fragment(orjson.dumps(list(self)))
        return fragment
