"""The proofgate command, one module per subcommand."""
