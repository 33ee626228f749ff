"""The access-pattern registry: every read the gateway can make, by name.

Access patterns are compiled and validated when they are registered (at import
time), so a bad definition fails start-up instead of a request. Request-time
code only fills in key parameters; it never builds a key condition by hand.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any, NamedTuple

from domain.errors import AccessPatternError, BadUserInput, LimitExceeded

from .keys import Key, KeyTemplate, check_key
from .limits import PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, PARTITION_KEY_MAX_BYTES
from .table import TABLE, IndexName, TableDefinition

__all__ = [
    "AccessPattern",
    "Direction",
    "Operation",
    "Registry",
    "SortCondition",
    "SortOperator",
    "SortRange",
]


class Operation(StrEnum):
    GET = "get"
    BATCH_GET = "batch_get"
    QUERY = "query"


class Direction(StrEnum):
    FORWARD = "forward"
    BACKWARD = "backward"


class SortOperator(StrEnum):
    EQ = "="
    BEGINS_WITH = "begins_with"
    BETWEEN = "between"
    LT = "<"
    LTE = "<="
    GT = ">"
    GTE = ">="


class SortRange(NamedTuple):
    """A resolved sort-key condition: what a backend executes. A tuple: one
    is made for every query."""

    operator: SortOperator
    value: str
    upper: str | None = None

    def matches(self, sort_key: str) -> bool:
        """Byte-order comparison, as DynamoDB compares string keys."""
        key, value = sort_key.encode(), self.value.encode()
        match self.operator:
            case SortOperator.EQ:
                return key == value
            case SortOperator.BEGINS_WITH:
                return key.startswith(value)
            case SortOperator.BETWEEN:
                assert self.upper is not None
                return value <= key <= self.upper.encode()
            case SortOperator.LT:
                return key < value
            case SortOperator.LTE:
                return key <= value
            case SortOperator.GT:
                return key > value
            case SortOperator.GTE:
                return key >= value


@dataclass(frozen=True, init=False)
class SortCondition:
    """A sort-key condition over templates, e.g. between SCAN#{from} and SCAN#{to}."""

    operator: SortOperator
    template: KeyTemplate
    upper: KeyTemplate | None
    _constant: SortRange | None = field(init=False, repr=False, compare=False)

    def __init__(
        self, operator: SortOperator | str, template: str, upper: str | None = None
    ) -> None:
        operator = SortOperator(operator)
        if (operator is SortOperator.BETWEEN) != (upper is not None):
            raise AccessPatternError("Only a 'between' sort condition takes an upper template")
        object.__setattr__(self, "operator", operator)
        object.__setattr__(self, "template", KeyTemplate(template))
        object.__setattr__(self, "upper", KeyTemplate(upper) if upper is not None else None)
        object.__setattr__(self, "_constant", None if self.params else self._resolve({}))

    @property
    def params(self) -> tuple[str, ...]:
        upper = self.upper.params if self.upper else ()
        return (*self.template.params, *(p for p in upper if p not in self.template.params))

    def resolve(self, params: Mapping[str, Any]) -> SortRange:
        """A condition without parameters (AP33's CLAIM..META) was resolved
        once, when it was registered; a reversed constant range fails there."""
        if self._constant is not None:
            return self._constant
        return self._resolve(params)

    def _resolve(self, params: Mapping[str, Any]) -> SortRange:
        lower = self.template.format(params)
        upper = self.upper.format(params) if self.upper else None
        if upper is not None and lower.encode() > upper.encode():
            # DynamoDB refuses such a query rather than returning nothing.
            raise BadUserInput("The range starts after it ends", hint="Swap the range's bounds.")
        return SortRange(self.operator, lower, upper)

    def describe(self) -> str:
        if self.upper is not None:
            return f"between {self.template.source} and {self.upper.source}"
        if self.operator is SortOperator.EQ:
            return self.template.source
        return f"{self.operator.value} {self.template.source}"


@dataclass(frozen=True)
class AccessPattern:
    id: str
    name: str
    operation: Operation
    index: IndexName
    partition_key: KeyTemplate
    sort_key: SortCondition
    entity: str
    direction: Direction = Direction.FORWARD
    consistent: bool = False
    max_page: int = PAGE_SIZE_MAX
    default_page: int = PAGE_SIZE_DEFAULT
    table: TableDefinition = field(default=TABLE, repr=False, compare=False)

    @property
    def params(self) -> tuple[str, ...]:
        return (
            *self.partition_key.params,
            *(p for p in self.sort_key.params if p not in self.partition_key.params),
        )

    def partition(self, params: Mapping[str, Any]) -> str:
        self._check_params(params)
        partition = self.partition_key.format(params)
        if len(partition.encode("utf-8")) > PARTITION_KEY_MAX_BYTES:
            raise LimitExceeded(f"Partition key longer than {PARTITION_KEY_MAX_BYTES} bytes")
        return partition

    def key(self, **params: Any) -> Key:
        """The primary key a get-type pattern reads; also what writers use to
        build the same key, so reads and writes can never disagree."""
        if self.operation is Operation.QUERY:
            raise AccessPatternError(f"{self.id} is a query; it has no single key")
        self._check_params(params)
        return check_key(
            Key(self.partition_key.format(params), self.sort_key.template.format(params))
        )

    def sort_range(self, params: Mapping[str, Any]) -> SortRange:
        self._check_params(params)
        return self.sort_key.resolve(params)

    @cached_property
    def _param_names(self) -> frozenset[str]:
        return frozenset(self.params)

    def _check_params(self, params: Mapping[str, Any]) -> None:
        if params.keys() == self._param_names:
            return
        missing = [p for p in self.params if p not in params]
        if missing:
            raise AccessPatternError(
                f"{self.id} ({self.name}) needs parameter(s) {', '.join(missing)}"
            )
        unknown = [p for p in params if p not in self.params]
        if unknown:
            raise AccessPatternError(
                f"{self.id} ({self.name}) takes no parameter(s) {', '.join(unknown)}"
            )

    def validate(self) -> None:
        where = f"Access pattern {self.id} ({self.name})"
        try:
            self.table.index(self.index)
        except KeyError:
            raise AccessPatternError(f"{where}: table defines no index {self.index}") from None
        if self.consistent and self.index is not IndexName.TABLE:
            raise AccessPatternError(f"{where}: strongly consistent reads are impossible on a GSI")
        if self.operation is not Operation.QUERY:
            if self.sort_key.operator is not SortOperator.EQ:
                raise AccessPatternError(f"{where}: a {self.operation} needs an exact sort key")
            if self.index is not IndexName.TABLE:
                raise AccessPatternError(
                    f"{where}: a {self.operation} reads the table, not an index"
                )
        if not 0 < self.default_page <= self.max_page <= PAGE_SIZE_MAX:
            raise AccessPatternError(
                f"{where}: page sizes must satisfy 0 < default <= max <= {PAGE_SIZE_MAX}"
            )


# A get-type pattern serves both GetItem and BatchGetItem.
_SERVES = {
    Operation.GET: frozenset((Operation.GET, Operation.BATCH_GET)),
    Operation.BATCH_GET: frozenset((Operation.GET, Operation.BATCH_GET)),
    Operation.QUERY: frozenset((Operation.QUERY,)),
}


class Registry:
    """Access patterns by id, validated on registration."""

    def __init__(self) -> None:
        self._patterns: dict[str, AccessPattern] = {}

    def register(self, pattern: AccessPattern) -> AccessPattern:
        if pattern.id in self._patterns:
            raise AccessPatternError(f"Access pattern id {pattern.id} is registered twice")
        pattern.validate()
        self._patterns[pattern.id] = pattern
        return pattern

    def __getitem__(self, ap_id: str) -> AccessPattern:
        try:
            return self._patterns[ap_id]
        except KeyError:
            raise AccessPatternError(f"Access pattern {ap_id!r} is not registered") from None

    def __contains__(self, pattern: object) -> bool:
        return isinstance(pattern, AccessPattern) and self._patterns.get(pattern.id) is pattern

    def __iter__(self) -> Iterator[AccessPattern]:
        return iter(sorted(self._patterns.values(), key=lambda p: p.id))

    def __len__(self) -> int:
        return len(self._patterns)

    def require(self, pattern: AccessPattern, operation: Operation) -> AccessPattern:
        if self._patterns.get(pattern.id) is not pattern:
            raise AccessPatternError(f"Access pattern {pattern.id!r} is not registered")
        if pattern.operation not in _SERVES[operation]:
            raise AccessPatternError(f"{pattern.id} is a {pattern.operation}, not a {operation}")
        return pattern
