"""deploy/service.yaml against the code it deploys: the task role grants what
the driver calls, the secrets are the ones the settings need, the stop
timeouts outlast the shutdown window, and every runbook metric alerts."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from api.cli.secrets import secrets_document
from api.settings.gateway import Environment
from api.settings.keyfile import SHARED_SECRETS
from api.settings.pipeline import PipelineVariables
from storage.table import TABLE
from tests._support.source import ROOT
from tests.deploy._dynamodb_calls import DRIVER, called, iam_actions, serving_files
from tests.deploy._templates import DEPLOY, lint, load, resources

SERVICE = DEPLOY / "service.yaml"
RUNBOOK = ROOT / "docs" / "operations.md"
_ARN = "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${TableName}"


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load(SERVICE)


def gateway(template: dict[str, Any]) -> dict[str, Any]:
    (task,) = resources(template, "AWS::ECS::TaskDefinition").values()
    containers: list[dict[str, Any]] = task["Properties"]["ContainerDefinitions"]
    (container,) = [c for c in containers if c["Name"] == "gateway"]
    return container


def environment(template: dict[str, Any]) -> dict[str, Any]:
    return {entry["Name"]: entry["Value"] for entry in gateway(template)["Environment"]}


def attribute(resource: dict[str, Any], group: str, key: str) -> str:
    (value,) = [a["Value"] for a in resource["Properties"][group] if a["Key"] == key]
    return str(value)


# --- the task role against the driver -----------------------------------------


def dynamodb_grants(template: dict[str, Any]) -> tuple[set[str], set[str]]:
    """Actions and resources of every statement of every role that names DynamoDB."""
    actions: set[str] = set()
    granted_on: set[str] = set()
    for role in resources(template, "AWS::IAM::Role").values():
        for policy in role["Properties"].get("Policies", []):
            for statement in policy["PolicyDocument"]["Statement"]:
                named = statement["Action"]
                named = [named] if isinstance(named, str) else named
                if any(action.startswith("dynamodb:") for action in named):
                    actions.update(named)
                    granted_on.update(r["Fn::Sub"] for r in statement["Resource"])
    return actions, granted_on


def drift(template: dict[str, Any], driver: Path = DRIVER) -> dict[str, set[str]]:
    """What the role grants beyond the driver's calls, and what it lacks."""
    needed = iam_actions(called(serving_files(driver)))
    granted, _ = dynamodb_grants(template)
    return {"extra": granted - needed, "missing": needed - granted}


def test_the_calls_are_seen() -> None:
    """The scan finds the reads and writes every request makes, and a
    transaction as the kinds of its items."""
    calls = called(serving_files())
    assert {"GetItem", "Query", "TransactWriteItems"} <= calls
    assert "Scan" not in calls
    assert "dynamodb:ConditionCheckItem" in iam_actions(calls)


def test_the_task_role_grants_exactly_what_the_driver_calls(template: dict[str, Any]) -> None:
    assert drift(template) == {"extra": set(), "missing": set()}


def test_a_planted_extra_action_is_caught(template: dict[str, Any]) -> None:
    planted = yaml.safe_load(
        SERVICE.read_text().replace(
            "- dynamodb:Query", "- dynamodb:Query\n                  - dynamodb:Scan"
        )
    )
    assert drift(planted)["extra"] == {"dynamodb:Scan"}


def test_a_planted_driver_call_is_caught(template: dict[str, Any], tmp_path: Path) -> None:
    driver = tmp_path / "dynamodb"
    shutil.copytree(DRIVER, driver)
    source = driver / "driver.py"
    source.write_text(
        source.read_text() + "\n\nasync def _forget(client):\n    await client.batch_write_item()\n"
    )
    assert drift(template, driver)["missing"] == {"dynamodb:BatchWriteItem"}


def test_table_creation_is_not_the_services(template: dict[str, Any]) -> None:
    provisioning = iam_actions(called([DRIVER / "_table.py"]))
    assert "dynamodb:CreateTable" in provisioning
    granted, _ = dynamodb_grants(template)
    assert not (provisioning - iam_actions(called(serving_files()))) & granted


def test_the_role_names_exactly_the_table_and_its_indexes(template: dict[str, Any]) -> None:
    _, granted_on = dynamodb_grants(template)
    indexes = {f"{_ARN}/index/{index.name.value}" for index in TABLE.global_secondary}
    assert granted_on == {_ARN, *indexes}


# --- settings, secrets, timeouts -------------------------------------------------


def test_the_secrets_come_from_secrets_manager(template: dict[str, Any], tmp_path: Path) -> None:
    """Exactly the secrets a DynamoDB fleet must share, none in plain text, each
    a key of the secret `proofgate init-secrets --json` writes."""
    shared = {e["Name"] for e in gateway(template)["Secrets"] if e["Name"] != "PROOFGATE_REDIS_URL"}
    assert shared == {secret.variable for secret in SHARED_SECRETS}
    assert shared == set(secrets_document(tmp_path / "fleet"))
    assert not (shared | {"PROOFGATE_REDIS_URL"}) & set(environment(template))
    for entry in gateway(template)["Secrets"]:
        if entry["Name"] in shared:
            assert entry["ValueFrom"] == {"Fn::Sub": f"${{SecretArn}}:{entry['Name']}::"}


def test_redis_asks_for_a_token_the_template_never_holds(template: dict[str, Any]) -> None:
    """The AUTH token is generated by Secrets Manager; the Redis group and the
    gateway's URL both resolve it from there, so it is in no parameter,
    environment value or output."""
    (redis,) = resources(template, "AWS::ElastiCache::ReplicationGroup").values()
    token = "{{resolve:secretsmanager:${RedisAuthToken}:SecretString}}"
    assert redis["Properties"]["AuthToken"] == {"Fn::Sub": token}
    assert "GenerateSecretString" in template["Resources"]["RedisAuthToken"]["Properties"]
    url = template["Resources"]["RedisUrlSecret"]["Properties"]["SecretString"]["Fn::Sub"]
    assert url.startswith(f"rediss://:{token}@")
    (entry,) = [e for e in gateway(template)["Secrets"] if e["Name"] == "PROOFGATE_REDIS_URL"]
    assert entry["ValueFrom"] == {"Ref": "RedisUrlSecret"}
    assert "resolve:" not in str(template["Outputs"])


def test_every_variable_set_is_one_the_gateway_reads(template: dict[str, Any]) -> None:
    names = set(environment(template)) | {e["Name"] for e in gateway(template)["Secrets"]}
    assert names - set(Environment.variables()) == set()
    env = environment(template)
    assert env["PROOFGATE_BACKEND"] == "dynamodb"
    assert env["PROOFGATE_LOG_FORMAT"] == "json"
    assert env["PROOFGATE_HOST"] == "0.0.0.0"


def test_stopping_outlasts_the_shutdown_window(template: dict[str, Any]) -> None:
    shutdown = int(environment(template)["PROOFGATE_SHUTDOWN_SECONDS"])
    stop_timeout = gateway(template)["StopTimeout"]
    (group,) = resources(template, "AWS::ElasticLoadBalancingV2::TargetGroup").values()
    draining = int(
        attribute(group, "TargetGroupAttributes", "deregistration_delay.timeout_seconds")
    )
    assert shutdown < stop_timeout <= 120  # Fargate's ceiling
    assert shutdown < draining


def test_tasks_start_while_redis_does_not_answer(template: dict[str, Any]) -> None:
    """A task that refused to start without Redis would be started again into
    the same outage; the table's tail carries alerts meanwhile (docs/design.md,
    Degraded start)."""
    container = gateway(template)
    named = {entry["Name"] for entry in [*container["Environment"], *container["Secrets"]]}
    assert "PROOFGATE_REDIS_URL" in named
    assert environment(template)["PROOFGATE_REDIS_START_DEGRADED"] == "1"


def test_the_load_balancer_suits_websockets_and_liveness(template: dict[str, Any]) -> None:
    (balancer,) = resources(template, "AWS::ElasticLoadBalancingV2::LoadBalancer").values()
    idle = int(attribute(balancer, "LoadBalancerAttributes", "idle_timeout.timeout_seconds"))
    keepalive_ms = PipelineVariables.model_fields["ws_keepalive_ms"].default
    assert idle * 1000 >= 4 * keepalive_ms
    (group,) = resources(template, "AWS::ElasticLoadBalancingV2::TargetGroup").values()
    assert group["Properties"]["HealthCheckPath"] == "/health"
    assert "/health" in " ".join(gateway(template)["HealthCheck"]["Command"])


def test_a_brownout_replaces_no_task(template: dict[str, Any]) -> None:
    """What ECS acts on (the load balancer's check, the container's check)
    is liveness only; a task erring alone loses traffic by anomaly
    mitigation, which needs the weighted random algorithm; a task gets the
    grace period to bind and pass the check twice."""
    (group,) = resources(template, "AWS::ElasticLoadBalancingV2::TargetGroup").values()
    properties = group["Properties"]
    assert "/ready" not in (
        properties["HealthCheckPath"],
        *gateway(template)["HealthCheck"]["Command"],
    )
    assert attribute(group, "TargetGroupAttributes", "load_balancing.algorithm.type") == (
        "weighted_random"
    )
    assert (
        attribute(group, "TargetGroupAttributes", "load_balancing.algorithm.anomaly_mitigation")
        == "on"
    )
    (service,) = resources(template, "AWS::ECS::Service").values()
    to_healthy = properties["HealthCheckIntervalSeconds"] * properties["HealthyThresholdCount"]
    assert service["Properties"]["HealthCheckGracePeriodSeconds"] >= 2 * to_healthy
    # Replacement first: ECS starts a task before stopping an unhealthy one.
    assert service["Properties"]["DeploymentConfiguration"]["MaximumPercent"] >= 200


def test_open_files_exceed_the_connection_limit(template: dict[str, Any]) -> None:
    (nofile,) = [u for u in gateway(template)["Ulimits"] if u["Name"] == "nofile"]
    assert nofile["SoftLimit"] > int(environment(template)["PROOFGATE_MAX_CONNECTIONS"])


def test_both_scaling_signals_are_there(template: dict[str, Any]) -> None:
    policies = resources(template, "AWS::ApplicationAutoScaling::ScalingPolicy").values()
    configs = [p["Properties"]["TargetTrackingScalingPolicyConfiguration"] for p in policies]
    predefined = {
        c.get("PredefinedMetricSpecification", {}).get("PredefinedMetricType") for c in configs
    }
    metrics = {
        m["MetricStat"]["Metric"]["MetricName"]
        for c in configs
        for m in c.get("CustomizedMetricSpecification", {}).get("Metrics", [])
        if "MetricStat" in m
    }
    assert "ECSServiceAverageCPUUtilization" in predefined
    assert "ActiveConnectionCount" in metrics


# --- alerts ------------------------------------------------------------------------


def runbook_metrics(text: str) -> set[str]:
    """The metrics named in the lead of each runbook entry."""
    section = text.split("## Runbook", 1)[1].split("\n## ", 1)[0]
    leads = re.findall(r"^- \*\*(.+?)\*\*", section, re.MULTILINE | re.DOTALL)
    return {name for lead in leads for name in re.findall(r"proofgate_[a-z_]+", lead)}


def alerted_metrics(template: dict[str, Any]) -> set[str]:
    (namespace,) = resources(template, "AWS::APS::RuleGroupsNamespace").values()
    groups = yaml.safe_load(namespace["Properties"]["Data"])["groups"]
    exprs = " ".join(rule["expr"] for group in groups for rule in group["rules"])
    return set(re.findall(r"proofgate_[a-z_]+", exprs))


def unalerted(template: dict[str, Any], runbook: str) -> set[str]:
    alerted = alerted_metrics(template)
    return {
        m for m in runbook_metrics(runbook) if m not in alerted and f"{m}_bucket" not in alerted
    }


def test_every_runbook_metric_has_an_alert(template: dict[str, Any]) -> None:
    runbook = RUNBOOK.read_text()
    assert len(runbook_metrics(runbook)) >= 8
    assert unalerted(template, runbook) == set()


def test_a_new_runbook_entry_without_an_alert_is_caught(template: dict[str, Any]) -> None:
    runbook = RUNBOOK.read_text().replace(
        "## Runbook\n", "## Runbook\n\n- **`proofgate_new_thing` above 0.** Planted.\n", 1
    )
    assert unalerted(template, runbook) == {"proofgate_new_thing"}


# --- the linter -------------------------------------------------------------------


def test_cfn_lint_finds_nothing() -> None:
    assert lint(SERVICE) == []


def test_cfn_lint_catches_a_broken_service(tmp_path: Path) -> None:
    broken = tmp_path / "service.yaml"
    broken.write_text(SERVICE.read_text().replace("LaunchType: FARGATE", "LaunchType: LAPTOP"))
    assert any("LAPTOP" in problem for problem in lint(broken))


def test_every_image_is_pinned_by_digest(template: dict[str, Any]) -> None:
    """The gateway's image is a parameter that must carry a digest; the
    collector's default carries one (Renovate moves it, renovate.json)."""
    digest = r".+@sha256:[0-9a-f]{64}"
    collector = template["Parameters"]["CollectorImage"]
    assert re.fullmatch(digest, collector["Default"])
    for name in ("Image", "CollectorImage"):
        pattern = template["Parameters"][name]["AllowedPattern"]
        assert re.fullmatch(pattern, collector["Default"])
        assert not re.fullmatch(
            pattern, "public.ecr.aws/aws-observability/aws-otel-collector:v0.43.3"
        )
