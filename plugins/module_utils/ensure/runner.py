# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_ensure's write path: read everything, decide, validate every write, then write and prune.

Order of a present run:
1. check the manifests and resolve every kind (no request writes),
2. GET every object and compare; prune candidates are listed,
3. server-side dry run of every write that can be checked now,
4. Namespaces and CRDs (waiting for CRDs to be Established), then dry runs of
   the objects that live in them, then every other write in the given order,
5. prune; the module's run (:mod:`.task`) then waits for readiness and runs its followers.
Check mode stops after 2. Other modules write through :func:`ensure_present`; this file imports no follower, so that
their AnsiballZ payloads carry none (Ansible packs every module_utils file a payload's imports reach).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.args import wait_params
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError, Progress
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.compare import decide, item_diff
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.manifests import (
    FOUNDATION_KINDS,
    build_items,
    foundation_first,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.prune import stale_items
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.readiness import wait_all
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.resolve import (
    check_namespaces,
    find_resource,
    read_existing,
    rediscover,
    resolve_kinds,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.writes import apply, delete, wait_established

CHANGING = ("created", "updated")


def plan(client, params):
    """Items with their existing state and action, plus the stale ones (reads only)."""
    items = build_items(params["definitions"], params["namespace"], params["owner"])
    resolve_kinds(client, items)
    if params["state"] == "present":
        check_namespaces(client, items)
    read_existing(client, items)
    for item in items:
        item.action = decide(item.existing, item.body, params["state"])
    stale = []
    if params["prune"] and params["state"] == "present":
        stale = stale_items(client, items, params["owner"], params["prune_kinds"])
    return items, stale


def _checkable_now(item, new_namespaces):
    return item.resource is not None and not (item.namespaced and item.namespace in new_namespaces)


def _write(client, items, field_manager, progress):
    for item in items:
        apply(client, item, field_manager)
        progress("{0} {1}".format(item.describe(), item.action))


def _resolve_deferred(client, items):
    """Kinds that a CRD of this run brought are served now: find their APIs."""
    for item in items:
        item.resource = item.resource or find_resource(client, item.api_version, item.kind)
        if item.resource is None:
            raise GpuopsError(
                "{0}: its kind is still not served after its CRD was created.".format(item.describe()),
                param="definitions",
            )


ROLE_KINDS = ("Role", "ClusterRole")
BINDING_KINDS = ("RoleBinding", "ClusterRoleBinding")


def _role_key(kind, name, namespace):
    return (kind, name, namespace if kind == "Role" else None)


def _binds_new_role(item, new_roles):
    """A binding whose Role / ClusterRole this run creates. The API server checks a binding against its role's
    rules (RBAC escalation prevention: the author must hold them, or have ``bind``); a role that is not there yet
    fails that check even in a dry run, for every identity but a superuser."""
    ref = item.body.get("roleRef") or {}
    return item.kind in BINDING_KINDS and _role_key(ref.get("kind"), ref.get("name"), item.namespace) in new_roles


def _runs_as_new_account(item, new_accounts):
    """A Pod whose ServiceAccount this run creates. Admission refuses a pod whose ServiceAccount does not exist,
    in a dry run too (plugin/pkg/admission/serviceaccount: "error looking up service account")."""
    if item.kind != "Pod":
        return False
    account = (item.body.get("spec") or {}).get("serviceAccountName") or "default"
    return (item.namespace, account) in new_accounts


def _partition(items):
    """(changing, dry-runnable now, dry-runnable once Namespaces and CRDs of this run exist, dry-runnable once the
    roles and ServiceAccounts of this run exist)."""
    changing = [i for i in foundation_first(items) if i.action in CHANGING]
    new_namespaces = set(i.name for i in changing if i.kind == "Namespace" and i.action == "created")
    new_roles = set(
        _role_key(i.kind, i.name, i.namespace) for i in changing if i.kind in ROLE_KINDS and i.action == "created"
    )
    new_accounts = set((i.namespace, i.name) for i in changing if i.kind == "ServiceAccount" and i.action == "created")
    dependents = [i for i in changing if _binds_new_role(i, new_roles) or _runs_as_new_account(i, new_accounts)]
    rest = [i for i in changing if i not in dependents]
    now = [i for i in rest if _checkable_now(i, new_namespaces)]
    later = [i for i in rest if not _checkable_now(i, new_namespaces)]
    return changing, now, later, dependents


def converge(client, items, field_manager, timeout, sleep, progress):
    """Write the changing items: validated by dry runs first, foundation objects first (Namespaces and CRDs, then
    the roles that bindings and the ServiceAccounts that pods of this run refer to)."""
    changing, now, later, dependents = _partition(items)
    for item in now:
        apply(client, item, field_manager, dry_run=True)
    _write(client, [i for i in now if i.kind in FOUNDATION_KINDS], field_manager, progress)
    if any(i.kind == "CustomResourceDefinition" for i in now):
        wait_established(client, now, timeout, sleep, progress)
        rediscover(client)
    _resolve_deferred(client, later)
    for item in later:
        apply(client, item, field_manager, dry_run=True)
    needed = [i for i in changing if i.kind in ROLE_KINDS + ("ServiceAccount",) and i in now + later]
    needed = needed if dependents else []
    _write(client, needed, field_manager, progress)
    for item in dependents:
        apply(client, item, field_manager, dry_run=True)
    _write(client, [i for i in changing if i.kind not in FOUNDATION_KINDS and i not in needed], field_manager, progress)


def remove(client, doomed, timeout, sleep, progress, wait=True):
    """Delete in the given order (callers pass reverse order), then wait until all are gone."""
    for item in doomed:
        delete(client, item)
        progress("{0} deleted".format(item.describe()))
    if wait:
        wait_all(client, doomed, timeout, sleep, progress, absent=True)


def result_of(items, stale, diff_mode):
    changed = any(i.action in CHANGING + ("deleted",) for i in items) or bool(stale)
    result = {
        "changed": changed,
        "objects": [i.summary() for i in items],
        "pruned": [i.summary() for i in stale],
    }
    if diff_mode:
        result["diff"] = [d for d in (item_diff(i) for i in items + stale) if d]
    return result


def ensure_present(module, client, definitions, owner, field_manager="gpuops.cluster"):
    """k8s_ensure's present path (no prune, no wait) for objects another module works out, such as the ledger's
    ConfigMap, so that it writes them in the same module run: read, compare, dry-run and apply only what differs
    (nothing in check mode). Returns k8s_ensure's ``changed``, ``objects`` and ``diff``."""
    params = dict(definitions=definitions, namespace=None, owner=owner, state="present", prune=False, prune_kinds=None)
    items, stale = plan(client, params)
    result = result_of(items, stale, module._diff)
    if not module.check_mode:
        timeout, sleep = wait_params("k8s_ensure", {})
        converge(client, items, field_manager, timeout, sleep, Progress(module))
    return result
