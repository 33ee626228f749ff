"""The operation registry: checked at start-up, one line naming a bad file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _asgi import environment
from graphql import parse

from api.cli.main import main
from api.graphql.schema import schema
from api.http.explorer_examples import default_operations
from api.limits.cost import cost_model
from api.operations.defaults import default_documents
from api.operations.registry import load_registry
from api.settings.limits import Limits
from domain.errors import ConfigurationError
from storage.limits import PAGE_SIZE_MAX
from tests._support.ports import free_port

PRODUCT = """query ProductByCode($code: String!) {
  productByCode(code: $code) { id name brand { name } }
}
"""
PAGED = """query Gallery($n: Int) {
  explore(first: $n) { edges { node { id } } }
}
"""


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    return path


def test_default_set_is_the_explorer_examples() -> None:
    registry = load_registry(schema, Limits(), None, default_operations())
    kinds = {name: op.kind for name, op in registry.by_name.items()}
    assert kinds == {
        "Explore": "query",
        "Verify": "query",
        "RecordScan": "mutation",
        "MyBrand": "query",
        "Threats": "query",
        "LiveAlerts": "subscription",
        "Analytics": "query",
        "Ingest": "mutation",
        "Node": "query",
    }
    assert "AP12" in registry.by_name["Threats"].access_patterns
    assert registry.by_name["Verify"].access_patterns == ("AP01", "AP04", "AP05", "AP09")


def test_defaults_over_the_operators_limits_are_left_out() -> None:
    """Lowered limits are the operator's choice; the examples are not theirs."""
    full = load_registry(schema, Limits(), None, default_operations())
    budget = full.by_name["Verify"].cost - 1
    trimmed = load_registry(schema, Limits(max_cost=budget), None, default_operations())
    assert "Verify" not in trimmed.by_name
    assert set(trimmed.by_name) == {n for n, op in full.by_name.items() if op.cost <= budget}


def test_cost_is_measured_at_the_largest_variables(tmp_path: Path) -> None:
    write(tmp_path, "gallery.graphql", PAGED)
    gallery = load_registry(schema, Limits(), tmp_path).by_name["Gallery"]
    model, document = cost_model(schema), parse(PAGED)
    assert gallery.cost == model.measure(document, "Gallery", {"n": PAGE_SIZE_MAX})
    assert gallery.cost > model.measure(document, "Gallery", {}) > 0
    over = gallery.cost - 1
    with pytest.raises(ConfigurationError, match=rf"Gallery costs {gallery.cost} .* of {over}"):
        load_registry(schema, Limits(max_cost=over), tmp_path)


def test_hash_is_the_sha256_of_the_file_text(tmp_path: Path) -> None:
    import hashlib

    write(tmp_path, "product.graphql", PRODUCT)
    registry = load_registry(schema, Limits(), tmp_path)
    digest = hashlib.sha256(PRODUCT.encode()).hexdigest()
    assert registry.by_name["ProductByCode"].sha256 == digest
    assert registry.by_hash[digest] == PRODUCT
    assert registry.trusts(PRODUCT)
    assert not registry.trusts(PRODUCT + " ")


@pytest.mark.parametrize(
    ("text", "limits", "reason"),
    [
        ("query Broken {", Limits(), "Syntax Error"),
        ("query Nope { nope }", Limits(), "Cannot query field 'nope'"),
        ("{ health { status } }", Limits(), "every operation must be named"),
        ("query Deep { brands { edges { node { products { edges { node { id } } } } } } }",
         Limits(max_depth=3), "exceeds maximum operation depth"),
        ("query Many { a: health { status } b: health { status } }",
         Limits(max_aliases=1), "aliases"),
        ("query Types { __schema { types { name } } }",
         Limits(introspection=False), "introspection"),
    ],
)  # fmt: skip
def test_a_bad_file_is_named_with_its_reason(
    tmp_path: Path, text: str, limits: Limits, reason: str
) -> None:
    write(tmp_path, "good.graphql", PRODUCT)
    bad = write(tmp_path, "bad.graphql", text)
    with pytest.raises(ConfigurationError) as raised:
        load_registry(schema, limits, tmp_path)
    message = raised.value.message
    assert message.startswith(f"Invalid operation file {bad}: ")
    assert reason.lower() in message.lower()
    assert "\n" not in message


def test_a_name_registered_twice_names_both_files(tmp_path: Path) -> None:
    write(tmp_path, "a.graphql", PRODUCT)
    write(tmp_path, "b.graphql", PRODUCT.replace("name brand", "brand"))
    clash = r"b\.graphql: operation ProductByCode .*a\.graphql"
    with pytest.raises(ConfigurationError, match=clash):
        load_registry(schema, Limits(), tmp_path)


def test_a_default_name_cannot_be_taken(tmp_path: Path) -> None:
    write(tmp_path, "verify.graphql", "query Verify { health { status } }")
    with pytest.raises(ConfigurationError, match="already registered by <explorer examples>"):
        load_registry(schema, Limits(), tmp_path, default_operations())


def test_missing_directory_is_a_setting_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"PROOFGATE_OPERATIONS_DIR: .* not a directory"):
        load_registry(schema, Limits(), tmp_path / "absent")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_start_up_with_a_bad_file_fails_with_one_line(tmp_path: Path, workers: str) -> None:
    operations = tmp_path / "operations"
    operations.mkdir()
    write(operations, "good.graphql", PRODUCT)
    bad = write(operations, "bad.graphql", "query Nope { xyzzy }")
    variables = environment(
        tmp_path, PROOFGATE_OPERATIONS_DIR=str(operations), PROOFGATE_PORT=str(free_port())
    )
    env = {**os.environ, **variables}
    done = subprocess.run(
        [sys.executable, "-m", "api.cli.main", "serve", "--workers", workers],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    reason = "Cannot query field 'xyzzy' on type 'Query'."
    assert done.stderr.splitlines() == [f"proofgate: error: Invalid operation file {bad}: {reason}"]


def test_operations_list_prints_cost_and_access_patterns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "product.graphql", PRODUCT)
    assert main(["operations", "list", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["operation", "kind", "cost", "access", "patterns", "sha256", "file"]
    row = next(line.split() for line in lines if line.startswith("ProductByCode"))
    assert row[1:4] == ["query", "3", "AP01,AP04,AP05"]
    assert row[-1] == str(tmp_path / "product.graphql")
    assert len(lines) == 1 + len(default_documents()) + 1


def test_operations_check_exits_1_on_a_bad_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "product.graphql", PRODUCT)
    assert main(["operations", "check", str(tmp_path)]) == 0
    assert (
        capsys.readouterr().out
        == f"{len(default_documents()) + 1} operations registered, all within the limits\n"
    )
    write(tmp_path, "zz.graphql", "query Broken {")
    assert main(["operations", "check", str(tmp_path)]) == 1
    assert f"Invalid operation file {tmp_path / 'zz.graphql'}" in capsys.readouterr().err
