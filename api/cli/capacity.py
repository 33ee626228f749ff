"""``proofgate capacity``: what a traffic mix costs the table, from measured calls.

Each operation's storage calls and capacity units come from a profile that
the benchmark (``bench/backends.py``) measures and writes into the package
(``api/cli/capacity-profile.json``, package data, so an installed wheel reads
it whatever the working directory): one traced request of each shape on the
embedded store, which bills capacity as DynamoDB does (docs/design.md,
Storage). With a mix of operations per second this prints read and write
units per operation and for the table, the hottest partition's load against
DynamoDB's per-partition limits, and, with prices given as options, the
on-demand cost per million operations. No price is built in: prices differ
by region and change.

With the storage cache on, a read the cache serves costs the table nothing:
``--hit-ratios SCRAPE`` takes each pattern's measured hit ratio from a running
gateway's ``/metrics`` (the numbers ``proofgate explain --hit-ratios``
shows), ``--hit-ratio AP=RATIO`` gives one, and each read of that pattern
counts for its share of misses (docs/design.md, Storage cache).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from domain.errors import ConfigurationError
from storage.access_patterns import REGISTRY
from storage.cache import rule_of
from storage.registry import AccessPattern

__all__ = [
    "PARTITION_READ_UNITS",
    "PARTITION_WRITE_UNITS",
    "Call",
    "add_capacity_command",
    "discounted",
    "load_profile",
    "render",
]

PARTITION_READ_UNITS = 3_000
PARTITION_WRITE_UNITS = 1_000
"""DynamoDB's per-partition limits, units per second."""
PROFILE_NAME = "capacity-profile.json"
_READS = frozenset({"GetItem", "BatchGetItem", "Query"})
_SPREAD = frozenset({"product_id", "code", "certificate_hash", "transaction_id", "key", "shard"})
"""Key parameters that differ from request to request in any real mix (one
product, code or transaction each): partitions keyed by them spread."""
_HINT = (
    "Leave out --profile to use the profile installed with proofgate, or pass the "
    "profile your own benchmark wrote (from a checkout: `make bench`)."
)


@dataclass(frozen=True)
class Call:
    access_pattern: str | None
    operation: str
    units: float
    share: float = 1.0
    """Of the requests, the share whose call reaches the store (a cache's misses)."""

    @property
    def is_read(self) -> bool:
        return self.operation in _READS

    def partition(self, patterns: Mapping[str, AccessPattern]) -> str | None:
        """The hot partition this call lands on when one brand, with one key,
        sends the whole mix; None when its partition spreads (or, for a write,
        is not in the trace)."""
        pattern = patterns.get(self.access_pattern or "")
        if pattern is None or _SPREAD.intersection(pattern.partition_key.params):
            return None
        return f"{pattern.index.value} {pattern.partition_key.source}"


def installed_profile() -> str:
    """The profile shipped in the package (api/cli/capacity-profile.json)."""
    return files(__package__ or "api.cli").joinpath(PROFILE_NAME).read_text()


def load_profile(path: Path | None = None) -> dict[str, list[Call]]:
    """``path``'s profile, or the installed one when None."""
    try:
        document = json.loads(installed_profile() if path is None else path.read_text())
        return {
            name: [
                Call(c["accessPattern"], c["operation"], float(c["capacityUnits"])) for c in calls
            ]
            for name, calls in document["operations"].items()
        }
    except FileNotFoundError:
        raise ConfigurationError(f"No capacity profile at {path}", hint=_HINT) from None
    except (IsADirectoryError, PermissionError) as error:
        raise ConfigurationError(f"Cannot read {path}: {error.strerror}", hint=_HINT) from None
    except (ValueError, KeyError, TypeError) as error:
        raise ConfigurationError(f"{path} is not a capacity profile: {error}", hint=_HINT) from None


def _mix(items: Iterable[str], operations: Iterable[str]) -> dict[str, float]:
    known = sorted(operations)
    mix: dict[str, float] = {}
    for item in items:
        name, _, rate = item.partition("=")
        if name not in known:
            raise ConfigurationError(
                f"--mix {item!r}: no operation {name!r} in the profile",
                hint=f"Measured operations: {', '.join(known)}.",
            )
        try:
            mix[name] = float(rate)
        except ValueError:
            raise ConfigurationError(
                f"--mix {item!r}: {rate!r} is not operations per second",
                hint="Write NAME=RATE, e.g. --mix page=200.",
            ) from None
        if mix[name] < 0:
            raise ConfigurationError(f"--mix {item!r}: a rate cannot be negative")
    return mix


def _ratios(scrape: str | None, given: Iterable[str]) -> dict[str, float]:
    """Hit ratios by pattern: the scrape's, then the ones given, which win."""
    from .cache_ratios import hit_ratios, read_scrape  # the Prometheus parser: only here

    ratios = {} if scrape is None else hit_ratios(read_scrape(scrape))
    patterns = {p.id: p for p in REGISTRY}
    for item in given:
        name, _, text = item.partition("=")
        pattern = patterns.get(name)
        if pattern is None:
            raise ConfigurationError(
                f"--hit-ratio {item!r}: no access pattern {name!r}",
                hint="Write AP=RATIO with a registered pattern, e.g. --hit-ratio AP07=0.95.",
            )
        if not rule_of(pattern).served:
            raise ConfigurationError(
                f"--hit-ratio {item!r}: the cache never serves {name} ({rule_of(pattern)})",
                hint="`proofgate explain` lists each pattern's cache rule.",
            )
        try:
            ratio = float(text)
        except ValueError:
            ratio = -1.0
        if not 0.0 <= ratio <= 1.0:
            raise ConfigurationError(
                f"--hit-ratio {item!r}: {text!r} is not a ratio between 0 and 1",
                hint="Write AP=RATIO, e.g. --hit-ratio AP07=0.95.",
            )
        ratios[name] = ratio
    return ratios


def discounted(
    profile: Mapping[str, Sequence[Call]], ratios: Mapping[str, float]
) -> dict[str, list[Call]]:
    """Each read of a pattern with a hit ratio counts for its misses only."""
    return {
        name: [
            Call(c.access_pattern, c.operation, c.units * (1 - ratio), c.share * (1 - ratio))
            if c.is_read and (ratio := ratios.get(c.access_pattern or "")) is not None
            else c
            for c in calls
        ]
        for name, calls in profile.items()
    }


def _units(calls: Sequence[Call]) -> tuple[float, float]:
    reads = sum(c.units for c in calls if c.is_read)
    return reads, sum(c.units for c in calls if not c.is_read)


def render(
    profile: Mapping[str, Sequence[Call]],
    mix: Mapping[str, float],
    *,
    read_price: float | None = None,
    write_price: float | None = None,
) -> str:
    """``read_price``/``write_price``: per million read/write request units."""
    priced = read_price is not None and write_price is not None
    lines = [
        "operation        calls  read units  write units" + ("  cost / 1M ops" if priced else "")
    ]
    for name, calls in profile.items():
        reads, writes = _units(calls)
        row = f"{name:<16} {sum(c.share for c in calls):>5g}  {reads:>10g}  {writes:>11g}"
        if priced:
            row += f"  {reads * (read_price or 0) + writes * (write_price or 0):>13.2f}"
        lines.append(row)
    if not mix:
        lines.append("\nGive a traffic mix (--mix NAME=OPS_PER_SECOND ...) for the table's load.")
        return "\n".join(lines) + "\n"
    table_reads = sum(rate * _units(profile[name])[0] for name, rate in mix.items())
    table_writes = sum(rate * _units(profile[name])[1] for name, rate in mix.items())
    lines += [
        "",
        "mix: " + ", ".join(f"{name} {rate:g}/s" for name, rate in mix.items()),
        f"table: {table_reads:,.1f} read units/s, {table_writes:,.1f} write units/s",
    ]
    lines += _hottest(profile, mix, table_writes)
    if priced:
        per_second = table_reads * (read_price or 0) + table_writes * (write_price or 0)
        lines.append(f"on demand: {per_second / 1e6 * 3600:,.4f} per hour at the given prices")
    else:
        lines.append("\nCosts: give --read-price and --write-price (per million request units).")
    return "\n".join(lines) + "\n"


def _hottest(
    profile: Mapping[str, Sequence[Call]], mix: Mapping[str, float], table_writes: float
) -> list[str]:
    patterns = {p.id: p for p in REGISTRY}
    load: dict[str, float] = {}
    for name, rate in mix.items():
        for call in profile[name]:
            partition = call.partition(patterns)
            if call.is_read and partition is not None:
                load[partition] = load.get(partition, 0.0) + rate * call.units
    lines = ["hottest partitions (the whole mix from one brand; per-product keys spread):"]
    for partition, units in sorted(load.items(), key=lambda kv: -kv[1])[:3]:
        share = units / PARTITION_READ_UNITS
        lines.append(
            f"  {partition}: {units:,.1f} read units/s, {share:.1%} of {PARTITION_READ_UNITS:,}"
        )
    if not load:
        lines.append("  none: every read of the mix spreads")
    lines.append(
        f"  writes: {table_writes:,.1f} units/s in all, {table_writes / PARTITION_WRITE_UNITS:.1%} "
        f"of one partition's {PARTITION_WRITE_UNITS:,} if every write landed on one (a bound)"
    )
    return lines


def add_capacity_command(commands: Any) -> None:
    parser = commands.add_parser(
        "capacity",
        help="read/write capacity, hot partitions and on-demand cost of a traffic mix",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="measured calls and units per operation (default: the profile installed "
        "with proofgate)",
    )
    parser.add_argument(
        "--mix",
        nargs="*",
        default=[],
        metavar="NAME=RATE",
        help="operations per second, e.g. --mix page=200 verifyProduct=50",
    )
    parser.add_argument(
        "--hit-ratios",
        metavar="SCRAPE",
        help="count each read for its cache misses, by the hit ratios in a /metrics scrape "
        "of a running gateway saved in SCRAPE ('-': standard input), as "
        "`proofgate explain --hit-ratios` shows them",
    )
    parser.add_argument(
        "--hit-ratio",
        nargs="*",
        default=[],
        metavar="AP=RATIO",
        help="a pattern's cache hit ratio, 0 to 1, e.g. --hit-ratio AP07=0.95 (wins over "
        "the scrape's)",
    )
    parser.add_argument("--read-price", type=float, help="price per million read request units")
    parser.add_argument("--write-price", type=float, help="price per million write request units")
    parser.set_defaults(command=_capacity)


def _capacity(args: argparse.Namespace) -> int:
    if (args.read_price is None) != (args.write_price is None):
        raise ConfigurationError(
            "Give both --read-price and --write-price, or neither",
            hint="Both are per million request units, from your region's on-demand price list.",
        )
    profile = load_profile(args.profile)
    ratios = _ratios(args.hit_ratios, args.hit_ratio)
    if ratios:
        profile = discounted(profile, ratios)
        applied = ", ".join(f"{p} {r:.1%}" for p, r in sorted(ratios.items()))
        print(f"cache hit ratios applied to reads: {applied}\n")
    print(
        render(
            profile,
            _mix(args.mix, profile),
            read_price=args.read_price,
            write_price=args.write_price,
        ),
        end="",
    )
    return 0
