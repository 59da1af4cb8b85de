# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The installer's rules, their manifests, the RBAC matching and the messages for what is missing."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import access
from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError


def test_every_rule_says_who_needs_it_and_why_and_grants_no_escalation():
    for rule in access.RULES:
        assert rule["why"] and rule["states"] and set(rule["states"]) <= set(access.STATES), rule
        assert set(rule["platforms"]) <= set(access.PLATFORMS) and rule["scope"] in access.SCOPES, rule
        # No wildcard and none of the verbs that let an identity give itself more (bind, escalate, impersonate).
        assert not set(rule["verbs"]) & {"*", "bind", "escalate", "impersonate"}, rule
        assert "*" not in rule["resources"] and "*" not in rule["apiGroups"], rule
        assert len(set(rule["verbs"])) == len(rule["verbs"]), rule


def test_no_two_rules_of_a_platform_grant_the_same_thing_twice_in_full():
    # A rule whose every permission another rule also grants could be removed: it would not be one rule per need.
    for platform in access.PLATFORMS:
        rules = access.rules_for(platform)
        for rule in rules:
            others = [access.policy_rule(r) for r in rules if r is not rule]
            assert not all(any(access.allows(o, *req) for o in others) for req in access.requests_of(rule)), rule


def test_manifests_bind_the_service_account_to_the_platform_roles():
    objs = access.manifests("openshift", "gpuops-system", "installer")
    kinds = [(o["kind"], o["metadata"]["name"], o["metadata"].get("namespace")) for o in objs]
    assert kinds == [
        ("Namespace", "gpuops-system", None),
        ("ServiceAccount", "installer", "gpuops-system"),
        ("Secret", "installer-token", "gpuops-system"),
        ("ClusterRole", "gpuops-installer", None),
        ("ClusterRoleBinding", "gpuops-installer", None),
        ("ClusterRole", "gpuops-installer-openshift", None),
        ("ClusterRoleBinding", "gpuops-installer-openshift", None),
        ("Role", "gpuops-installer", "openshift-machine-api"),
        ("RoleBinding", "gpuops-installer", "openshift-machine-api"),
    ]
    secret = objs[2]
    assert secret["type"] == "kubernetes.io/service-account-token"
    assert secret["metadata"]["annotations"] == {"kubernetes.io/service-account.name": "installer"}
    for binding in objs[4], objs[6], objs[8]:
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "installer", "namespace": "gpuops-system"}]
    # MachineSet writes only in their namespace; the reads the ledger needs stay cluster-wide.
    role_rules = objs[7]["rules"]
    assert {
        "apiGroups": ["machine.openshift.io"],
        "resources": ["machinesets"],
        "verbs": ["get", "create", "patch", "delete"],
    } in role_rules
    k8s = access.manifests("kubernetes", "ns", "sa", token=False)
    assert [o["kind"] for o in k8s] == ["Namespace", "ServiceAccount"] + ["ClusterRole", "ClusterRoleBinding"] * 2
    assert k8s[4]["metadata"]["name"] == "gpuops-installer-kubernetes"
    crd_rule = [r for r in k8s[4]["rules"] if r["resources"] == ["customresourcedefinitions"]][0]
    assert crd_rule["resourceNames"] == list(access.NFD_CRDS)


@pytest.mark.parametrize(
    "rule, request_, allowed",
    [
        ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, ("get", "", "pods", None), True),
        ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, ("get", "", "pods/log", None), False),
        ({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, ("delete", "apps", "daemonsets", "x"), True),
        (
            {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["*/scale"]},
            ("get", "apps", "deployments/scale", None),
            True,
        ),
        (
            {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"]},
            ("get", "", "deployments", None),
            False,
        ),
        (
            {
                "verbs": ["use"],
                "apiGroups": ["security.openshift.io"],
                "resources": ["securitycontextconstraints"],
                "resourceNames": ["privileged"],
            },
            ("use", "security.openshift.io", "securitycontextconstraints", "privileged"),
            True,
        ),
        (
            {
                "verbs": ["use"],
                "apiGroups": ["security.openshift.io"],
                "resources": ["securitycontextconstraints"],
                "resourceNames": ["privileged"],
            },
            ("use", "security.openshift.io", "securitycontextconstraints", None),
            False,
        ),
    ],
)
def test_allows_decides_as_the_rbac_authorizer(rule, request_, allowed):
    assert access.allows(rule, *request_) is allowed


def test_missing_names_each_permission_the_states_and_the_fix():
    needed = access.rules_for("kubernetes", ["device_plugin"])
    granted = [access.policy_rule(r) for r in needed if "daemonsets" not in r["resources"]]
    found = access.missing(needed, granted)
    assert [(rule["resources"], lacking) for rule, lacking in found] == [
        (("daemonsets",), [(v, "apps", "daemonsets", None) for v in access.APPLY])
    ]
    msg = access.describe_missing(
        found, "kubernetes", {"cluster": "gpu", "machine_api": "m"}, "system:serviceaccount:a:b"
    )
    assert msg.startswith("access: the identity 'system:serviceaccount:a:b' lacks 5 permission(s)")
    assert (
        ": get, list, create, patch, delete daemonsets.apps (cluster-wide) (needed by driver, container_toolkit" in msg
    )
    assert "playbooks/rbac.yml" in msg and "gpuops-installer-kubernetes" in msg
    # cluster-admin's rules allow everything
    assert access.missing(needed, [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]) == []


def test_gpu_operator_mode_on_kubernetes_asks_for_a_cluster_admin_before_any_write(monkeypatch):
    names = {"cluster": "gpu", "machine_api": "m"}

    def holds(rules):
        monkeypatch.setattr(access, "granted_rules", lambda client, svc, namespace: (rules, False, ""))

    holds([access.policy_rule(r) for r in access.rules_for("kubernetes")])  # the installer of playbooks/rbac.yml
    found, dummy = access.review(None, None, "kubernetes", ["preflight", "gpu_operator"], names)
    assert [rule["resources"] for rule, dummy in found] == [("*",)]
    msg = access.describe_missing(found, "kubernetes", names)
    assert "every verb on every resource (cluster-admin) (needed by gpu_operator: the GPU Operator's Helm chart" in msg
    assert msg.endswith("playbooks/rbac.yml does not grant cluster-admin: run this as a cluster admin. "
                        "preflight_check_access: false skips this check (for permissions granted by Roles in other "
                        "namespaces).")  # fmt: skip
    # The collection's own stack needs no cluster admin, nor does OLM's install on OpenShift; a cluster admin has it.
    assert access.review(None, None, "kubernetes", ["preflight", "driver"], names)[0] == []
    holds([access.policy_rule(r) for r in access.rules_for("openshift")])
    assert access.review(None, None, "openshift", ["preflight", "gpu_operator"], names)[0] == []
    holds([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}])
    assert access.review(None, None, "kubernetes", ["gpu_operator"], names)[0] == []
    # playbooks/rbac.yml never grants it.
    for platform in access.PLATFORMS:
        rules = [r for o in access.manifests(platform, "ns", "sa") for r in o.get("rules") or []]
        assert rules and not any("*" in r["verbs"] for r in rules)


def test_rules_for_picks_platform_states_and_scope():
    ocp = access.rules_for("openshift", ["gpu_machineset"], scope="machine_api")
    assert {r["resources"] for r in ocp} == {("machinesets",), ("machines",), ("machineautoscalers",)}
    assert access.rules_for("kubernetes", ["gpu_machineset"], scope="machine_api") == []
    assert all("kubernetes" in r["platforms"] for r in access.rules_for("kubernetes"))
    with pytest.raises(GpuopsError, match="platform must be one of openshift, kubernetes"):
        access.rules_for("windows")


def test_describe_forbidden_reads_rbac_messages():
    msg = (
        'daemonsets.apps is forbidden: User "system:serviceaccount:gpuops-system:gpuops-installer" cannot create '
        'resource "daemonsets" in API group "apps" in the namespace "nvidia-gpu-driver"'
    )
    out = access.describe_forbidden(msg)
    assert out.startswith(
        "system:serviceaccount:gpuops-system:gpuops-installer lacks the permission to create "
        "daemonsets.apps in namespace nvidia-gpu-driver."
    )
    assert "the operand DaemonSets" in out and "playbooks/rbac.yml" in out
    out = access.describe_forbidden(
        'nodes is forbidden: User "u" cannot list resource "nodes" in API group "" at the cluster scope'
    )
    assert out.startswith("u lacks the permission to list nodes (cluster-wide).")
    assert access.describe_forbidden("exceeded quota: gpu") is None


def test_the_rbac_readme_lists_every_rule_as_the_code_has_it():
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))))
    with open(os.path.join(root, "roles", "rbac", "README.md")) as f:
        text = f.read()
    assert access.rules_table() in text, "regenerate the table of roles/rbac/README.md from access.rules_table()"


def test_every_state_of_site_yml_is_a_state_the_check_knows():
    # site.yml hands its states to preflight's access check; a state the module's choices lack fails every run of
    # that stack (gpu_operator did).
    import os

    import yaml

    from ansible_collections.gpuops.cluster.plugins.modules import access_review, platform_info

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))))
    with open(os.path.join(root, "playbooks", "site.yml")) as f:
        stacks = yaml.safe_load(f)[0]["vars"]["_gpuops_stack_states"]
    for states in stacks.values():
        assert set(states) <= set(access.STATES), set(states) - set(access.STATES)
    assert access_review.argument_spec()["states"]["choices"] == list(access.STATES)
    assert platform_info.argument_spec()["access_states"]["choices"] == list(access.STATES)


def test_every_path_a_rule_is_marked_for_is_taken_by_an_integration_test_that_proves_its_rules_needed():
    # A rule marked ``when`` is left out of the integration tests' "every rule needed" check unless a test names the
    # path it took (rbac_checks.PATHS): each path is in one named tuple, and each tuple is named by a test's
    # assert_least_privilege(paths=...), whose installer then proves each rule of the path needed alone.
    import glob
    import importlib.util
    import os
    import re

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))))
    integration = os.path.join(root, "tests", "integration")
    spec = importlib.util.spec_from_file_location("rbac_checks", os.path.join(integration, "rbac_checks.py"))
    checks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checks)
    assert set(checks.PATHS) == set(r["when"] for r in access.RULES if r.get("when"))
    named = set()
    for path in glob.glob(os.path.join(integration, "test_*.py")):
        with open(path) as f:
            for call in re.findall(r"assert_least_privilege\([^)]*?\bpaths=([^,)]+)", f.read()):
                named.update(re.findall(r"[A-Z][A-Z_]+", call))
    tuples = dict((k, v) for k, v in vars(checks).items() if k.isupper() and isinstance(v, tuple) and k != "PATHS")
    assert set(tuples) <= named, sorted(set(tuples) - named)
    assert set(checks.PATHS) == set(p for k in named for p in tuples.get(k, ())), "a path no test takes"
