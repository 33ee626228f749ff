"""What requests did, for operators: logs, request lines, metrics, spans, traces,
the fast paths' fallbacks."""

# The public modules; importing the package loads none of them (the CLI jobs read
# settings without loading the GraphQL layer, docs/design.md, "Layout").
__all__ = [
    "fallbacks",
    "log_lines",
    "logs",
    "metrics",
    "observation",
    "request_log",
    "spans",
    "trace_extension",
    "traced_storage",
]
