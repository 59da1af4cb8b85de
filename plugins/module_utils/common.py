# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Plumbing shared by the gpuops.cluster modules.

Connection, client and service objects come from kubernetes.core; this file
only adds what our modules need on top of it: one entry point that turns every
kind of failure (bad parameter, unreachable API, 401/403, API error) into a
message that names the parameter and the fix, and a small progress recorder
for long waits.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import time
import traceback

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_text

try:
    from ansible_collections.kubernetes.core.plugins.module_utils.args_common import (
        AUTH_ARG_SPEC,
    )
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import (
        AnsibleK8SModule,
    )
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import (
        get_api_client,
    )
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import (
        K8sService,
    )
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import (
        CoreException,
    )

    HAS_KUBERNETES_COLLECTION = True
    K8S_COLLECTION_ERROR = None
except ImportError as e:  # pragma: no cover - exercised only without the dependency
    HAS_KUBERNETES_COLLECTION = False
    K8S_COLLECTION_ERROR = e
    AUTH_ARG_SPEC = {}

    class CoreException(Exception):
        pass


WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")


class GpuopsError(Exception):
    """A failure the user can fix: names the parameter (when one is at fault)."""

    def __init__(self, msg, param=None, **details):
        super(GpuopsError, self).__init__(msg)
        self.param = param
        self.details = details

    def __str__(self):
        msg = super(GpuopsError, self).__str__()
        if self.param and not msg.startswith(self.param):
            return "{0}: {1}".format(self.param, msg)
        return msg


def auth_argument_spec():
    """The kubernetes.core connection options (kubeconfig, host, api_key, ...)."""
    return copy.deepcopy(AUTH_ARG_SPEC)


def _status_of(exc):
    return getattr(exc, "status", None)


def describe_api_error(exc, params=None):
    """A clear message for errors raised while talking to the API server.

    The kubernetes client raises very different things for a wrong token, a
    missing permission or a host that does not answer; users should not need
    to read a traceback to know which connection option to fix.
    """
    params = params or {}
    text = to_text(exc)
    where = params.get("host") or params.get("kubeconfig") or "the kubeconfig/K8S_AUTH_* settings"
    status = _status_of(exc)
    if status == 401:
        return (
            "api_key: the API server at {0} rejected the credentials (401 Unauthorized). "
            "Give a valid bearer token in api_key / K8S_AUTH_API_KEY or a kubeconfig "
            "whose user is still valid.".format(where)
        )
    if status == 403:
        reason = ""
        body = getattr(exc, "body", None) or ""
        try:
            import json

            reason = json.loads(body).get("message", "")
        except Exception:  # body is not always JSON
            reason = to_text(body)[:300]
        return (
            "The credentials are valid but lack a permission (403 Forbidden): {0}. "
            "Grant the role shown in the README (roles/preflight) to this user.".format(reason)
        )
    lowered = text.lower()
    for marker in (
        "connection refused",
        "max retries exceeded",
        "name or service not known",
        "failed to establish a new connection",
        "timed out",
        "no route to host",
        "nodename nor servname",
    ):
        if marker in lowered:
            return (
                "host: cannot reach the Kubernetes API at {0} ({1}). Check host / "
                "K8S_AUTH_HOST or the server in kubeconfig, and that the cluster is up."
            ).format(where, marker)
    if "certificate verify failed" in lowered or "ssl" in lowered and "verify" in lowered:
        return (
            "validate_certs: TLS verification of the API server failed ({0}). Give the "
            "cluster CA in ca_cert / K8S_AUTH_SSL_CA_CERT.".format(text[:200])
        )
    if "invalid kube-config" in lowered or "could not create api client" in lowered:
        return "kubeconfig: {0}. Point kubeconfig / K8S_AUTH_KUBECONFIG at a valid file.".format(text)
    return text


class Progress(object):
    """Records how a long wait advances, without repeating identical lines.

    Modules cannot stream to the terminal, so the timeline comes back in the
    result (``progress``) and goes to the module log as it happens.
    """

    def __init__(self, module=None, clock=time.monotonic):
        self.module = module
        self.clock = clock
        self.start = clock()
        self.events = []
        self._last = None

    def elapsed(self):
        return self.clock() - self.start

    def __call__(self, message):
        if message == self._last:
            return
        self._last = message
        line = "t+{0:.0f}s {1}".format(self.elapsed(), message)
        self.events.append(line)
        if self.module is not None and hasattr(self.module, "_module"):
            try:
                self.module._module.log(line)
            except Exception:  # logging must never fail a run
                pass


def new_module(argument_spec, **kwargs):
    """An AnsibleK8SModule (kubernetes.core) for our modules."""
    kwargs.setdefault("supports_check_mode", True)
    if not HAS_KUBERNETES_COLLECTION:
        module = AnsibleModule(argument_spec=argument_spec, **kwargs)
        module.fail_json(
            msg="The kubernetes.core collection is required: {0}".format(K8S_COLLECTION_ERROR)
        )
    return AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argument_spec, **kwargs)


def connect(module):
    """kubernetes.core client + service, with connection errors made readable."""
    try:
        client = get_api_client(module=module)
    except Exception as exc:  # discovery happens here: 401 / unreachable surface now
        raise GpuopsError(describe_api_error(exc, module.params))
    return client, K8sService(client, module)


def run_module(module, runner):
    """Run ``runner(module, client, svc) -> dict`` and exit with its result.

    Every failure ends in ``fail_json`` with a message naming what to fix.
    """
    try:
        client, svc = connect(module)
        result = runner(module, client, svc)
    except GpuopsError as exc:
        kwargs = dict(exc.details)
        if exc.param:
            kwargs["param"] = exc.param
        module.fail_json(msg=to_text(exc), **kwargs)
    except CoreException as exc:
        module.fail_json(msg=describe_api_error(exc, module.params), exception=traceback.format_exc())
    except Exception as exc:
        if _status_of(exc) is not None or "urllib3" in type(exc).__module__:
            module.fail_json(msg=describe_api_error(exc, module.params), exception=traceback.format_exc())
        raise
    module.exit_json(**result)


# ---------------------------------------------------------------------------
# Shared by driver_container_build and gpu_validate (additive helpers).
# ---------------------------------------------------------------------------

# NFD marks NVIDIA GPUs (PCI vendor 0x10de) with one of these labels depending on
# the NFD version: vendor-only (older OpenShift NFD), <class>_<vendor> for 3D
# controllers (0302) and VGA controllers (0300). The GPU Operator accepts any.
NVIDIA_PCI_LABELS = (
    "feature.node.kubernetes.io/pci-10de.present",
    "feature.node.kubernetes.io/pci-0302_10de.present",
    "feature.node.kubernetes.io/pci-0300_10de.present",
)
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "gpuops.cluster"


def has_nvidia_pci_label(labels):
    """True when NFD marked the node as carrying an NVIDIA PCI device."""
    labels = labels or {}
    return any(str(labels.get(key, "")).lower() == "true" for key in NVIDIA_PCI_LABELS)


def label_selector(selector):
    """{'a': 'b', 'c': ''} -> 'a=b,c=' (server-side label selector string)."""
    return ",".join("{0}={1}".format(k, "" if v is None else v) for k, v in sorted((selector or {}).items()))


def select_gpu_nodes(nodes, node_selector=None, names=None):
    """GPU nodes among ``nodes`` (dicts as returned by the API).

    With an explicit ``node_selector`` the nodes must match every label of it
    (the caller usually already asked the server with that selector); without
    one, a node is a GPU node when it carries any NVIDIA PCI label. ``names``
    restricts the result further to those node names.
    """
    selected = []
    for node in nodes:
        meta = node.get("metadata") or {}
        labels = meta.get("labels") or {}
        if node_selector:
            if any(str(labels.get(k)) != str(v) for k, v in node_selector.items()):
                continue
        elif not has_nvidia_pci_label(labels):
            continue
        if names and meta.get("name") not in names:
            continue
        selected.append(node)
    return sorted(selected, key=lambda n: n["metadata"]["name"])


def describe_node_selection(node_selector=None, names=None):
    """Human wording of a node selection, for error messages."""
    if node_selector:
        what = "nodes labelled {0}".format(label_selector(node_selector))
    else:
        what = "nodes labelled {0}=true".format(" or ".join(NVIDIA_PCI_LABELS))
    if names:
        what += " named {0}".format(", ".join(names))
    return what


def object_contains(existing, desired):
    """True when every field of ``desired`` is present with the same value in ``existing``.

    Server defaults (extra keys) are tolerated; lists must have the same length
    and each element must contain the desired element. This is the
    compare-before-write test that keeps a second run free of mutating requests.
    """
    if isinstance(desired, dict):
        if not isinstance(existing, dict):
            return False
        return all(k in existing and object_contains(existing[k], v) for k, v in desired.items())
    if isinstance(desired, list):
        if not isinstance(existing, list) or len(existing) != len(desired):
            return False
        return all(object_contains(e, d) for e, d in zip(existing, desired))
    if isinstance(desired, bool) or isinstance(existing, bool):
        return type(desired) is type(existing) and desired == existing
    return desired == existing


SERVER_FIELDS = ("resourceVersion", "uid", "generation", "creationTimestamp", "managedFields", "selfLink")


def strip_server_fields(obj):
    """A copy of an API object without status and server-populated metadata (for diffs)."""
    obj = copy.deepcopy(obj or {})
    obj.pop("status", None)
    meta = obj.get("metadata") or {}
    for key in SERVER_FIELDS:
        meta.pop(key, None)
    annotations = meta.get("annotations") or {}
    annotations.pop("kubectl.kubernetes.io/last-applied-configuration", None)
    if "annotations" in meta and not annotations:
        meta.pop("annotations")
    return obj
