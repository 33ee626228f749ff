"""Proving the stored data consistent: ledgers, certificates, chains."""

from services.reconcile.report import Discrepancy, Report
from services.reconcile.run import reconcile

__all__ = ["Discrepancy", "Report", "reconcile"]
