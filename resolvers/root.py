"""The root types, assembled from one class per area."""

from __future__ import annotations

import strawberry

from .apikeys.mutations import ApiKeyMutations
from .audit.queries import AuditQueries
from .brands.mutations import BrandMutations
from .brands.queries import BrandQueries
from .certificates.queries import CertificateQueries
from .claims.mutations import ClaimMutations
from .ingest.mutations import IngestMutations
from .ledger.mutations import LedgerMutations
from .ledger.queries import LedgerQueries
from .lifecycle.mutations import LifecycleMutations
from .node.queries import NodeQueries
from .products.mutations import ProductMutations
from .products.queries import ProductQueries
from .provenance.mutations import ProvenanceMutations
from .system import SystemQueries
from .threats.mutations import ThreatMutations
from .threats.queries import ThreatQueries
from .threats.subscriptions import ThreatSubscriptions
from .verification.mutations import VerificationMutations
from .verification.queries import VerificationQueries
from .webhooks.mutations import WebhookMutations

__all__ = ["Mutation", "Query", "Subscription"]


@strawberry.type
class Query(
    SystemQueries,
    BrandQueries,
    ProductQueries,
    VerificationQueries,
    CertificateQueries,
    AuditQueries,
    LedgerQueries,
    ThreatQueries,
    NodeQueries,
):
    pass


@strawberry.type
class Mutation(
    BrandMutations,
    ApiKeyMutations,
    ProductMutations,
    ProvenanceMutations,
    VerificationMutations,
    ClaimMutations,
    LifecycleMutations,
    LedgerMutations,
    ThreatMutations,
    WebhookMutations,
    IngestMutations,
):
    pass


@strawberry.type
class Subscription(ThreatSubscriptions):
    pass
