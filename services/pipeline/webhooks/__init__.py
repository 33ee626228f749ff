"""Webhook delivery: one signed POST per outbox item, over a deliberately small HTTP client."""
