"""ProvenanceEventInput validation into an EventDraft."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from domain.enums import ProvenanceEventType
from domain.errors import BadUserInput
from resolvers.provenance.inputs import ProvenanceEventInput
from services.provenance.drafts import EventDraft


def test_a_minimal_event_defaults_its_time_and_data() -> None:
    draft = EventDraft.validate(ProvenanceEventInput(type=ProvenanceEventType.RECEIVED))
    assert draft == EventDraft(type=ProvenanceEventType.RECEIVED, data={})


def test_values_are_kept_exactly_and_times_become_utc() -> None:
    local = datetime(2030, 1, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    draft = EventDraft.validate(
        ProvenanceEventInput(
            type=ProvenanceEventType.CUSTOM,
            actor="Ünïcode Ltd",
            latitude=0.1,
            longitude=-179.9999999,
            occurred_at=local,  # type: ignore[arg-type]
            data={"a": {"b": [1, 2]}},  # type: ignore[arg-type]
        )
    )
    assert draft.actor == "Ünïcode Ltd"
    assert (draft.latitude, draft.longitude) == (Decimal("0.1"), Decimal("-179.9999999"))
    assert draft.occurred_at == datetime(2030, 1, 1, 10, 0, tzinfo=UTC)
    assert draft.occurred_at is not None and draft.occurred_at.tzinfo is UTC


@pytest.mark.parametrize(
    "event_type", [ProvenanceEventType.TRANSFERRED, ProvenanceEventType.RECALLED]
)
def test_status_events_belong_to_their_mutations(event_type: ProvenanceEventType) -> None:
    with pytest.raises(BadUserInput, match=r"input\.type"):
        EventDraft.validate(ProvenanceEventInput(type=event_type))


def test_errors_name_the_input_field() -> None:
    with pytest.raises(BadUserInput, match=r"^input\.location: at most 200"):
        EventDraft.validate(
            ProvenanceEventInput(type=ProvenanceEventType.SHIPPED, location="x" * 201)
        )
