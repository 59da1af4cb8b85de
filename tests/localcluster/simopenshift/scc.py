# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""SCC admission of the simulated OpenShift: a ValidatingAdmissionPolicy built from the seeded SCCs.

OpenShift admits a pod when ONE SecurityContextConstraints allows everything the pod asks for and the pod's
service account or the requesting user may ``use`` that SCC (RBAC verb ``use`` on
``securitycontextconstraints.security.openshift.io/<name>`` in the pod's namespace); otherwise it refuses with
"unable to validate against any security context constraint: [provider ...]", one entry per SCC
(openshift/apiserver-library-go, pkg/securitycontextconstraints/sccadmission/admission.go,
computeSecurityContext). The local kube-apiserver (1.34) has no SCC plugin, so the openshift profile installs
this policy (admissionregistration.k8s.io/v1, GA in 1.30); CEL's authorizer library makes the same RBAC checks
(k8s.io/apiserver pkg/cel/library/authz.go: ``authorizer.serviceAccount(ns, name)`` for the pod's service
account, bare ``authorizer`` for the requesting user).

What the policy judges, from each SCC's ``allow*`` fields (seed.sccs()): privileged containers (containers and
initContainers), hostPID, hostIPC, hostNetwork and hostPath volumes. Not judged: user and group ranges,
capabilities, SELinux, seccomp, host ports, other volume types, an SCC's own ``users``/``groups`` lists (the
privileged SCC's ``system:masters`` is allowed by the authorizer anyway), SCCs created after install (the policy
is static), and the ``openshift.io/scc`` annotation OpenShift adds to admitted pods.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from simopenshift import apis

POLICY_NAME = "security-context-constraints"
ROLE_PREFIX = "system:openshift:scc:"

# kube-controller-manager runs every controller under one identity here (system:masters, which the authorizer
# allows everything); OpenShift's uses a service account per controller, none of which may use an SCC beyond
# restricted-v2. So for pods a controller creates (DaemonSets, Jobs, ReplicaSets) only the pod's service
# account counts, as on OpenShift, where such a DaemonSet gets FailedCreate events with the SCC refusal.
CONTROLLER_USERS = ("system:kube-controller-manager",)

# Bound to system:authenticated by ClusterRoleBinding system:openshift:scc:restricted-v2 on every 4.11+ cluster
# (seeded too). CEL's serviceAccount() user carries only the system:serviceaccounts(:<ns>) groups, not
# system:authenticated that a real token gets, so these SCCs are taken as usable by everyone here.
FOR_ALL_AUTHENTICATED = ("restricted-v2",)

_PRIVILEGED = "has(%s.securityContext) && has(%s.securityContext.privileged) && %s.securityContext.privileged"


def _privileged(var):
    return _PRIVILEGED % (var, var, var)


# feature -> (the SCC field that allows it, CEL: does the pod ask for it)
FEATURES = (
    ("hostNetwork", "allowHostNetwork", "has(object.spec.hostNetwork) && object.spec.hostNetwork"),
    ("hostPID", "allowHostPID", "has(object.spec.hostPID) && object.spec.hostPID"),
    ("hostIPC", "allowHostIPC", "has(object.spec.hostIPC) && object.spec.hostIPC"),
    (
        "hostPath",
        "allowHostDirVolumePlugin",
        "has(object.spec.volumes) && object.spec.volumes.exists(v, has(v.hostPath))",
    ),
    (
        "privileged",
        "allowPrivilegedContainer",
        "object.spec.containers.exists(c, %s) || (has(object.spec.initContainers) && "
        "object.spec.initContainers.exists(c, %s))" % (_privileged("c"), _privileged("c")),
    ),
)


POD_LEVEL = ("hostNetwork", "hostPID", "hostIPC")


def _error_lines(feature):
    """CEL list of the refusal lines for ``feature``, as an SCC that does not allow it words them.

    Pod-level and container lines get ``provider <scc>: `` in front (_provider_errors), volume lines do not:
    paths and wording as OpenShift 4.12+ prints them (e.g. IBM/ibm-spectrum-scale-csi#1257, FailedCreate of a
    privileged hostPath pod: ``spec.volumes[0]: Invalid value: "hostPath": hostPath volumes are not allowed to be
    used, provider restricted-v2: .containers[0].privileged: Invalid value: true: Privileged containers are not
    allowed``; sccmatching/provider.go validatePodVolumes).
    """
    if feature in POD_LEVEL:
        text = {"hostNetwork": "Host network", "hostPID": "Host PID", "hostIPC": "Host IPC"}[feature]
        line = ".spec.securityContext.%s: Invalid value: true: %s is not allowed to be used" % (feature, text)
        return "variables.needs_%s ? [%s] : []" % (feature, _quote(line))
    if feature == "hostPath":
        line = "'spec.volumes[' + string(i) + ']: Invalid value: \"hostPath\": hostPath volumes are not allowed to be used'"
        return "has(object.spec.volumes) ? object.spec.volumes.transformList(i, v, has(v.hostPath), %s) : []" % line
    line = "'%s[' + string(i) + '].privileged: Invalid value: true: Privileged containers are not allowed'"
    init = "(has(object.spec.initContainers) ? object.spec.initContainers.transformList(i, c, %s, %s) : [])" % (
        _privileged("c"),
        line % ".initContainers",
    )
    main = "object.spec.containers.transformList(i, c, %s, %s)" % (_privileged("c"), line % ".containers")
    return "%s + %s" % (init, main)


def _provider_errors(scc_name, refused):
    """CEL list of one usable provider's refusals: pod security context, then volumes, then containers."""
    provider = _quote("provider %s: " % scc_name)
    parts = []
    pod = ["variables.errors_" + f for f in POD_LEVEL if f in refused]
    if pod:
        parts.append("(%s).map(e, %s + e)" % (" + ".join(pod), provider))
    if "hostPath" in refused:
        parts.append("variables.errors_hostPath")
    if "privileged" in refused:
        parts.append("variables.errors_privileged.map(e, %s + e)" % provider)
    return " + ".join(parts)


def _quote(text):
    return "'%s'" % text.replace("\\", "\\\\").replace("'", "\\'")


def _ident(scc_name):
    return scc_name.replace("-", "_").replace(".", "_")


def allows(scc):
    """Features (FEATURES names) an SCC object allows."""
    volumes = scc.get("volumes") or []
    allowed = set()
    for feature, field, _expr in FEATURES:
        if not scc.get(field):
            continue
        if feature == "hostPath" and not ("*" in volumes or "hostPath" in volumes):
            continue
        allowed.add(feature)
    return allowed


def _use_check(prefix, scc_name):
    return (
        "%s.group('security.openshift.io').resource('securitycontextconstraints')"
        ".namespace(request.namespace).name(%s).check('use').allowed()" % (prefix, _quote(scc_name))
    )


def policy(sccs):
    """ValidatingAdmissionPolicy for ``sccs`` (SCC objects in admission order, seed.sccs())."""
    names = [s["metadata"]["name"] for s in sccs]
    variables = [
        {
            "name": "sa",
            # The ServiceAccount admission plugin has set "default" by now; kept for pods it did not touch.
            "expression": "has(object.spec.serviceAccountName) && object.spec.serviceAccountName != '' "
            "? object.spec.serviceAccountName : 'default'",
        },
        {
            "name": "user_counts",
            "expression": "!(request.userInfo.username in [%s])" % ", ".join(_quote(u) for u in CONTROLLER_USERS),
        },
    ]
    for feature, _field, expr in FEATURES:
        variables.append({"name": "needs_" + feature, "expression": expr})
    variables.append({"name": "needs_any", "expression": " || ".join("variables.needs_" + f for f, _x, _y in FEATURES)})
    for feature, _field, _expr in FEATURES:  # only the message reads them
        variables.append({"name": "errors_" + feature, "expression": _error_lines(feature)})
    for name in names:
        ident = _ident(name)
        if name in FOR_ALL_AUTHENTICATED:
            variables.append({"name": "usable_" + ident, "expression": "true"})
            continue
        # One authorization check per variable: CEL charges 350000 per check against a 1000000 limit per
        # expression (k8s.io/apiserver pkg/cel/library/cost.go); variables are evaluated lazily, once.
        sa_check = _use_check("authorizer.serviceAccount(request.namespace, variables.sa)", name)
        variables.append({"name": "sa_may_" + ident, "expression": sa_check})
        variables.append(
            {"name": "user_may_" + ident, "expression": "variables.user_counts && " + _use_check("authorizer", name)}
        )
        variables.append(
            {"name": "usable_" + ident, "expression": "variables.sa_may_%s || variables.user_may_%s" % (ident, ident)}
        )

    admits = []
    for scc in sccs:
        allowed = allows(scc)
        if not allowed:
            continue  # fits only pods that need nothing, which never get past needs_any
        refused = ["!variables.needs_" + f for f, _x, _y in FEATURES if f not in allowed]
        admits.append("(%s)" % " && ".join(refused + ["variables.usable_" + _ident(scc["metadata"]["name"])]))
    variables.append({"name": "admitted", "expression": "!variables.needs_any || " + " || ".join(admits)})

    # The message cannot ask the authorizer (messageExpression gets no authorizer binding, and only the first
    # refusing validation's message is shown: k8s.io/apiserver pkg/admission/plugin/policy/validating
    # validator.go, dispatcher.go). So one validation per case, each refusing only in its case: no SCC beyond
    # restricted-v2 usable (the missing binding), else the first usable one in admission order. Exact with
    # none or one usable; with several, the later ones are listed as not usable.
    grantable = [n for n in names if n not in FOR_ALL_AUTHENTICATED]
    validations = [
        {
            "expression": "variables.admitted || " + " || ".join("variables.usable_" + _ident(n) for n in grantable),
            "messageExpression": _message(sccs, set(FOR_ALL_AUTHENTICATED)),
            "message": "unable to validate against any security context constraint",
            "reason": "Forbidden",
        }
    ]
    for name in grantable:
        validations.append(
            {
                "expression": "variables.admitted || !variables.usable_" + _ident(name),
                "messageExpression": _message(sccs, set(FOR_ALL_AUTHENTICATED) | {name}),
                "message": "unable to validate against any security context constraint",
                "reason": "Forbidden",
            }
        )
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": POLICY_NAME},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
                ]
            },
            "variables": variables,
            "validations": validations,
        },
    }


def _message(sccs, usable):
    """CEL messageExpression: OpenShift's refusal when exactly the SCCs ``usable`` may be used, + who asked."""
    entries = []
    for scc in sccs:
        name = scc["metadata"]["name"]
        if name not in usable:
            entries.append(_quote('provider "%s": Forbidden: not usable by user or serviceaccount' % name))
            continue
        refused = [f for f, _x, _y in FEATURES if f not in allows(scc)]
        if refused:
            entries.append("(%s).join(', ')" % _provider_errors(name, refused))
    return (
        "'unable to validate against any security context constraint: [' + [%s].filter(e, e != '').join(', ') + ']'"
        " + ' (serviceaccount \"system:serviceaccount:' + request.namespace + ':' + variables.sa + '\"'"
        " + (variables.user_counts ? ', user \"' + request.userInfo.username + '\"' : '') + ')'"
    ) % ", ".join(entries)


def binding():
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": POLICY_NAME},
        "spec": {"policyName": POLICY_NAME, "validationActions": ["Deny"]},
    }


def cluster_role(scc_name):
    """``system:openshift:scc:<name>``: what ``oc adm policy add-scc-to-user <name>`` binds (OpenShift 4.x)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": ROLE_PREFIX + scc_name},
        "rules": [
            {
                "apiGroups": [apis.SCCS.group],
                "resources": [apis.SCCS.plural],
                "resourceNames": [scc_name],
                "verbs": ["use"],
            }
        ],
    }


def cluster_role_bindings():
    """The SCC grants every 4.11+ cluster has: restricted-v2 to all authenticated users."""
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": ROLE_PREFIX + name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE_PREFIX + name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}],
        }
        for name in FOR_ALL_AUTHENTICATED
    ]


def role_binding(namespace, scc_name, service_accounts):
    """What ``oc adm policy add-scc-to-user <scc> -z <sa> -n <ns>`` makes: RoleBinding
    ``system:openshift:scc:<scc>`` in the namespace to the ClusterRole of that name."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": ROLE_PREFIX + scc_name, "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE_PREFIX + scc_name},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": namespace} for sa in service_accounts],
    }
