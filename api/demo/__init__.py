"""The demo data proofgate serve --demo loads through the real GraphQL operations."""
