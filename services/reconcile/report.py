"""What reconcile found: counts, and every discrepancy in words."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Discrepancy", "Report"]


@dataclass(frozen=True)
class Discrepancy:
    brand_id: str
    subject: str
    """What is wrong, e.g. ``balance CREDIT``, ``transaction ltx_...``, ``product 01J...``."""
    problem: str

    def __str__(self) -> str:
        return f"brand {self.brand_id}: {self.subject}: {self.problem}"


@dataclass
class Report:
    brands: int = 0
    transactions: int = 0
    postings: int = 0
    products: int = 0
    discrepancies: list[Discrepancy] = field(default_factory=list)
    unsettled: list[str] = field(default_factory=list)
    """Brands whose ledger moved during every attempt to read it: not checked."""

    @property
    def ok(self) -> bool:
        return not self.discrepancies

    @property
    def complete(self) -> bool:
        return not self.unsettled

    def merge(self, other: Report) -> None:
        self.transactions += other.transactions
        self.postings += other.postings
        self.products += other.products
        self.discrepancies.extend(other.discrepancies)

    def add(self, brand_id: str, subject: str, problem: str) -> None:
        self.discrepancies.append(Discrepancy(brand_id, subject, problem))

    def render(self) -> str:
        checked = (
            f"Checked {self.brands} brands, {self.transactions} ledger transactions, "
            f"{self.postings} postings, {self.products} products."
        )
        lines = [checked]
        if self.unsettled:
            lines.append(
                f"INCOMPLETE: the ledger of {len(self.unsettled)} brands moved during every "
                "read; run reconcile again when it is quieter: " + ", ".join(self.unsettled)
            )
        if self.ok:
            lines.append("OK: every balance, transaction, certificate and chain verifies.")
            return "\n".join(lines) + "\n"
        lines.append(f"FAILED: {len(self.discrepancies)} discrepancies")
        lines.extend(f"  - {discrepancy}" for discrepancy in self.discrepancies)
        return "\n".join(lines) + "\n"
