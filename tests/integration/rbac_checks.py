# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Least privilege, proven from what the API server saw: the requests of the installer's identity in the audit log
and the rules of the roles the collection granted its operands, against the installer's own rules."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpuops.cluster.plugins.module_utils import access


def audit_events(audit, mark, username):
    """The identity's audit events since ``mark``."""
    return [ev for ev in audit.events_since(mark) if (ev.get("user") or {}).get("username") == username]


def forbidden(events):
    """Requests the RBAC authorizer refused (admission's 403s, such as an exceeded quota, are not refusals)."""
    return [
        "{0} {1}: {2}".format(ev["verb"], ev["requestURI"], (ev.get("responseStatus") or {}).get("message", "")[:300])
        for ev in events
        if (ev.get("annotations") or {}).get("authorization.k8s.io/decision") == "forbid"
    ]


def requests_of(events):
    """(verb, group, resource, name, namespace) of every request, as the authorizer checked it: a server-side apply
    that created its object was authorized as create too (kube-apiserver's patch handler)."""
    out = set()
    for ev in events:
        ref = ev.get("objectRef") or {}
        if not ref.get("resource") or ref.get("resource") in ("selfsubjectrulesreviews", "selfsubjectreviews"):
            continue
        resource = ref["resource"] + ("/" + ref["subresource"] if ref.get("subresource") else "")
        key = (ref.get("apiGroup") or "", resource, ref.get("name"), ref.get("namespace"))
        out.add((ev["verb"],) + key)
        if ev["verb"] == "patch" and (ev.get("responseStatus") or {}).get("code") == 201:
            out.add(("create",) + key)
    return out


def granted_requests(roles):
    """(verb, group, resource, name, None) of every rule of the Roles / ClusterRoles given: what the installer must
    hold to grant them (RBAC escalation prevention)."""
    out = set()
    for role in roles:
        for rule in role.get("rules") or []:
            for name in rule.get("resourceNames") or [None]:
                for verb in rule.get("verbs") or []:
                    for group in rule.get("apiGroups") or []:
                        for resource in rule.get("resources") or []:
                            out.add((verb, group, resource, name, None))
    return out


# The paths only some runs take (the ``when`` of access's rules), each named by the test that takes it: its
# installer then proves each of the path's rules needed. tests/unit/plugins/module_utils/test_access.py checks that
# every ``when`` is in one of these, and that each of these is named by an integration test.
ENTITLEMENT = (
    "entitlement build mode",
    "entitlement build mode (OpenShift before 4.9, or driver_build_mode: entitlement)",
)
DRIVER_ROLLOUT = ("a driver rollout (a new driver version, image or kernel)",)
EVICTION = ("a driver rollout on a node that runs GPU pods",)
OPENSHIFT_ALWAYS = (
    "the Prometheus Operator's CRDs are served (always on OpenShift)",
    "the NFD operator serves NodeFeatureRule (nfd.k8s-sigs.io)",
)
AUTOSCALING = (
    "gpu_machineset_autoscaling",
    "gpu_machineset_autoscaling on a cluster without a ClusterAutoscaler",
)
UPGRADE_PREFLIGHT = ("upgrade_preflight.yml",)
GPU_OPERATOR = ("gpuops_stack operator", "the GPU Operator's CRD is served")
PATHS = ENTITLEMENT + DRIVER_ROLLOUT + EVICTION + OPENSHIFT_ALWAYS + AUTOSCALING + UPGRADE_PREFLIGHT + GPU_OPERATOR


def unneeded_rules(rules, requests, paths=()):
    """The installer's rules that no request needs: each needed rule allows some request no other rule allows.
    Returns [(rule, reason)]; rules of a path the run did not take (a ``when`` not in ``paths``) are left out."""
    unknown = set(paths) - set(PATHS)
    assert not unknown, "not a path of access's rules: {0}".format(sorted(unknown))
    policies = [access.policy_rule(r) for r in rules]
    needed = set()
    for verb, group, resource, name, _namespace in requests:
        allowing = [i for i, p in enumerate(policies) if access.allows(p, verb, group, resource, name)]
        if len(allowing) == 1:
            needed.add(allowing[0])
    return [
        (rules[i], "no request needed it alone")
        for i in range(len(rules))
        if i not in needed and (not rules[i].get("when") or rules[i]["when"] in paths)
    ]


def unused_rules(rules, requests):
    """The ``why`` of each rule that allows none of ``requests`` (for rules only one path needs, which
    ``unneeded_rules`` leaves out by their ``when``)."""
    return [
        r["why"]
        for r in rules
        if not any(
            access.allows(access.policy_rule(r), verb, group, res, name) for verb, group, res, name, _ns in requests
        )
    ]


def managed_roles(api, owner_label_value="rbac"):
    """The Roles and ClusterRoles the collection made for its operands (not its own installer roles)."""
    from kubernetes import client

    rbac = client.RbacAuthorizationV1Api(api)
    selector = "app.kubernetes.io/managed-by=gpuops.cluster"
    items = (
        rbac.list_cluster_role(label_selector=selector).items
        + rbac.list_role_for_all_namespaces(label_selector=selector).items
    )
    out = []
    for item in items:
        if (item.metadata.labels or {}).get("gpuops.cluster/owner") == owner_label_value:
            continue
        out.append(json.loads(json.dumps(api.sanitize_for_serialization(item))))
    return out


class Installer(object):
    """The collection's least-privilege identity on a test cluster: playbooks/rbac.yml run by the admin, its
    ServiceAccount's token, and the environment AWX's bearer-token credential gives a job (no kubeconfig)."""

    NAMESPACE = "gpuops-system"
    NAME = "gpuops-installer"

    def __init__(self, cluster, run_site):
        import base64
        import time

        from kubernetes import client

        self.cluster = cluster
        self.run_site = run_site
        self.username = "system:serviceaccount:{0}:{1}".format(self.NAMESPACE, self.NAME)
        self.mark = cluster.audit.mark()
        run_site(cluster, playbook="rbac.yml")
        core = client.CoreV1Api(cluster.api)
        deadline = time.time() + 60
        while True:  # the token controller (kube-controller-manager) fills the Secret in
            secret = core.read_namespaced_secret(self.NAME + "-token", self.NAMESPACE)
            if (secret.data or {}).get("token") or time.time() > deadline:
                break
            time.sleep(0.5)
        self.token = base64.b64decode(secret.data["token"]).decode()
        self.env = {
            "K8S_AUTH_KUBECONFIG": None,
            "K8S_AUTH_HOST": cluster.server,
            "K8S_AUTH_API_KEY": self.token,
            "K8S_AUTH_SSL_CA_CERT": cluster.ca_cert,
        }
        self.granted = []

    def events(self):
        return audit_events(self.cluster.audit, self.mark, self.username)

    def writes_since(self, mark):
        return self.cluster.audit.writes_since(mark, user=self.username)

    def record_grants(self):
        """The roles the collection gave its operands, while they are there (before a teardown)."""
        self.granted.extend(managed_roles(self.cluster.api))

    def assert_least_privilege(self, platform, paths=(), only_paths=False):
        """Not one request refused by RBAC, and every rule of the installer needed: some request of this identity
        (or some rule it granted) that no other of its rules allows, so that removing the rule fails the run. The
        rules of ``paths`` (see PATHS) too, which the run took; with ``only_paths``, only those (a run that took a
        path but not every state)."""
        events = self.events()
        assert events, "no request of {0} in the audit log".format(self.username)
        assert forbidden(events) == []
        requests = requests_of(events) | granted_requests(self.granted)
        unneeded = unneeded_rules(access.rules_for(platform), requests, paths)
        if only_paths:
            unneeded = [(r, why) for r, why in unneeded if r.get("when") in paths]
        assert unneeded == [], [(r["resources"], r["verbs"], r.get("when"), r["why"]) for r, _why in unneeded]

    def remove(self):
        self.run_site(self.cluster, playbook="rbac.yml", extra_vars={"rbac_state": "absent"})
