"""The outbox: items stored and leased, what the relay takes on, the backlog, parked items."""
