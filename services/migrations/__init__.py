"""Store versions and ``proofgate migrate`` (docs/design.md, "Store versions")."""

from .run import Plan, migrate, plan
from .state import StoreState, read_state, require_current, stamp_new_store
from .steps import BASELINE_VERSION, STEPS, Progress, Step, expected_version

__all__ = [
    "BASELINE_VERSION",
    "STEPS",
    "Plan",
    "Progress",
    "Step",
    "StoreState",
    "expected_version",
    "migrate",
    "plan",
    "read_state",
    "require_current",
    "stamp_new_store",
]
