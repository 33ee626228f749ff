"""deploy/rules.guard, run by cfn-guard's own engine (cfn-guard-rs) over every
template, and shown to catch a planted violation of each rule."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

from tests.deploy._templates import DEPLOY, TEMPLATES, guard, load


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda path: path.name)
def test_every_template_keeps_the_rules(path: Path) -> None:
    assert guard(load(path)) == []


PLANTED = [
    ("service.yaml", "- dynamodb:Query", "- dynamodb:*", "iam_no_wildcards"),
    (
        "service.yaml",
        "Resource:\n                  - Ref: SecretArn\n                  - Ref: RedisUrlSecret",
        "Resource: '*'",
        "iam_no_wildcards",
    ),
    (
        "service.yaml",
        "LogDriver: awslogs",
        "LogDriver: none",
        "containers_log_and_keep_secrets_secret",
    ),
    (
        "service.yaml",
        "Value: json",
        "Value: json\n            - Name: PROOFGATE_ADMIN_KEY\n              Value: plain",
        "containers_log_and_keep_secrets_secret",
    ),
    ("service.yaml", "AssignPublicIp: DISABLED", "AssignPublicIp: ENABLED", "tasks_stay_private"),
    (
        "service.yaml",
        "      AuthToken:\n",
        "      AuthTokenOff:\n",
        "redis_encrypted",
    ),
    (
        "table.yaml",
        "DeletionProtectionEnabled: true",
        "DeletionProtectionEnabled: false",
        "table_retained_with_recovery",
    ),
    (
        "service.yaml",
        "TransitEncryptionEnabled: true",
        "TransitEncryptionEnabled: false",
        "redis_encrypted",
    ),
    (
        "service.yaml",
        "HealthCheckPath: /health",
        "HealthCheckPath: /ready",
        "targets_checked_for_liveness",
    ),
    (
        "service.yaml",
        'anomaly_mitigation\n          Value: "on"',
        'anomaly_mitigation\n          Value: "off"',
        "targets_checked_for_liveness",
    ),
    ("service.yaml", "RetentionInDays: 30", "Tags: []", "logs_expire"),
    (
        "table.yaml",
        "PointInTimeRecoveryEnabled: true",
        "PointInTimeRecoveryEnabled: false",
        "table_retained_with_recovery",
    ),
    (
        "table.yaml",
        "DeletionPolicy: Retain",
        "DeletionPolicy: Delete",
        "table_retained_with_recovery",
    ),
]


@pytest.mark.parametrize(
    ("name", "old", "new", "rule"), PLANTED, ids=[p[3] + "-" + p[2].split()[-1] for p in PLANTED]
)
def test_a_planted_violation_breaks_its_rule(name: str, old: str, new: str, rule: str) -> None:
    text = (DEPLOY / name).read_text()
    assert text.count(old) >= 1
    assert guard(yaml.safe_load(text.replace(old, new))) == [rule]
