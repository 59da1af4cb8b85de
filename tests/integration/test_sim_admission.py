# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Pod admission on the simulated clusters: OpenShift's SCC admission and Kubernetes' Pod Security Admission.

The openshift profile refuses a pod unless one SCC allows what it asks for (privileged containers, hostPID,
hostIPC, hostNetwork, hostPath) and its service account or the requesting user may ``use`` that SCC
(simopenshift.scc: a ValidatingAdmissionPolicy with CEL authorizer checks). A DaemonSet whose service account
lacks the grant gets FailedCreate events with OpenShift's "unable to validate against any security context
constraint" and no pod, as on OpenShift; pods a user creates directly pass on the user's rights (admin). The
plain Kubernetes profile has no such policy. PodSecurity (on by default in kube-apiserver 1.34; cluster.py does
not disable it) enforces a namespace's ``pod-security.kubernetes.io/enforce`` level on both.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys
import uuid

import pytest
from kubernetes.client.rest import ApiException

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import scc as sccadmission  # noqa: E402
from simopenshift.kube import (  # noqa: E402
    DAEMONSETS,
    EVENTS,
    NAMESPACES,
    PODS,
    ROLEBINDINGS,
    ROLES,
    SERVICEACCOUNTS,
    VALIDATINGADMISSIONPOLICIES,
    Client,
)
from simopenshift.testing import allow_privileged, allow_scc, wait_for  # noqa: E402

pytestmark = pytest.mark.integration

WORKERS = {"node-role.kubernetes.io/worker": ""}
REFUSED = "unable to validate against any security context constraint: ["
PRIVILEGED_NOT_USABLE = 'provider "privileged": Forbidden: not usable by user or serviceaccount'
RESTRICTED_V2_PRIVILEGED = (
    "provider restricted-v2: .containers[0].privileged: Invalid value: true: Privileged containers are not allowed"
)
HOST_PATH_REFUSED = 'spec.volumes[0]: Invalid value: "hostPath": hostPath volumes are not allowed to be used'


def pod_spec(privileged=False, host_pid=False, host_path=False, sa=None):
    """A pod spec kwok runs on the workers (no NVIDIA component label: the GPU node agent leaves it alone)."""
    container = {"name": "c", "image": "registry.access.redhat.com/ubi9/ubi-minimal:latest", "command": ["sleep"]}
    spec = {"nodeSelector": dict(WORKERS), "containers": [container]}
    if privileged:
        container["securityContext"] = {"privileged": True}
    if host_pid:
        spec["hostPID"] = True
    if host_path:
        # The driver's GSP firmware mount (manifests.driver, GPU Operator assets/state-driver).
        spec["volumes"] = [{"name": "nv-firmware", "hostPath": {"path": "/run/nvidia/driver/lib/firmware"}}]
        container["volumeMounts"] = [{"name": "nv-firmware", "mountPath": "/lib/firmware"}]
    if sa:
        spec["serviceAccountName"] = sa
    return spec


def daemonset(namespace, name, spec):
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": spec}},
    }


def pods_of(kube, namespace, name):
    return kube.list(PODS, namespace, label_selector="app=" + name)[0]


def failed_create(kube, namespace, name):
    """Messages of the DaemonSet controller's FailedCreate events on DaemonSet ``name``."""
    return [
        e.get("message") or ""
        for e in kube.list(EVENTS, namespace)[0]
        if e.get("reason") == "FailedCreate" and (e.get("involvedObject") or {}).get("name") == name
    ]


def refused_then_message(kube, namespace, name):
    wait_for(lambda: failed_create(kube, namespace, name), 30, what="FailedCreate on DaemonSet " + name)
    assert pods_of(kube, namespace, name) == []
    return failed_create(kube, namespace, name)[0]


@pytest.fixture
def ns(cluster, kube):
    """A fresh namespace with its default ServiceAccount and no SCC grant; removed afterwards."""
    name = "scc-" + uuid.uuid4().hex[:8]
    kube.create(NAMESPACES, {"metadata": {"name": name}})
    wait_for(lambda: kube.get(SERVICEACCOUNTS, "default", name), 30, what="default ServiceAccount")
    yield name
    kube.delete(NAMESPACES, name)


def test_privileged_daemonset_is_refused_without_use_and_runs_once_bound(kube, ns):
    """The missing ``use`` binding fails as on OpenShift: FailedCreate naming every SCC and the SA, no pod."""
    kube.create(DAEMONSETS, daemonset(ns, "priv", pod_spec(privileged=True, host_pid=True, host_path=True)))
    message = refused_then_message(kube, ns, "priv")
    assert 'pods "priv-' in message and "is forbidden: " in message
    for line in (
        REFUSED + 'provider "anyuid": Forbidden: not usable by user or serviceaccount, provider restricted-v2: ',
        "provider restricted-v2: .spec.securityContext.hostPID: Invalid value: true: Host PID is not allowed to be used",
        HOST_PATH_REFUSED,
        RESTRICTED_V2_PRIVILEGED,
        'provider "hostaccess": Forbidden: not usable by user or serviceaccount',
        PRIVILEGED_NOT_USABLE + "]",
        '(serviceaccount "system:serviceaccount:%s:default")' % ns,
    ):
        assert line in message, message

    # What `oc adm policy add-scc-to-user privileged -z default` makes; the controller retries and succeeds.
    assert allow_privileged(kube, ns) is True
    binding = kube.get(ROLEBINDINGS, sccadmission.ROLE_PREFIX + "privileged", ns)
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "system:openshift:scc:privileged",
    }
    wait_for(lambda: len(pods_of(kube, ns, "priv")) == 3, 60, what="a pod on each of the 3 workers")


def test_host_path_pod_runs_with_hostmount_anyuid_which_does_not_allow_privileged(kube, ns):
    kube.create(DAEMONSETS, daemonset(ns, "hostpath", pod_spec(host_path=True)))
    message = refused_then_message(kube, ns, "hostpath")
    assert HOST_PATH_REFUSED in message and 'provider "hostmount-anyuid": Forbidden: not usable' in message

    assert allow_scc(kube, ns, scc="hostmount-anyuid") is True
    wait_for(lambda: len(pods_of(kube, ns, "hostpath")) == 3, 60, what="hostPath pods with hostmount-anyuid")

    # hostmount-anyuid is usable now, so OpenShift lists its own refusal instead of "not usable".
    kube.create(DAEMONSETS, daemonset(ns, "hostpath-priv", pod_spec(privileged=True, host_path=True)))
    message = refused_then_message(kube, ns, "hostpath-priv")
    assert (
        "provider hostmount-anyuid: .containers[0].privileged: Invalid value: true: Privileged containers are not "
        "allowed" in message
    ), message
    assert PRIVILEGED_NOT_USABLE in message


def test_restricted_pod_is_admitted_without_any_binding(kube, ns):
    """restricted-v2 (granted to every authenticated user) fits a pod that asks for nothing on the host."""
    kube.create(DAEMONSETS, daemonset(ns, "plain", pod_spec()))
    wait_for(lambda: len(pods_of(kube, ns, "plain")) == 3, 60, what="restricted pods")
    assert failed_create(kube, ns, "plain") == []
    grants = [b for b in kube.list(ROLEBINDINGS, ns)[0] if b["roleRef"]["name"].startswith(sccadmission.ROLE_PREFIX)]
    assert grants == []


def test_admin_creating_a_privileged_pod_directly_is_admitted(kube, ns):
    """OpenShift checks the requesting user too: a cluster admin's own pod passes with the default SA."""
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "by-admin", "namespace": ns}}
    body["spec"] = pod_spec(privileged=True, host_pid=True, host_path=True)
    created = kube.create(PODS, body)
    assert created["spec"]["serviceAccountName"] == "default"


def test_collection_role_shape_admits_the_driver_pod(kube, ns):
    """roles/driver/templates/base.yaml.j2 on OpenShift: Role <sa>-privileged-scc (use on SCC privileged) and its
    RoleBinding to the driver's service account in the namespace; the driver-like DaemonSet then runs."""
    sa = "nvidia-driver"
    kube.create(SERVICEACCOUNTS, {"metadata": {"name": sa, "namespace": ns}})
    kube.create(
        ROLES,
        {
            "metadata": {"name": sa + "-privileged-scc", "namespace": ns},
            "rules": [
                {
                    "apiGroups": ["security.openshift.io"],
                    "resources": ["securitycontextconstraints"],
                    "resourceNames": ["privileged"],
                    "verbs": ["use"],
                }
            ],
        },
    )
    kube.create(
        ROLEBINDINGS,
        {
            "metadata": {"name": sa + "-privileged-scc", "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": sa + "-privileged-scc"},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}],
        },
    )
    kube.create(DAEMONSETS, daemonset(ns, "driver", pod_spec(privileged=True, host_pid=True, host_path=True, sa=sa)))
    wait_for(lambda: len(pods_of(kube, ns, "driver")) == 3, 60, what="driver-like pods")
    assert failed_create(kube, ns, "driver") == []
    # The grant is the service account's, not the namespace's: the default SA is still refused.
    kube.create(DAEMONSETS, daemonset(ns, "driver-default-sa", pod_spec(privileged=True, host_pid=True)))
    assert PRIVILEGED_NOT_USABLE in refused_then_message(kube, ns, "driver-default-sa")


def test_pod_security_admission_is_enforced(kube):
    """A namespace at enforce=restricted refuses a privileged pod with the PodSecurity message, admin or not."""
    name = "psa-" + uuid.uuid4().hex[:8]
    kube.create(
        NAMESPACES,
        {"metadata": {"name": name, "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}},
    )
    try:
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "priv", "namespace": name}}
        body["spec"] = pod_spec(privileged=True)
        with pytest.raises(ApiException) as err:
            kube.create(PODS, body)
        assert err.value.status == 403
        message = json.loads(err.value.body)["message"]
        assert message.startswith(
            'pods "priv" is forbidden: violates PodSecurity "restricted:latest": privileged '
        ), message
        assert '(container "c" must not set securityContext.privileged=true)' in message
    finally:
        kube.delete(NAMESPACES, name)


def test_kubernetes_profile_has_no_scc_admission(k8s_cluster):
    kube = Client(k8s_cluster.api)
    assert kube.get(VALIDATINGADMISSIONPOLICIES, sccadmission.POLICY_NAME) is None
    assert allow_privileged(kube, "default") is False  # no SCC ClusterRoles: the helper does nothing
    name = "noscc-" + uuid.uuid4().hex[:8]
    kube.create(NAMESPACES, {"metadata": {"name": name}})
    try:
        wait_for(lambda: kube.get(SERVICEACCOUNTS, "default", name), 30, what="default ServiceAccount")
        spec = pod_spec(privileged=True, host_pid=True, host_path=True)
        spec["nodeSelector"] = {"kubernetes.io/hostname": "gpu-0"}  # one node is enough
        spec["tolerations"] = [{"operator": "Exists"}]
        kube.create(DAEMONSETS, daemonset(name, "priv", spec))
        wait_for(lambda: len(pods_of(kube, name, "priv")) == 1, 60, what="privileged pod without any binding")
        assert failed_create(kube, name, "priv") == []
    finally:
        kube.delete(NAMESPACES, name)
