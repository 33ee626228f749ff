"""The root types, assembled from one class per area."""

from __future__ import annotations

import strawberry

from .apikeys.mutations import ApiKeyMutations
from .audit.queries import AuditQueries
from .brands.mutations import BrandMutations
from .brands.queries import BrandQueries
from .certificates.queries import CertificateQueries
from .products.mutations import ProductMutations
from .products.queries import ProductQueries
from .system import SystemQueries

__all__ = ["Mutation", "Query"]


@strawberry.type
class Query(SystemQueries, BrandQueries, ProductQueries, CertificateQueries, AuditQueries):
    pass


@strawberry.type
class Mutation(BrandMutations, ApiKeyMutations, ProductMutations):
    pass
