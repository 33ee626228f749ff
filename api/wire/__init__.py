"""What goes over the wire, below every route and transport: the JSON a
client sends decoded strictly (``request_json``), JSON encoded once
(``json_response``), and errors in GraphQL's shape (``errors``)."""

# The public modules; importing the package loads none of them (the CLI jobs read
# settings without loading the GraphQL layer, docs/design.md, "Layout").
__all__ = [
    "errors",
    "json_response",
    "request_json",
]
