# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The least-privilege identity (playbooks/rbac.yml) on the real API server's RBAC: a rule taken away is named
before any write, a 403 met at run time names the permission and the collection's rule, and the identity cannot
give itself more than it has. (The whole of site.yml as this identity: test_site_kubernetes.py and
test_site_openshift_419.py.)"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest
from conftest import PREFLIGHT_ONLY, run_site
from rbac_checks import Installer

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def installer(cluster):
    inst = Installer(cluster, run_site)
    yield inst
    inst.remove()


def _drop_rule(cluster, role, resource):
    from kubernetes import client

    rbac = client.RbacAuthorizationV1Api(cluster.api)
    obj = rbac.read_cluster_role(role)
    kept = [r for r in obj.rules if resource not in (r.resources or [])]
    assert len(kept) == len(obj.rules) - 1
    obj.rules = kept
    rbac.replace_cluster_role(role, obj)


def test_rbac_playbook_is_idempotent_and_never_shows_the_token(cluster, installer):
    out = run_site(cluster, playbook="rbac.yml", extra_args=["-vvvv"])
    assert out["stats"]["localhost"]["changed"] == 0
    assert installer.token not in json.dumps(out)
    lines = [m for t in out["plays"][0]["tasks"] for m in (t["hosts"]["localhost"].get("msg") or [])]
    assert any("bound to ClusterRoles gpuops-installer and gpuops-installer-openshift" in str(m) for m in lines), lines


def test_a_missing_rule_is_named_before_any_write(cluster, installer):
    _drop_rule(cluster, "gpuops-installer", "daemonsets")
    try:
        mark = cluster.audit.mark()
        out = run_site(cluster, env=installer.env, expect_rc=2)
        text = json.dumps(out)
        assert (
            "access: the identity 'system:serviceaccount:gpuops-system:gpuops-installer' lacks 5 permission(s)" in text
        )
        assert (
            "get, list, create, patch, delete daemonsets.apps (cluster-wide) (needed by driver, container_toolkit"
            in text
        )
        assert "playbooks/rbac.yml" in text
        assert cluster.audit.writes_since(mark, user=installer.username, include_dry_run=True) == []
    finally:
        run_site(cluster, playbook="rbac.yml")  # the rule back
    run_site(cluster, env=installer.env, extra_vars=PREFLIGHT_ONLY)


def test_a_403_at_run_time_names_the_permission_and_the_rule(cluster, installer, ansible_task):
    _drop_rule(cluster, "gpuops-installer", "daemonsets")
    try:
        result = ansible_task(
            "gpuops.cluster.k8s_ensure",
            {
                "definitions": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "DaemonSet",
                        "metadata": {"name": "x", "namespace": "default"},
                        "spec": {
                            "selector": {"matchLabels": {"a": "b"}},
                            "template": {
                                "metadata": {"labels": {"a": "b"}},
                                "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
                            },
                        },
                    }
                ]
            },
            env=installer.env,
        )
    finally:
        run_site(cluster, playbook="rbac.yml")
    assert result.get("failed") is True
    assert result["msg"].startswith(
        "403 Forbidden: system:serviceaccount:gpuops-system:gpuops-installer lacks the permission to get "
        "daemonsets.apps in namespace default. The collection's rule for it: the operand DaemonSets"
    ), result["msg"]


def test_the_identity_cannot_give_itself_more(cluster, installer):
    # RBAC escalation prevention, with no bind or escalate among the installer's verbs: binding cluster-admin to
    # itself is refused.
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    conf = client.Configuration()
    conf.host = cluster.server
    conf.ssl_ca_cert = cluster.ca_cert
    conf.api_key = {"authorization": "Bearer " + installer.token}
    api = client.ApiClient(conf)
    body = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "gpuops-installer-escalates"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": Installer.NAME, "namespace": Installer.NAMESPACE}],
    }
    with pytest.raises(ApiException) as err:
        client.RbacAuthorizationV1Api(api).create_cluster_role_binding(body)
    assert err.value.status == 403 and "escalat" in err.value.body, err.value.body
