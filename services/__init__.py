"""Commands behind the mutations, the threat pipeline, ledger services,
reconciliation and idempotency: everything that is neither GraphQL, nor
storage, nor pure rules. See docs/design.md, "Layout"."""
