"""GraphQL over WebSocket: open connections, the two protocols, frames, and closing on shutdown."""

# The public modules; importing the package loads none of them (the CLI jobs read
# settings without loading the GraphQL layer, docs/design.md, "Layout").
__all__ = [
    "close_on_shutdown",
    "connections",
    "frames",
    "protocols",
]
