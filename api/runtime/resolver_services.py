"""The per-process collaborators the resolvers share, built from settings once
the store is open."""

from __future__ import annotations

import logging
import os

from api.settings.gateway import Settings
from api.settings.key_ring import new_signing_key_pem, parse_signing_key, parse_verifying_keys
from api.settings.keyfile import new_hash_salt, read_or_create
from api.settings.secrets import base64url_bytes
from domain.errors import ConfigurationError
from domain.identifiers import SALT_MIN_BYTES, hash_api_key
from domain.signing import KeyRing, SigningKey
from services.auth import KeyCache
from services.context import Services
from services.pipeline import Pipeline
from services.webhooks.selections import WebhookSelections
from storage import Storage

__all__ = ["build_services", "load_hash_salt", "load_key_ring"]

logger = logging.getLogger("proofgate.api")


def load_hash_salt(settings: Settings) -> bytes:
    if settings.hash_salt is not None:
        return settings.hash_salt
    if settings.hash_salt_file is None:
        logger.warning(
            "No hash salt configured: device and IP hashes will not match after a restart"
        )
        return os.urandom(32)
    text = read_or_create(settings.hash_salt_file, new_hash_salt)
    salt = base64url_bytes(text)
    if len(salt) < SALT_MIN_BYTES:
        raise ConfigurationError(
            f"Key file {settings.hash_salt_file} holds fewer than {SALT_MIN_BYTES} bytes"
        )
    return salt


def load_key_ring(settings: Settings) -> KeyRing:
    retired = [
        key
        for pem in settings.verifying_keys
        for key in parse_verifying_keys(pem, "verifying keys")
    ]
    if settings.signing_key is not None:
        active = parse_signing_key(settings.signing_key, "settings")
    elif settings.signing_key_file is not None:
        path = settings.signing_key_file
        active = parse_signing_key(read_or_create(path, new_signing_key_pem), f"key file {path}")
    else:
        logger.warning("No signing key configured: certificates are signed with a throwaway key")
        active = SigningKey.generate()
    return KeyRing.of(active, retired)


def build_services(
    settings: Settings,
    storage: Storage,
    pipeline: Pipeline | None = None,
    selections: WebhookSelections | None = None,
) -> Services:
    """With ``pipeline``, commands write through its committing storage, so its
    relay hears of each outbox item as soon as the item commits."""
    return Services(
        storage=storage if pipeline is None else pipeline.committing(storage),
        pipeline=pipeline,
        admin_key_hash=hash_api_key(settings.admin_key),
        key_ring=load_key_ring(settings),
        hash_salt=load_hash_salt(settings),
        claim_ttl=settings.policy.claim_ttl,
        registration_fee=settings.policy.registration_fee,
        free_plan_credits=settings.policy.free_plan_credits,
        public_url=settings.label_url,
        keys=KeyCache(settings.pipeline.key_cache),
        selections=selections,
    )
