"""What requests did, for operators: logs, request lines, metrics, spans, traces."""
