"""What a served process builds and runs: storage backend, services, pipeline, hooks."""
