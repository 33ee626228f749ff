"""GraphQL over WebSocket: open connections, the two protocols, frames, and closing on shutdown."""
