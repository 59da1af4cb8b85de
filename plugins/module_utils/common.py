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
import json
import os
import time
import traceback

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError  # noqa: F401 (re-exported)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube_import import defer_client_classes, defer_modules

# Before kubernetes.core imports the client: its 718 model classes load when first used (0.2 s of every task), and
# what only some kubeconfigs and sources need (gcp and oidc auth providers, a URL as src) when they do (0.1 s).
defer_client_classes()
defer_modules()

try:
    from ansible_collections.kubernetes.core.plugins.module_utils.args_common import (
        AUTH_ARG_SPEC,
    )
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import (
        get_api_client,
    )
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import (
        AnsibleK8SModule,
    )
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import (
        CoreException,
    )
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import (
        K8sService,
    )

    HAS_KUBERNETES_COLLECTION = True
    K8S_COLLECTION_ERROR = None
except ImportError as e:  # pragma: no cover - exercised only without the dependency
    HAS_KUBERNETES_COLLECTION = False
    K8S_COLLECTION_ERROR = e
    AUTH_ARG_SPEC = {}

    class CoreException(Exception):
        pass


def auth_argument_spec():
    """The kubernetes.core connection options (kubeconfig, host, api_key, ...)."""
    return copy.deepcopy(AUTH_ARG_SPEC)


def _status_of(exc):
    return getattr(exc, "status", None)


UNREACHABLE_MARKERS = (
    "connection refused",
    "max retries exceeded",
    "name or service not known",
    "failed to establish a new connection",
    "timed out",
    "no route to host",
    "nodename nor servname",
)
# An answer cut off in the middle: the API server went away (restart, crash, failover) during the request.
CUT_MARKERS = (
    "connection aborted",
    "remote end closed connection",
    "connection reset",
    "broken pipe",
    "connection broken",
)
TLS_MARKERS = ("certificate verify failed", "certificate_verify_failed", "wrong version number", "sslerror")


def _forbidden_reason(exc):
    body = getattr(exc, "body", None) or ""
    try:
        return json.loads(body).get("message", "")
    except Exception:  # body is not always JSON
        return to_text(body)[:300]


def _config_problem(text, lowered, params, where):
    """Messages for a kubeconfig that loads but does not hold what was asked for."""
    if "contexts list" in lowered or ("context" in lowered and "not found" in lowered):
        return (
            "context: the context {0!r} is not in {1}. Use one of the contexts `kubectl config get-contexts` "
            "lists for that file, or leave context unset for its current-context.".format(params.get("context"), where)
        )
    if "invalid kube-config" in lowered or "could not create api client" in lowered:
        return "kubeconfig: {0}. Point kubeconfig / K8S_AUTH_KUBECONFIG at a valid file.".format(text)
    return None


def server_of(client):
    """The API server URL a kubernetes.core client talks to (None when it cannot be told)."""
    return getattr(getattr(client, "configuration", None), "host", None)


def describe_api_error(exc, params=None, server=None):
    """A clear message for errors raised while talking to the API server.

    The kubernetes client raises very different things for a wrong token, a
    missing permission, an untrusted certificate or a host that does not
    answer; users should not need a traceback to know which option to fix.
    The certificate check comes first: urllib3 wraps a TLS failure in "Max
    retries exceeded", which would otherwise read as an unreachable host.
    """
    params = params or {}
    text = to_text(exc)
    where = params.get("host") or server or params.get("kubeconfig") or "the kubeconfig/K8S_AUTH_* settings"
    status = _status_of(exc)
    if status == 401:
        return (
            "api_key: the API server at {0} rejected the credentials (401 Unauthorized). "
            "Give a valid bearer token in api_key / K8S_AUTH_API_KEY or a kubeconfig "
            "whose user is still valid.".format(where)
        )
    if status == 403:
        # Imported here: access.py (35 KB) is compiled only by a module that met a 403 or checks access.
        from ansible_collections.gpuops.cluster.plugins.module_utils.access import describe_forbidden

        reason = _forbidden_reason(exc)
        return "403 Forbidden: {0}".format(
            describe_forbidden(reason)
            or "{0}. The credentials are valid but lack a permission: playbooks/rbac.yml grants what the "
            "collection needs.".format(reason)
        )
    lowered = text.lower()
    if any(marker in lowered for marker in TLS_MARKERS):
        return (
            "validate_certs: TLS verification of the API server at {0} failed ({1}). Give the cluster CA in "
            "ca_cert / K8S_AUTH_SSL_CA_CERT (or, for a throw-away test cluster only, validate_certs: false).".format(
                where, " ".join(text.split())[:200]
            )
        )
    config = _config_problem(text, lowered, params, where)
    if config:
        return config
    for marker in CUT_MARKERS:
        if marker in lowered:
            return (
                "host: the Kubernetes API at {0} cut the connection in the middle of a request ({1}): the API "
                "server restarted or went away. Run again once it answers; each state picks up where it stopped."
            ).format(where, marker)
    for marker in UNREACHABLE_MARKERS:
        if marker in lowered:
            return (
                "host: cannot reach the Kubernetes API at {0} ({1}). Check host / "
                "K8S_AUTH_HOST or the server in kubeconfig, and that the cluster is up."
            ).format(where, marker)
    return text


FILE_OPTIONS = (
    ("kubeconfig", "K8S_AUTH_KUBECONFIG"),
    ("ca_cert", "K8S_AUTH_SSL_CA_CERT"),
    ("client_cert", "K8S_AUTH_CERT_FILE"),
    ("client_key", "K8S_AUTH_KEY_FILE"),
)


def check_connection_files(params):
    """Files named by the connection options exist (else a bare errno surfaces much later)."""
    for option, env in FILE_OPTIONS:
        value = params.get(option)
        if isinstance(value, str) and value and not os.path.isfile(os.path.expanduser(value)):
            raise GpuopsError(
                "the file {0} does not exist or is not a file. Fix {1} / {2}.".format(value, option, env),
                param=option,
            )


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
        module.fail_json(msg="The kubernetes.core collection is required: {0}".format(K8S_COLLECTION_ERROR))
    return AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argument_spec, **kwargs)


def connect(module):
    """kubernetes.core client + service, with connection errors made readable."""
    check_connection_files(module.params)
    try:
        client = get_api_client(module=module)
    except Exception as exc:  # discovery happens here: 401 / unreachable surface now
        raise GpuopsError(describe_api_error(exc, module.params))
    return client, K8sService(client, module)


def run_module(module, runner):
    """Run ``runner(module, client, svc) -> dict`` and exit with its result.

    Every failure ends in ``fail_json`` with a message naming what to fix.
    """
    client = None
    try:
        client, svc = connect(module)
        result = runner(module, client, svc)
    except Exception as exc:
        failure = failure_of(exc, module.params, client)
        if failure is None:
            raise
        module.fail_json(**failure)
    module.exit_json(**result)


def failure_of(exc, params, client=None):
    """What ``fail_json`` is given for an error a runner raised: its message naming what to fix (the parameter and
    the error's details with a GpuopsError; the API server's answer or the connection's fate described, with the
    traceback, for an API error); None for any other error, a bug, which is raised as it is."""
    if isinstance(exc, GpuopsError):
        failure = dict(exc.details, msg=to_text(exc))
        if exc.param:
            failure["param"] = exc.param
        return failure
    if (
        isinstance(exc, CoreException)
        or _status_of(exc) is not None
        or type(exc).__module__.partition(".")[0] in ("urllib3", "http")
    ):
        return dict(msg=describe_api_error(exc, params, server_of(client)), exception=traceback.format_exc())
    return None


# One managed-by label on everything the collection creates (modules and roles).
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "gpuops.cluster"
