# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The fleet summary of site.yml over several clusters."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import fleet
from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError

OCP = {
    "cluster": "prod-east",
    "platform": {"openshift": True, "openshift_version": "4.19.3", "kubernetes_version": "v1.32.5"},
    "failed_state": None,
    "done_states": ["preflight", "gpu_machineset", "nfd", "gpu_validation"],
    "skipped_states": ["gpu_machineset", "nfd"],
    "validation": {"result": "passed", "nodes": 3, "passed": 3, "failed": 0},
    "started": "2026-11-29T10:00:00.000000Z",
    "ended": "2026-11-29T10:02:05.500000Z",
    "reports": "reports/prod-east",
}
K8S_FAILED = {
    "cluster": "lab",
    "platform": {"openshift": False, "kubernetes_version": "v1.33.1"},
    "failed_state": "driver",
    "done_states": ["preflight", "gpu_machineset", "nfd"],
    "skipped_states": [],
    "validation": {},
    "started": "2026-11-29T10:00:01.000000Z",
    "ended": "2026-11-29T10:01:01.000000Z",
    "reports": "reports/lab",
}


def test_each_cluster_is_a_row_with_its_result_states_gpu_nodes_and_time():
    out = fleet.summary([OCP, K8S_FAILED])
    east, lab = out["rows"]
    assert east["platform"] == "OpenShift 4.19.3" and east["result"] == "converged"
    assert east["states"] == "2 ran, 2 skipped by the ledger" and east["GPU nodes"] == "3/3 passed"
    assert east["seconds"] == 125.5
    assert lab["platform"] == "Kubernetes v1.33.1" and lab["result"] == "FAILED in driver"
    assert lab["GPU nodes"] == "-" and lab["seconds"] == 60.0
    assert out["failed"] == {"lab": "driver"} and out["converged"] == ["prod-east"]
    assert out["table"][-1] == "2 cluster(s): 1 converged, 1 failed (lab in driver)"


def test_the_table_lines_up_its_columns():
    table = fleet.summary([OCP, K8S_FAILED])["table"]
    head, rule, first, second = table[:4]
    assert head.split()[:2] == ["cluster", "platform"]
    assert set(rule.replace(" ", "")) == {"-"}
    # Every column starts where its header does.
    at = head.index("result")
    assert first[at:].startswith("converged") and second[at:].startswith("FAILED in driver")
    at = head.index("reports")
    assert first[at:] == "reports/prod-east" and second[at:] == "reports/lab"


def test_a_cluster_that_failed_before_preflight_knew_the_platform():
    out = fleet.summary([dict(K8S_FAILED, platform={}, failed_state="preflight", started=None)])
    row = out["rows"][0]
    assert row["platform"] == "?" and row["seconds"] is None and row["result"] == "FAILED in preflight"


@pytest.mark.parametrize(
    "bad, words",
    [({"platform": {}}, "needs 'cluster'"), (dict(OCP, started="yesterday"), "'yesterday' is not a time")],
)
def test_bad_items_are_named(bad, words):
    with pytest.raises(GpuopsError, match=words):
        fleet.summary([bad])
