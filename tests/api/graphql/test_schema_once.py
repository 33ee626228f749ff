"""The app builds one schema, and importing the schema module builds none:
the registry is checked against the schema that serves it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

APP_BUILDS = textwrap.dedent(
    """
    import api.graphql.schema as module
    from api.graphql.schema import ProofgateSchema

    built = []
    init = ProofgateSchema.__init__

    def counting(self, *args, **kwargs):
        built.append(self)
        init(self, *args, **kwargs)

    ProofgateSchema.__init__ = counting
    assert "schema" not in vars(module), "a schema was built at import"

    from api.app import create_app
    from api.settings.gateway import Settings

    app = create_app(Settings(cursor_key=bytes(32), admin_key="a" * 32, sqlite_path=":memory:"))
    assert module.default_schema.cache_info().currsize == 0, "the default schema was built"
    assert app.state.operations.by_name, "the registry was loaded"
    print(len(built), built[0].operations is app.state.operations)
    """
)


def test_create_app_builds_one_schema_and_checks_the_registry_against_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", APP_BUILDS], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "True"]


def test_the_default_schema_is_built_on_first_use_and_kept() -> None:
    from api.graphql import schema as module

    assert module.schema is module.default_schema()
    assert module.schema.graphql_schema.query_type is not None
