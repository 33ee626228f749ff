"""Threat alerts: drafted by the rules, stamped, stored once per key, known to this process."""
