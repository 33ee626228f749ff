"""DynamoDB's limits, named once and imported by both backends and the tests.

The embedded store enforces the same numbers with the same error types, so code
that works on a laptop works in production.
"""

from __future__ import annotations

ITEM_MAX_BYTES = 400 * 1024
PARTITION_KEY_MAX_BYTES = 2048
SORT_KEY_MAX_BYTES = 1024
QUERY_PAGE_MAX_BYTES = 1024 * 1024
BATCH_GET_MAX_KEYS = 100
BATCH_GET_MAX_BYTES = 16 * 1024 * 1024
TRANSACT_MAX_ITEMS = 100
TRANSACT_MAX_BYTES = 4 * 1024 * 1024
NUMBER_MAX_DIGITS = 38
# Magnitudes from 1E-130 to 9.99...E+125: the adjusted exponent's range.
NUMBER_MIN_EXPONENT = -130
NUMBER_MAX_EXPONENT = 125

READ_UNIT_BYTES = 4 * 1024
WRITE_UNIT_BYTES = 1024

BATCH_GET_MAX_ATTEMPTS = 8
BACKOFF_BASE_SECONDS = 0.025
BACKOFF_CAP_SECONDS = 1.0

PAGE_SIZE_DEFAULT = 20
PAGE_SIZE_MAX = 100
