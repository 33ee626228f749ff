"""Sections made from a dataclass's declared variables: a field marked with
``variable`` is read, checked and built with no other edit."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest

from api.settings.declared import Declared
from api.settings.environment import EnvironmentReader, variable_name
from api.settings.gateway import Environment
from domain.errors import ConfigurationError
from domain.threats import ThreatSettings
from domain.variables import declared, variable
from services.pipeline.settings import PipelineSettings

_MINUTE = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class Planted(ThreatSettings):
    """The threat rules' settings with one field more, as a change adding a
    tunable threshold would write it."""

    planted_limit: int = variable(7, "threat_planted_limit")
    planted_window: timedelta = variable(
        30 * _MINUTE, "threat_planted_window_minutes", unit=_MINUTE, also=("planted_dedupe",)
    )
    planted_dedupe: timedelta = 30 * _MINUTE


class PlantedReader(Declared, EnvironmentReader, declares=Planted):
    pass


def test_a_planted_field_is_a_variable_of_the_reader() -> None:
    assert {"PROOFGATE_THREAT_PLANTED_LIMIT", "PROOFGATE_THREAT_BURST_MAX_SCANS"} <= set(
        PlantedReader.variables()
    )
    assert PlantedReader.read({}).build(Planted) == Planted()


def test_a_planted_field_is_read_in_its_unit_with_the_others() -> None:
    read = PlantedReader.read(
        {
            "PROOFGATE_THREAT_PLANTED_LIMIT": "12",
            "PROOFGATE_THREAT_PLANTED_WINDOW_MINUTES": "5",
            "PROOFGATE_THREAT_BURST_MAX_SCANS": "3",
        }
    )
    built = read.build(Planted)
    assert built.planted_limit == 12
    assert built.planted_window == built.planted_dedupe == 5 * _MINUTE
    assert built.burst_max_scans == 3


def test_a_malformed_planted_value_is_one_line_naming_its_variable() -> None:
    with pytest.raises(ConfigurationError) as raised:
        PlantedReader.read({"PROOFGATE_THREAT_PLANTED_LIMIT": "0"})
    assert str(raised.value) == (
        "Invalid PROOFGATE_THREAT_PLANTED_LIMIT: must be a positive integer, got '0'"
    )


@pytest.mark.parametrize("settings", [ThreatSettings, PipelineSettings])
def test_the_gateway_reads_every_declared_variable(settings: type[object]) -> None:
    marked = {variable_name(mark.name) for _field, mark in declared(settings)}
    assert len(marked) >= 7
    assert marked <= set(Environment.variables())


def test_a_declaration_in_an_unknown_format_fails_at_import() -> None:
    @dataclass(frozen=True)
    class Odd:
        limit: int = variable(1, "odd_limit", format="roman")

    with pytest.raises(TypeError, match=r"Odd\.limit: no format 'roman'"):

        class OddReader(Declared, declares=Odd):
            pass


def test_a_default_not_whole_in_its_unit_fails_at_import() -> None:
    @dataclass(frozen=True)
    class Odd:
        window: timedelta = variable(timedelta(seconds=90), "odd_minutes", unit=_MINUTE)

    with pytest.raises(TypeError, match=r"Odd\.window: default not whole"):

        class OddReader(Declared, declares=Odd):
            pass


def test_the_idle_poll_is_never_shorter_than_the_poll() -> None:
    env = Environment.read({"PROOFGATE_RELAY_POLL_MS": "5000"})
    assert env.pipeline(ThreatSettings()).idle_poll_interval == timedelta(seconds=5)
