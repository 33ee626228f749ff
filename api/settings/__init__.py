"""The PROOFGATE_* environment, read once into typed settings, one section per concern."""
