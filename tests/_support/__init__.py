"""Helpers shared by test folders that cannot import each other's modules.

``tests/`` is on ``sys.path`` (it holds the root conftest and no
``__init__``), so any test imports these as ``_support.<module>``.
"""
