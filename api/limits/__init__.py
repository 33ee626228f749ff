"""What an operation may cost: document checks (and their cache), cost, reads,
rate limits, throttles."""

# The public modules; importing the package loads none of them (the CLI jobs read
# settings without loading the GraphQL layer, docs/design.md, "Layout").
__all__ = [
    "auth_throttle",
    "cost",
    "document_cache",
    "field_cost",
    "ratelimit",
    "read_budget",
    "refuse_operation",
    "shared_auth_throttle",
    "shared_ratelimit",
    "subscription_cost",
    "tail_cost",
    "validation",
]
