"""Proving the stored data consistent: ledgers, certificates, chains."""

from .report import Discrepancy, Report
from .run import reconcile

__all__ = ["Discrepancy", "Report", "reconcile"]
