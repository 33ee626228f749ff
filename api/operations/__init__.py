"""Named operations: the registry (``registry``), trusted-documents mode
(``trusted``) and their commands.

Only the settings are exported here: ``api.settings.gateway`` imports them, and the
CLI jobs that read settings must not load the GraphQL layer the registry needs.
"""

from api.operations.settings import OperationSettings, OperationVariables, TrustedDocuments

__all__ = ["OperationSettings", "OperationVariables", "TrustedDocuments"]
