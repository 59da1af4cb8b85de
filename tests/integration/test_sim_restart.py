# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The simulated controllers survive an apiserver restart: watches are re-established."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import uuid

import pytest
from simopenshift.control import wait_match  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import apis, install  # noqa: E402
from simopenshift.kube import CONFIGMAPS  # noqa: E402
from simopenshift.testing import (
    Client,
    clone_machineset,
    delete_machineset,
    ready_nodes_of,
    wait_for,
    worker_machinesets,
)  # noqa: E402

pytestmark = pytest.mark.integration


def controllers_pid(kube):
    namespace, name = install.STATUS_CONFIGMAP
    return int(kube.get(CONFIGMAPS, name, namespace)["data"]["pid"])


def test_controllers_reconnect_after_apiserver_restart(cluster):
    if cluster.profile != "openshift":
        pytest.skip("needs the openshift profile")
    restart = getattr(cluster.lc, "restart_apiserver", None)
    if restart is None:
        pytest.skip("the launcher cannot restart the apiserver")
    kube = Client(cluster.api)
    pid = controllers_pid(kube)
    restart()
    wait_for(cluster.lc.api_ready, 60, what="apiserver back")
    os.kill(pid, 0)  # the controllers process did not die
    # Watches on MachineSets, Machines and Nodes must be live again for this to work.
    source = worker_machinesets(kube)[0]
    name = "%s-restart-%s" % (source["metadata"]["name"], uuid.uuid4().hex[:4])
    clone_machineset(kube, source, name, "g4dn.xlarge", replicas=1)
    try:
        (node,) = ready_nodes_of(kube, name, 1, timeout=60)
        assert node["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "g4dn.xlarge"
        ms = wait_match(
            lambda: kube.get(apis.MACHINESETS, name, apis.MACHINE_API_NS),
            lambda m: (m.get("status") or {}).get("readyReplicas") == 1,
            30,
            what="MachineSet status after restart",
        )
        assert ms["status"]["observedGeneration"] == ms["metadata"]["generation"]
    finally:
        delete_machineset(kube, name)
    assert controllers_pid(kube) == pid
