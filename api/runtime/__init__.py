"""What a served process builds and runs: storage backend, services, pipeline,
the HTTP protocol, hooks."""

# The public modules; importing the package loads none of them (the CLI jobs read
# settings without loading the GraphQL layer, docs/design.md, "Layout").
__all__ = [
    "backend",
    "draining",
    "gc_freeze",
    "http_protocol",
    "pipeline",
    "redis_check",
    "resolver_services",
    "startup_hook",
]
