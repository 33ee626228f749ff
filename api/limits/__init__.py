"""What an operation may cost: document checks, cost, reads, rate limits, throttles."""
