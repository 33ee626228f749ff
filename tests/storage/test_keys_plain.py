"""The key codec's fast path (``KeyTemplate.format`` on plain values) against
its general path (``format_general``): the same key for every input and the
same error where the codec refuses, plain or not (storage/keys.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import storage.keys as keys
from domain.errors import AccessPatternError
from storage.keys import INT_MAX, PLAIN_MAX_CHARS, KeyTemplate, encode_time

TEMPLATES = [
    KeyTemplate(source)
    for source in (
        "HEALTH",
        "VERIFY#{code}",
        "EVENT#{sequence:int}",
        "{brand_id}#STATS",
        "SCAN#{scanned_at:time}#{scan_id}",
        "ANALYTICS#BRAND#{brand_id}#{shard}",
        "POST#{posted_at:time}#{transaction_id}#{line:int}",
        "THREAT#{recorded_at:time}#{threat_type}#{product_id}#{window_start:time}",
    )
]


class _Instant(datetime):
    """A datetime subclass: not plain, so the general path spells it."""


_TEXTS = st.one_of(
    st.from_regex(r"[0-9A-Za-z_-]{1,30}", fullmatch=True),
    st.text(max_size=12),
    st.text(alphabet="ab#%é", max_size=6),
    st.text(alphabet="abc", min_size=PLAIN_MAX_CHARS - 2, max_size=PLAIN_MAX_CHARS + 2),
    st.just("a\ud800"),
)
_INTS = st.one_of(
    st.integers(min_value=0, max_value=INT_MAX),
    st.integers(min_value=-3, max_value=3),
    st.integers(min_value=INT_MAX - 1, max_value=INT_MAX + 2),
    st.booleans(),
)
_ZONES = st.sampled_from(
    [UTC, None, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(0))]
)
_TIMES = st.one_of(
    st.builds(
        lambda moment, zone: moment.replace(tzinfo=zone),
        st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
        _ZONES,
    ),
    st.datetimes(timezones=st.just(UTC)).map(
        lambda moment: _Instant.combine(moment.date(), moment.timetz())
    ),
)
_VALUES = {"str": _TEXTS, "int": _INTS, "time": _TIMES}
_ANY = st.one_of(_TEXTS, _INTS, _TIMES, st.none(), st.just(1.0), st.just(b"x"))


@st.composite
def _params(draw: st.DrawFn, template: KeyTemplate) -> dict[str, Any]:
    """Values of each field's kind, sometimes one of another kind or none."""
    params: dict[str, Any] = {}
    for part in template.parts:
        if isinstance(part, str):
            continue
        if draw(st.integers(0, 9)) == 0:
            if draw(st.booleans()):
                continue
            params[part.name] = draw(_ANY)
        else:
            params[part.name] = draw(_VALUES[part.converter])
    return params


def _outcome(spell: Callable[[], str]) -> Any:
    try:
        return spell()
    except Exception as error:  # the codec's error, by type and text
        return type(error), str(error)


@settings(max_examples=400, deadline=None)
@given(data=st.data(), template=st.sampled_from(TEMPLATES))
def test_format_spells_as_the_general_path(data: st.DataObject, template: KeyTemplate) -> None:
    params = data.draw(_params(template))
    assert _outcome(lambda: template.format(params)) == _outcome(
        lambda: template.format_general(params)
    )


@pytest.fixture
def general_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """The params of every call that reached the general path, for templates
    built while the fixture is active."""
    calls: list[dict[str, Any]] = []
    general = KeyTemplate.format_general

    def counted(self: KeyTemplate, params: dict[str, Any]) -> str:
        calls.append(params)
        return general(self, params)

    monkeypatch.setattr(KeyTemplate, "format_general", counted)
    yield calls


_MOMENT = datetime(2026, 12, 1, 12, 30, 1, 5, tzinfo=UTC)


def test_plain_values_take_the_fast_path(general_calls: list[dict[str, Any]]) -> None:
    """So the differential test above compares two paths, not one with itself."""
    template = KeyTemplate("X#{at:time}#{id}#{n:int}")
    assert template.format({"at": _MOMENT, "id": "a" * PLAIN_MAX_CHARS, "n": INT_MAX}) == (
        f"X#2026-12-01T12:30:01.000005Z#{'a' * PLAIN_MAX_CHARS}#{INT_MAX}"
    )
    assert general_calls == []


@pytest.mark.parametrize(
    "params",
    [
        {"at": _MOMENT, "id": "a#b", "n": 1},
        {"at": _MOMENT, "id": "a%b", "n": 1},
        {"at": _MOMENT, "id": "é", "n": 1},
        {"at": _MOMENT, "id": "", "n": 1},
        {"at": _MOMENT, "id": "a" * (PLAIN_MAX_CHARS + 1), "n": 1},
        {"at": _MOMENT, "id": "a", "n": True},
        {"at": _MOMENT, "id": "a", "n": INT_MAX + 1},
        {"at": _MOMENT.astimezone(timezone(timedelta(hours=1))), "id": "a", "n": 1},
        {"at": _MOMENT.replace(tzinfo=None), "id": "a", "n": 1},
        {"at": _MOMENT, "id": "a"},
    ],
)
def test_other_values_take_the_general_path(
    general_calls: list[dict[str, Any]], params: dict[str, Any]
) -> None:
    template = KeyTemplate("X#{at:time}#{id}#{n:int}")
    _outcome(lambda: template.format(params))
    assert general_calls == [params]


@pytest.mark.parametrize(
    ("converter", "test", "params"),
    [
        ("str", "type($) is str and $.isascii() and SEPARATOR not in $", {"id": "a%b"}),
        ("str", "type($) is str and $.isascii()", {"id": "a#b"}),
        ("str", "type($) is str and SEPARATOR not in $ and '%' not in $", {"id": ""}),
        ("int", "type($) is int or type($) is bool", {"n": True}),
        ("int", "type($) is int", {"n": -1}),
        ("time", "isinstance($, datetime)", {"at": _MOMENT.replace(tzinfo=None)}),
    ],
)
def test_a_planted_fault_is_caught(
    monkeypatch: pytest.MonkeyPatch, converter: str, test: str, params: dict[str, Any]
) -> None:
    """Positive control: a plain test that lets an escape, a separator, an
    empty value, a bool, a negative int or a naive time through spells a key
    (or an error) the general path does not."""
    source = {"str": "X#{id}", "int": "X#{n:int}", "time": "X#{at:time}"}[converter]
    sound = KeyTemplate(source)
    assert _outcome(lambda: sound.format(params)) == _outcome(lambda: sound.format_general(params))
    monkeypatch.setitem(keys._PLAIN, converter, (test, keys._PLAIN[converter][1]))
    faulty = KeyTemplate(source)
    assert _outcome(lambda: faulty.format(params)) != _outcome(
        lambda: faulty.format_general(params)
    )


@settings(max_examples=200, deadline=None)
@given(moment=_TIMES.filter(lambda moment: moment.tzinfo is not None), ident=_TEXTS)
def test_span_reads_the_encoded_time_back(moment: datetime, ident: str) -> None:
    template = KeyTemplate("SCAN#{at:time}#{id}")
    spelled = _outcome(lambda: template.format({"at": moment, "id": ident}))
    if isinstance(spelled, str):
        assert spelled[template.span("at")] == encode_time(moment)


def test_span_of_fields_at_fixed_places_only() -> None:
    template = KeyTemplate("P#{n:int}#{at:time}#{id}#{later:time}")
    assert template.span("n") == slice(2, 14)
    assert template.span("at") == slice(15, 42)
    for name in ("id", "later", "absent"):
        with pytest.raises(AccessPatternError):
            template.span(name)
