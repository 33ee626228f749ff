"""The one door to botocore's undocumented internals.

The data plane (``_wire``) sends DynamoDB's hot calls itself, but reads every
error response exactly as the client would, verifies TLS against the CA
bundle the client would, and signs the path the client would sign
(docs/design.md, DynamoDB data plane). botocore exposes none of that as
documented API, so the four internals it takes live here, and nowhere else in
``storage/``:

- ``botocore.parsers.create_parser``: the protocol's response parser;
- ``client.exceptions.from_code``: the modeled exception class for an error
  code (the client factory's own lookup);
- ``botocore.httpsession.get_cert_path``: the CA bundle botocore verifies with;
- ``botocore.utils.normalize_url_path``: the path ``SigV4Auth`` signs;
- ``Session.register_component("data_loader", ...)`` and
  ``botocore.loaders.create_loader``: one loader for every session of the
  process, so botocore's data files (endpoints.json alone is 1.2 MB) are
  parsed once, not for every client (``share_data_loader``).

Checked against botocore 1.43.117 (aiobotocore 3.10.0). What holds them: the
error-path differential, the signing differential and the canary in
``tests/storage/dynamodb/``, which run whenever the lock moves.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from botocore.httpsession import get_cert_path  # type: ignore[import-untyped, unused-ignore]
from botocore.loaders import create_loader  # type: ignore[import-untyped, unused-ignore]
from botocore.parsers import create_parser  # type: ignore[import-untyped, unused-ignore]
from botocore.utils import normalize_url_path  # type: ignore[import-untyped, unused-ignore]

__all__ = ["ca_bundle", "parse_error", "share_data_loader", "signed_path"]


@cache
def _loader(search_path: str | None) -> Any:
    return create_loader(search_path)


def share_data_loader(session: Any) -> None:
    """A new session parses botocore's data files again for its first client
    (150 to 450 ms on a loaded 2-core machine, against 10 to 20 ms with the
    files already read); the process makes one client to check the table and
    one for the store, and a waiting ``serve`` one per check. The loader holds
    only what it read from those files, the same for every session with the
    same ``AWS_DATA_PATH``."""
    session.register_component("data_loader", _loader(session.get_config_variable("data_path")))


def ca_bundle() -> str:
    """The CA bundle botocore verifies TLS with (certifi's, or AWS_CA_BUNDLE's)."""
    path: str = get_cert_path(True)
    return path


def signed_path(path: str) -> str:
    """The endpoint's path as ``SigV4Auth`` normalises it before quoting."""
    normalized: str = normalize_url_path(path)
    return normalized


def parse_error(
    client: Any, operation: str, status: int, headers: Mapping[str, str], body: bytes
) -> Exception:
    """The exception aiobotocore's client raises for this response, built the
    way it builds it: botocore's parser over the output shape, then once more
    over the error's own shape for its modeled fields (CancellationReasons, Item)."""
    operation_model = client.meta.service_model.operation_model(operation)
    parser = create_parser(operation_model.service_model.resolved_protocol)
    response = {
        "headers": dict(headers),
        "status_code": status,
        "body": body,
        "context": {"operation_name": operation},
    }
    parsed: dict[str, Any] = parser.parse(response, operation_model.output_shape)
    code = parsed.get("Error", {}).get("Code")
    if code is not None:
        shape = operation_model.service_model.shape_for_error_code(code)
        if shape is not None:
            parsed.update(parser.parse(response, shape))
    # The client's retry handler, allowed one attempt (``client_config``), marks
    # every response so, and ClientError's message says it.
    parsed.setdefault("ResponseMetadata", {}).update(RetryAttempts=0, MaxAttemptsReached=True)
    error: Exception = client.exceptions.from_code(code)(parsed, operation)
    return error
