from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.datetimes import format_datetime, parse_datetime, utc
from domain.errors import BadUserInput


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (datetime(2026, 11, 29, 12, 0, 0, 123456, UTC), "2026-11-29T12:00:00.123456Z"),
        (datetime(2026, 11, 29, 12, 0, tzinfo=UTC), "2026-11-29T12:00:00.000000Z"),
        (
            datetime(2026, 11, 29, 14, 30, 5, 7, timezone(timedelta(hours=2))),
            "2026-11-29T12:30:05.000007Z",
        ),
        (datetime(5, 1, 2, 3, 4, 5, tzinfo=UTC), "0005-01-02T03:04:05.000000Z"),
    ],
)
def test_format(value: datetime, text: str) -> None:
    assert format_datetime(value) == text


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(BadUserInput, match="occurredAt"):
        utc(datetime(2026, 1, 1), field="occurredAt")
    with pytest.raises(BadUserInput):
        format_datetime(datetime(2026, 1, 1))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-29T12:00:00.123456Z", datetime(2026, 11, 29, 12, 0, 0, 123456, UTC)),
        ("2026-11-29T12:00:00Z", datetime(2026, 11, 29, 12, tzinfo=UTC)),
        ("2026-11-29T14:00:00.5+02:00", datetime(2026, 11, 29, 12, 0, 0, 500000, UTC)),
    ],
)
def test_parse(text: str, expected: datetime) -> None:
    parsed = parse_datetime(text)
    assert parsed == expected
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01T00:00:00Z", "", "2026-11-29T12:00:00"])
def test_parse_refuses(text: str) -> None:
    with pytest.raises(BadUserInput, match="occurredAt"):
        parse_datetime(text, field="occurredAt")


@given(st.datetimes(timezones=st.just(UTC)))
def test_round_trip(value: datetime) -> None:
    text = format_datetime(value)
    assert len(text) == 27
    assert parse_datetime(text) == value


@given(st.datetimes(timezones=st.just(UTC)))
def test_canonical_text_parses_as_strptime_reads_it(value: datetime) -> None:
    """The canonical form's fast path against strptime as the oracle: the same
    instant, and the same UTC object as its tzinfo (not merely an equal one)."""
    text = format_datetime(value)
    parsed = parse_datetime(text)
    expected = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert (parsed, parsed.utcoffset()) == (expected, timedelta(0))
    assert parsed.tzinfo is UTC and type(parsed) is datetime


@given(st.datetimes(timezones=st.just(UTC)), st.datetimes(timezones=st.just(UTC)))
def test_text_order_is_time_order(a: datetime, b: datetime) -> None:
    assert (format_datetime(a) < format_datetime(b)) == (a < b)


def _format_reference(value: datetime) -> str:
    """``format_datetime`` as it was before its UTC fast path and %-format."""
    v = utc(value)
    return (
        f"{v.year:04d}-{v.month:02d}-{v.day:02d}"
        f"T{v.hour:02d}:{v.minute:02d}:{v.second:02d}.{v.microsecond:06d}Z"
    )


_zones = st.one_of(
    st.just(UTC),
    st.none(),
    st.builds(
        timezone,
        st.timedeltas(min_value=timedelta(hours=-23, minutes=-59), max_value=timedelta(hours=23)),
    ),
)


@given(st.datetimes(timezones=_zones))
def test_format_matches_the_reference_spelling(value: datetime) -> None:
    """Differential: any zone (or none, refused by both), years 1-9999
    (overflowing ones refused by both), the fast path for UTC included."""
    try:
        expected: str | type[BadUserInput] = _format_reference(value)
    except BadUserInput:
        expected = BadUserInput
    try:
        actual: str | type[BadUserInput] = format_datetime(value)
    except BadUserInput:
        actual = BadUserInput
    assert actual == expected


def _iso_spellings(value: datetime) -> list[str]:
    """Texts ``fromisoformat`` reads, canonical or not: ``value`` (UTC), or
    for the last two without all its digits, an instant near it."""
    year, week, weekday = value.isocalendar()
    time = value.strftime("%H:%M:%S")
    micro = f"{value.microsecond:06d}"
    return [
        _format_reference(value),
        f"{value.date().isoformat()}T{time}.{micro}+00:00",
        f"{value.date().isoformat()} {time}.{micro}Z",
        f"{value.date().isoformat()}T{time},{micro}Z",
        f"{year:04d}-W{week:02d}-{weekday}T{time}.{micro}Z",
        f"{value.year:04d}{value.month:02d}{value.day:02d}T{time}.{micro}Z",
        f"{value.date().isoformat()}T{time}Z",
        f"{value.date().isoformat()}T{time}.{micro[:3]}Z",
    ]


@given(
    st.lists(
        st.tuples(
            st.datetimes(min_value=datetime(1000, 1, 1), timezones=_zones),
            st.integers(min_value=0, max_value=7),
            st.booleans(),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_remembered_spellings_are_the_reference_spelling(
    steps: list[tuple[datetime, int, bool]],
) -> None:
    """Differential, for the two remembered spellings: any mix of parses (in
    the one spelling or any other ``fromisoformat`` reads, week dates and
    commas included) and spellings, each value spelled again, always gives
    what the reference spells for it, never a text remembered for another
    value or one read in another spelling."""
    for value, spelling, parse_first in steps:
        if value.tzinfo is None:
            with pytest.raises(BadUserInput):
                format_datetime(value)
            continue
        if parse_first:
            try:
                moment = utc(value)
            except BadUserInput:
                continue  # beyond year 9999 in UTC
            value = parse_datetime(_iso_spellings(moment)[spelling])
        expected = _format_reference(value)
        assert format_datetime(value) == expected
        assert format_datetime(value) == expected
