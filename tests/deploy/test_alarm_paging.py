"""deploy/service.yaml pages someone: the alert topic's key lets the alarm
services publish, an alarm fires when no task serves and when the load
balancer answers 5xx itself, health alarms treat silence as an outage, and
the Prometheus rules notice when no metrics arrive at all.

No linter flags any of these, so each gap has a planted control below.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from tests.deploy._templates import DEPLOY, load, resources

SERVICE = DEPLOY / "service.yaml"
PUBLISHERS = {"cloudwatch.amazonaws.com", "aps.amazonaws.com"}
KEY_ACTIONS = {"kms:GenerateDataKey*", "kms:Decrypt"}
HEALTH_METRICS = {"HealthyHostCount", "UnHealthyHostCount"}


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _topic_key(template: dict[str, Any]) -> dict[str, Any] | None:
    """The template's KMS key the alert topic is encrypted with, if any."""
    (topic,) = resources(template, "AWS::SNS::Topic").values()
    reference = topic["Properties"].get("KmsMasterKeyId")
    if isinstance(reference, dict):
        name = reference.get("Ref") or reference.get("Fn::GetAtt", [None])[0]
        key = template["Resources"].get(name)
        if key is not None and key["Type"] == "AWS::KMS::Key":
            return dict(key)
    return None


def _granted_to(key: dict[str, Any]) -> dict[str, set[str]]:
    """For each service principal, the KMS actions the key policy allows it."""
    granted: dict[str, set[str]] = {}
    for statement in key["Properties"]["KeyPolicy"]["Statement"]:
        if statement["Effect"] != "Allow":
            continue
        for service in _listed(statement.get("Principal", {}).get("Service", [])):
            granted.setdefault(service, set()).update(_listed(statement["Action"]))
    return granted


def _alarms(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [alarm["Properties"] for alarm in resources(template, "AWS::CloudWatch::Alarm").values()]


def _rule_exprs(template: dict[str, Any]) -> list[str]:
    (namespace,) = resources(template, "AWS::APS::RuleGroupsNamespace").values()
    groups = yaml.safe_load(namespace["Properties"]["Data"])["groups"]
    return [rule["expr"] for group in groups for rule in group["rules"]]


def paging_gaps(template: dict[str, Any]) -> set[str]:
    """The names of what keeps an alert from reaching the on-call."""
    gaps: set[str] = set()
    key = _topic_key(template)
    if key is None or any(
        not _granted_to(key).get(service, set()) >= KEY_ACTIONS for service in PUBLISHERS
    ):
        gaps.add("topic key")
    alarms = _alarms(template)
    if not any(
        a["MetricName"] == "HealthyHostCount"
        and a["ComparisonOperator"] == "LessThanThreshold"
        and a["Threshold"] == 1
        and a.get("AlarmActions")
        for a in alarms
    ):
        gaps.add("no healthy target")
    if not any(
        a["MetricName"] == "HTTPCode_ELB_5XX_Count" and a.get("AlarmActions") for a in alarms
    ):
        gaps.add("load balancer 5xx")
    health = [a for a in alarms if a["MetricName"] in HEALTH_METRICS]
    if not health or any(a.get("TreatMissingData") != "breaching" for a in health):
        gaps.add("missing data")
    exprs = " ".join(_rule_exprs(template))
    if "absent(up" not in exprs or 'up{job="proofgate"} == 0' not in exprs:
        gaps.add("metrics path")
    return gaps


def planted(old: str, new: str) -> dict[str, Any]:
    text = SERVICE.read_text()
    assert old in text, old
    loaded: dict[str, Any] = yaml.safe_load(text.replace(old, new, 1))
    return loaded


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load(SERVICE)


def test_alerts_reach_the_on_call(template: dict[str, Any]) -> None:
    assert paging_gaps(template) == set()


@pytest.mark.parametrize(
    ("old", "new", "gap"),
    [
        pytest.param(
            "KmsMasterKeyId:\n        Fn::GetAtt: [AlertKey, Arn]",
            "KmsMasterKeyId: alias/aws/sns",
            "topic key",
            id="aws-managed-key",
        ),
        pytest.param(
            "                - aps.amazonaws.com\n", "", "topic key", id="prometheus-not-granted"
        ),
        pytest.param("              - kms:Decrypt\n", "", "topic key", id="no-decrypt"),
        pytest.param(
            "MetricName: HealthyHostCount",
            "MetricName: HealthyHostCountPerZone",
            "no healthy target",
            id="no-healthy-host-alarm",
        ),
        pytest.param(
            "MetricName: HTTPCode_ELB_5XX_Count",
            "MetricName: HTTPCode_Target_5XX_Count",
            "load balancer 5xx",
            id="targets-5xx-only",
        ),
        pytest.param(
            "TreatMissingData: breaching",
            "TreatMissingData: notBreaching",
            "missing data",
            id="silence-is-fine",
        ),
        pytest.param(
            'expr: absent(up{job="proofgate"})',
            "expr: vector(0) > 1",
            "metrics path",
            id="no-absent-rule",
        ),
        pytest.param(
            'expr: up{job="proofgate"} == 0',
            "expr: vector(0) > 1",
            "metrics path",
            id="no-up-rule",
        ),
    ],
)
def test_each_planted_gap_is_caught(old: str, new: str, gap: str) -> None:
    assert paging_gaps(planted(old, new)) == {gap}
