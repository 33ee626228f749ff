"""The GraphQL operations the demo loader runs, through the real schema."""

from __future__ import annotations

__all__ = [
    "ADD_EVENT",
    "BRAND",
    "BRAND_PRODUCTS",
    "CLAIM",
    "CREATE_INTEGRATION",
    "GRANT",
    "INGEST",
    "PRODUCT_STATE",
    "RECALL",
    "REGISTER_BRAND",
    "REGISTER_PRODUCTS",
    "TRANSFER",
    "VERIFY",
]

BRAND = "query($id: ID!) { brand(id: $id) { id } }"
REGISTER_BRAND = """
mutation($input: RegisterBrandInput!) { registerBrand(input: $input) { apiKey brand { id } } }
"""
BRAND_PRODUCTS = """
query($id: ID!) {
  brand(id: $id) {
    ledger { balance { available } }
    products(first: 100) { edges { node { id sku verificationCode } } }
  }
}
"""
GRANT = """
mutation($brandId: ID!, $amount: Decimal!, $key: String!) {
  grantCredits(brandId: $brandId, amount: $amount, idempotencyKey: $key, memo: "Demo") { id }
}
"""
REGISTER_PRODUCTS = """
mutation($inputs: [RegisterProductInput!]!, $key: String!) {
  registerProducts(inputs: $inputs, idempotencyKey: $key) { id sku verificationCode }
}
"""
PRODUCT_STATE = """
query($id: ID!) {
  product(id: $id) {
    status scanCount claim { claimedAt }
    provenance(first: 100) { edges { cursor } }
  }
}
"""
ADD_EVENT = """
mutation($id: ID!, $input: ProvenanceEventInput!) {
  addProvenanceEvent(productId: $id, input: $input) { sequence }
}
"""
CLAIM = """
mutation($code: String!, $device: String!) {
  claimProduct(code: $code, deviceFingerprint: $device) { claimedAt }
}
"""
TRANSFER = """
mutation($id: ID!, $to: String!) { transferProduct(productId: $id, to: $to) { status } }
"""
RECALL = """
mutation($id: ID!, $reason: String!) { recallProduct(productId: $id, reason: $reason) { status } }
"""
VERIFY = """
mutation($code: String!, $scan: ScanInput) { verifyProduct(code: $code, scan: $scan) { result } }
"""
CREATE_INTEGRATION = """
mutation($brandId: ID!, $name: String!, $type: IntegrationType!) {
  createIntegration(brandId: $brandId, name: $name, type: $type) { ingestKey integration { id } }
}
"""
INGEST = """
mutation($input: IngestEventInput!) { ingestEvent(input: $input) { event { sequence } } }
"""
