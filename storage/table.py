"""The table definition: the one place keys, indexes, TTL and stream are named.

``proofgate create-table`` builds the DynamoDB table from it, the SQLite backend
builds its schema from it, and a test checks deploy/table.yaml against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["GSI1", "GSI2", "TABLE", "IndexDefinition", "IndexName", "TableDefinition"]


class IndexName(StrEnum):
    TABLE = "TABLE"
    GSI1 = "GSI1"
    GSI2 = "GSI2"


@dataclass(frozen=True)
class IndexDefinition:
    name: IndexName
    partition_key: str
    sort_key: str

    @property
    def is_global_secondary(self) -> bool:
        return self.name is not IndexName.TABLE


@dataclass(frozen=True)
class TableDefinition:
    name: str
    primary: IndexDefinition
    global_secondary: tuple[IndexDefinition, ...]
    ttl_attribute: str
    stream_view: str

    def index(self, name: IndexName) -> IndexDefinition:
        if name is IndexName.TABLE:
            return self.primary
        for index in self.global_secondary:
            if index.name == name:
                return index
        raise KeyError(name)

    @property
    def indexes(self) -> tuple[IndexDefinition, ...]:
        return (self.primary, *self.global_secondary)

    @property
    def key_attributes(self) -> tuple[str, ...]:
        return tuple(a for i in self.indexes for a in (i.partition_key, i.sort_key))

    def create_table_request(self, table_name: str | None = None) -> dict[str, Any]:
        """The DynamoDB CreateTable request (on-demand, stream on). TTL and PITR
        are separate API calls, see ``ttl_request`` and ``pitr_request``."""
        return {
            "TableName": table_name or self.name,
            "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [
                {"AttributeName": a, "AttributeType": "S"} for a in self.key_attributes
            ],
            "KeySchema": [
                {"AttributeName": self.primary.partition_key, "KeyType": "HASH"},
                {"AttributeName": self.primary.sort_key, "KeyType": "RANGE"},
            ],
            "GlobalSecondaryIndexes": [
                {
                    "IndexName": index.name.value,
                    "KeySchema": [
                        {"AttributeName": index.partition_key, "KeyType": "HASH"},
                        {"AttributeName": index.sort_key, "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "ALL"},
                }
                for index in self.global_secondary
            ],
            "StreamSpecification": {"StreamEnabled": True, "StreamViewType": self.stream_view},
            # DeleteTable refused until someone turns this off, as table.yaml does.
            "DeletionProtectionEnabled": True,
        }

    def ttl_request(self, table_name: str | None = None) -> dict[str, Any]:
        return {
            "TableName": table_name or self.name,
            "TimeToLiveSpecification": {"Enabled": True, "AttributeName": self.ttl_attribute},
        }

    def pitr_request(self, table_name: str | None = None) -> dict[str, Any]:
        return {
            "TableName": table_name or self.name,
            "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
        }


GSI1 = IndexDefinition(IndexName.GSI1, "GSI1PK", "GSI1SK")
GSI2 = IndexDefinition(IndexName.GSI2, "GSI2PK", "GSI2SK")

TABLE = TableDefinition(
    name="proofgate",
    primary=IndexDefinition(IndexName.TABLE, "PK", "SK"),
    global_secondary=(GSI1, GSI2),
    ttl_attribute="expiresAt",
    stream_view="NEW_IMAGE",
)
