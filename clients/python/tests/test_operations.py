"""Every operation of docs/openapi.yaml has a method in both clients, and
the tests exercised each (this module runs last: pytest orders modules by
name, and it names itself after the others)."""

from __future__ import annotations

import re
from pathlib import Path

import corral_client as cc
from conftest import REPO, SEEN_OPS

DOC = REPO / "docs" / "openapi.yaml"


def documented_operations() -> set[str]:
    # The document's operationIds, one per `operationId: NAME` line (the
    # Go conformance test reads the whole document with a YAML parser).
    return set(re.findall(r"^\s+operationId:\s*([A-Za-z]+)\s*$", DOC.read_text(), re.M))


def test_every_documented_operation_has_a_method() -> None:
    ops = documented_operations()
    assert len(ops) >= 20, f"read only {len(ops)} operations from {DOC}"
    assert set(cc.OPERATIONS) == ops, (
        f"operations without a method: {sorted(ops - set(cc.OPERATIONS))}; "
        f"methods of no documented operation: {sorted(set(cc.OPERATIONS) - ops)}")
    for op, method in cc.OPERATIONS.items():
        assert callable(getattr(cc.Client, method, None)), f"Client has no {method} for {op}"
        assert callable(getattr(cc.AsyncClient, method, None)), f"AsyncClient has no {method} for {op}"


def test_zz_the_tests_exercised_every_operation() -> None:
    missing = documented_operations() - SEEN_OPS
    if len(SEEN_OPS) < 5:
        import pytest
        pytest.skip("SKIP: run the whole suite to check which operations its tests exercised")
    assert not missing, f"no test exercised {sorted(missing)}"
