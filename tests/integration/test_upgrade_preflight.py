# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""playbooks/upgrade_preflight.yml on the simulated OpenShift 4.16: one GPU node with the driver state converged.

The update service offers 4.17.0 (a lever: the simulated cluster is disconnected until then); the preflight judges
it per pool, builds the driver image for 4.17's kernel on 4.17's Driver Toolkit, says GO; a ClusterOperator's
Upgradeable=False and an API the target removes make it NO-GO; then the cluster upgrades (a lever: the
ClusterVersion and the node's RHCOS build, as the MachineConfigPool would) and the driver state finds the image
ready: no build after the upgrade.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys
import time
import uuid

import pytest
from conftest import failed_message, run_site, state_lines
from rbac_checks import UPGRADE_PREFLIGHT, Installer, forbidden

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import apis, catalog, control, testing  # noqa: E402
from simopenshift.testing import (  # noqa: E402
    Client,
    clone_machineset,
    delete_machineset,
    node_label,
    ready_nodes_of,
    wait_for,
    worker_machinesets,
)
from test_role_driver import (  # noqa: E402
    FAST,
    KERNEL_LABEL,
    NEW_KERNEL,
    NFD_CR,
    NFD_NS,
    NS,
    OLD_KERNEL,
    builds,
    driver,
    driver_daemonsets,
    driver_result,
    drop_nfd_cr,
    nfd_cr,
)

pytestmark = pytest.mark.integration
TARGET = "4.17.0"
TARGET_BUILD = catalog.release_build(TARGET)
DTK = {"driver_ocp_upgrade_toolkit_images": {TARGET: catalog.dtk_image(TARGET_BUILD.build)}}


@pytest.fixture(scope="module")
def converged(cluster):
    """One g4dn.xlarge GPU node labelled by NFD, the driver state converged on it; the ClusterVersion put back."""
    if cluster.profile != "openshift":
        pytest.skip("needs the openshift profile")
    kube = Client(cluster.api)
    source = worker_machinesets(kube)[0]
    ms = "%s-gpu-upg-%s" % (source["metadata"]["name"].rsplit("-worker-", 1)[0], uuid.uuid4().hex[:4])
    clone_machineset(kube, source, ms, "g4dn.xlarge", replicas=1, node_labels={"node-role.kubernetes.io/gpu": ""},
                     taints=[{"key": "nvidia.com/gpu", "value": "", "effect": "NoSchedule"}])  # fmt: skip
    saved_cr = kube.get(apis.NODEFEATUREDISCOVERIES, NFD_CR, NFD_NS)
    saved_cv = kube.get(apis.CLUSTERVERSIONS, "version")["status"]
    try:
        (node,) = ready_nodes_of(kube, ms, 1, timeout=90)
        name = node["metadata"]["name"]
        if saved_cr is None:
            testing.ensure_namespace(kube, NFD_NS)
            kube.create(apis.NODEFEATUREDISCOVERIES, nfd_cr(prune=True))
        wait_for(lambda: node_label(kube, name, KERNEL_LABEL) == OLD_KERNEL, 60, what="NFD kernel label")
        assert failed_message(driver(cluster, FAST)) is None
        yield kube, name
    finally:
        kube.patch(apis.CLUSTERVERSIONS, "version", {"status": saved_cv}, subresource="status")
        driver(cluster, {"driver_state": "absent"})
        delete_machineset(kube, ms)
        if saved_cr is None:
            drop_nfd_cr(kube, prune=True)


def preflight(cluster, extra=None, expect_rc=0, check=False, env=None):
    args = ["-e", json.dumps(extra or {})] + (["--check"] if check else [])
    return run_site(cluster, playbook="upgrade_preflight.yml", expect_rc=expect_rc, extra_args=args, env=env)


def table_rows(out):
    """The verdict table's data rows, split into their first six columns, and the rest."""
    lines = [line for line in state_lines(out) if line.startswith(TARGET + " ")]
    return [line.split(None, 6) for line in lines]


def test_without_an_available_update_it_asks_for_a_target_and_writes_nothing(cluster, converged):
    mark = cluster.audit.mark()
    out = preflight(cluster, expect_rc=2)
    msg = failed_message(out)
    assert "targets: the ClusterVersion lists no available update (RetrievedUpdates False" in msg, msg
    assert "give the target release(s)" in msg
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []


def test_offered_update_is_built_for_then_go_and_a_rerun_writes_nothing(cluster, converged):
    kube, node = converged
    control.offer_updates(cluster.api, [TARGET])
    before = set(builds(kube))
    # Check mode: the image is missing and would be built; NO-GO until it is; nothing written.
    mark = cluster.audit.mark()
    out = preflight(cluster, DTK, expect_rc=2, check=True)
    (row,) = table_rows(out)
    assert row[:6] == [TARGET, "worker", "1", NEW_KERNEL, "missing", "NO-GO"], row
    assert "would build now" in row[6]
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []

    # For real, with only the least-privilege installer's token (playbooks/rbac.yml, as an AWX job would run it): one
    # build, on 4.17's Driver Toolkit, for 4.17's kernel; then GO (the operands' range is a warning).
    installer = Installer(cluster, run_site)
    try:
        t0 = time.time()
        out = preflight(cluster, DTK, env=installer.env)
        seconds = time.time() - t0
        mark = cluster.audit.mark()
        again = preflight(cluster, DTK, env=installer.env)
        assert cluster.audit.writes_since(mark) == []
        assert installer.events() and forbidden(installer.events()) == []
    finally:
        installer.remove()
    # Each rule only upgrade_preflight.yml needs allowed some request no other rule does.
    installer.assert_least_privilege("openshift", paths=UPGRADE_PREFLIGHT, only_paths=True)
    (row,) = table_rows(out)
    assert row[:6] == [TARGET, "worker", "1", NEW_KERNEL, "ready", "GO"], row
    assert "operands: GPU Operator v26.7.0 operands are certified for OpenShift 4.18-4.22, not 4.17.0" in row[6]
    new = set(builds(kube)) - before
    assert len(new) == 1 and NEW_KERNEL.replace("_", "-")[:20] in next(iter(new)), new
    (bc,) = [
        b for b in kube.list(apis.BUILDCONFIGS, NS)[0] if NEW_KERNEL.replace("_", "-")[:20] in b["metadata"]["name"]
    ]
    args = dict((a["name"], a["value"]) for a in bc["spec"]["strategy"]["dockerStrategy"]["buildArgs"])
    assert args["DTK_IMAGE"] == catalog.dtk_image(TARGET_BUILD.build) and args["OS_TAG"] == "rhcos4.17"
    assert "OpenShift 4.16.0 -> 4.17.0: GO" in " ".join(state_lines(out))
    print("upgrade preflight with one build: %.1fs" % seconds)
    # The re-run (above, as the installer): the image is there, nothing written.
    assert table_rows(again)[0][4:6] == ["ready", "GO"]


def test_an_upgrade_gate_or_a_removed_api_in_use_is_no_go(cluster, converged):
    control.block_upgrades(cluster.api, "kube-apiserver", "AdminAckRequired", "ack the API removals first")
    try:
        out = preflight(cluster, DTK, expect_rc=2)
        msg = failed_message(out)
        assert msg.startswith("NO-GO for OpenShift 4.17.0: ClusterOperator kube-apiserver: Upgradeable=False "
                              "(AdminAckRequired: ack the API removals first)"), msg  # fmt: skip
    finally:
        control.unblock_upgrades(cluster.api, "kube-apiserver")
    # A hypothetical API that Kubernetes 1.30 (OpenShift 4.17) would remove, still used.
    control.record_api_requests(cluster.api, "widgets.v1beta1.example.com", "1.30", 42)
    try:
        out = preflight(cluster, DTK, expect_rc=2)
        assert "widgets.v1beta1.example.com (removed in Kubernetes 1.30, 42 requests in 24 h)" in failed_message(out)
    finally:
        Client(cluster.api).delete(apis.APIREQUESTCOUNTS, "widgets.v1beta1.example.com")


def test_after_the_upgrade_the_driver_state_finds_the_image_ready(cluster, converged):
    kube, node = converged
    before = set(builds(kube))
    control.upgrade_cluster(cluster.api, TARGET, [node])
    wait_for(lambda: node_label(kube, node, KERNEL_LABEL) == NEW_KERNEL, 60, what="NFD relabels the new kernel")
    mark = cluster.audit.mark()
    t0 = time.time()
    out = driver(cluster, FAST)
    seconds = time.time() - t0
    assert failed_message(out) is None
    writes = cluster.audit.writes_since(mark)
    assert not [w for w in writes if w["resource"] in ("builds", "buildconfigs")], writes
    assert set(builds(kube)) == before
    result = driver_result(out)
    assert list(result["kernels"]) == [NEW_KERNEL] and result["kernels"][NEW_KERNEL]["action"] != "built", result
    (ds,) = driver_daemonsets(kube).values()
    assert ds["metadata"]["annotations"]["gpuops.cluster/kernel"] == NEW_KERNEL
    print("driver state after the upgrade, no build: %.1fs" % seconds)
