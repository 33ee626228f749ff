"""The GraphQL endpoint: view, schema, extensions, prepared lane, caches, errors, execution."""
