"""proofgate: a GraphQL gateway for product-authenticity data."""

__version__ = "0.1.0"
