from __future__ import annotations

import pytest

from domain.enums import ProductStatus
from domain.errors import BadUserInput, Conflict, ProofgateError
from domain.status import transition

A, T, R, F = (
    ProductStatus.ACTIVE,
    ProductStatus.TRANSFERRED,
    ProductStatus.RECALLED,
    ProductStatus.FLAGGED,
)
OK = None

MATRIX: dict[tuple[ProductStatus, ProductStatus], type[Exception] | None] = {
    (A, A): Conflict,
    (A, T): OK,
    (A, R): OK,
    (A, F): OK,
    (T, A): BadUserInput,
    (T, T): OK,
    (T, R): OK,
    (T, F): OK,
    (F, A): OK,
    (F, T): OK,
    (F, R): OK,
    (F, F): Conflict,
    (R, A): BadUserInput,
    (R, T): BadUserInput,
    (R, R): Conflict,
    (R, F): BadUserInput,
}


def test_matrix_is_complete() -> None:
    assert set(MATRIX) == {(a, b) for a in ProductStatus for b in ProductStatus}


@pytest.mark.parametrize(("current", "target"), list(MATRIX))
def test_transition(current: ProductStatus, target: ProductStatus) -> None:
    error = MATRIX[current, target]
    if error is None:
        assert transition(current, target) is target
    else:
        with pytest.raises(error) as info:
            transition(current, target)
        assert type(info.value) is error
        assert isinstance(info.value, ProofgateError)
        assert info.value.extensions["status"] == current.value


def test_recalled_product_cannot_be_transferred_message() -> None:
    with pytest.raises(BadUserInput, match="recalled product cannot be transferred"):
        transition(R, T)


def test_second_recall_is_conflict() -> None:
    with pytest.raises(Conflict, match="already recalled"):
        transition(transition(A, R), R)
