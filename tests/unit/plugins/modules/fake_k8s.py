# -*- coding: utf-8 -*-
"""A small in-memory stand-in for kubernetes.core's K8SClient, for module unit tests.

It keeps objects by (kind, namespace, name), understands the simple label
selectors the modules send (k=v, k, !k, k in (a,b)), applies JSON merge patches and
records every write, so a test can assert "zero writes" the way the
integration tests do with the audit log.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import copy
import json
import re

from ansible.module_utils.testing import patch_module_args
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError


class Resource(object):
    def __init__(self, kind, api_version, namespaced):
        self.kind = kind
        self.api_version = api_version
        # kubernetes.dynamic's Resource: group/version ("apps/v1"; "v1" for the core group).
        self.group_version = api_version
        self.namespaced = namespaced


class Instance(object):
    def __init__(self, obj):
        self._obj = obj

    def to_dict(self):
        return copy.deepcopy(self._obj)


class Response(object):
    def __init__(self, obj):
        self.data = json.dumps(obj).encode()
        self.headers = {}


class Configuration(object):
    connection_pool_maxsize = 10


def _merge(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge(result.get(key), value)
    return result


def _matches(labels, selector):
    if not selector:
        return True
    for term in re.split(r",(?![^()]*\))", selector):
        term = term.strip()
        m = re.match(r"^(\S+)\s+in\s+\((.*)\)$", term)
        if m:
            if labels.get(m.group(1)) not in [v.strip() for v in m.group(2).split(",")]:
                return False
        elif "!=" in term:
            key, value = term.split("!=", 1)
            if labels.get(key) == value:
                return False
        elif "=" in term:
            key, value = term.replace("==", "=").split("=", 1)
            if labels.get(key) != value:
                return False
        elif term.startswith("!"):
            if term[1:].strip() in labels:
                return False
        elif labels.get(term) is None:
            return False
    return True


def not_found(name):
    return NotFoundError(ApiException(status=404, reason="Not Found: {0}".format(name)))


class FakeClient(object):
    """Enough of K8SClient for K8sService, Waiter and our modules."""

    KINDS = {
        ("Node", "v1"): False,
        ("MachineSet", "machine.openshift.io/v1beta1"): True,
        ("Machine", "machine.openshift.io/v1beta1"): True,
    }

    def __init__(self, objects=(), kinds=None):
        self.dry_run = False
        self.configuration = Configuration()
        self.kinds = dict(self.KINDS if kinds is None else kinds)
        self.store = {}
        self.writes = []
        self.reads = 0
        self.on_get = None  # hook(resource) called before each read: simulates controllers
        for obj in objects:
            self.put(obj)

    # -- test helpers
    def put(self, obj):
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("uid", "uid-" + meta["name"])
        meta.setdefault("resourceVersion", "1")
        self.store[(obj["kind"], meta.get("namespace"), meta["name"])] = obj

    def objects(self, kind):
        return [copy.deepcopy(o) for (k, dummy, dummy2), o in sorted(self.store.items()) if k == kind]

    # -- K8SClient API
    def resource(self, kind, api_version):
        if (kind, api_version) not in self.kinds:
            raise ResourceNotFoundError("No matches found for {0}".format(kind))
        return Resource(kind, api_version, self.kinds[(kind, api_version)])

    def get(self, resource, name=None, namespace=None, label_selector=None, serialize=True, **dummy):
        self.reads += 1
        if self.on_get:
            self.on_get(self, resource)
        if name:
            obj = self.store.get((resource.kind, namespace if resource.namespaced else None, name))
            if obj is None:
                raise not_found(name)
            return Response(obj) if serialize is False else Instance(obj)
        items = [
            copy.deepcopy(o)
            for (k, ns, dummy3), o in sorted(self.store.items())
            if k == resource.kind
            and (namespace is None or ns == namespace)
            and _matches(o["metadata"].get("labels") or {}, label_selector)
        ]
        result = {"kind": resource.kind + "List", "apiVersion": resource.api_version, "items": items}
        return Response(result) if serialize is False else Instance(result)

    def create(self, resource, definition, namespace=None, **params):
        self.writes.append(("create", resource.kind, definition["metadata"]["name"], params.get("dry_run")))
        obj = copy.deepcopy(definition)
        obj["metadata"]["namespace"] = namespace
        obj["metadata"]["resourceVersion"] = "1"
        obj["metadata"]["uid"] = "uid-" + obj["metadata"]["name"]
        obj["metadata"]["generation"] = 1
        self.put(obj)
        return Response(obj)

    def patch(self, resource, definition, name=None, namespace=None, content_type=None, **params):
        self.writes.append(("patch", resource.kind, name, params.get("dry_run")))
        assert content_type == "application/merge-patch+json", content_type
        key = (resource.kind, namespace if resource.namespaced else None, name)
        if key not in self.store:
            raise not_found(name)
        obj = _merge(self.store[key], definition)
        obj["metadata"]["resourceVersion"] = str(int(obj["metadata"]["resourceVersion"]) + 1)
        self.store[key] = obj
        return Response(obj)

    def delete(self, resource, name=None, namespace=None, label_selector=None, **params):
        if name is None and label_selector:
            return self.delete_collection(resource, namespace, label_selector)
        self.writes.append(("delete", resource.kind, name, params.get("dry_run")))
        obj = self.store.pop((resource.kind, namespace if resource.namespaced else None, name), None)
        if obj is None:
            raise not_found(name)
        return Instance(obj)

    def delete_collection(self, resource, namespace, label_selector):
        """DELETE on a collection with a label selector (a deletecollection in the audit log)."""
        self.writes.append(("deletecollection", resource.kind, label_selector, None))
        for key, obj in list(self.store.items()):
            if (
                key[0] == resource.kind
                and key[1] == namespace
                and _matches(obj["metadata"].get("labels") or {}, label_selector)
            ):
                del self.store[key]
        return Instance({"kind": resource.kind + "List", "items": []})


class Exit(Exception):
    def __init__(self, result, failed):
        super(Exit, self).__init__(result.get("msg"))
        self.result = result
        self.failed = failed


@contextlib.contextmanager
def module_run(monkeypatch, client, args, check=False, diff=False):
    """Patch exit_json/fail_json and the connection; yield nothing, raise Exit with the result."""
    from ansible.module_utils import basic
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService

    from ansible_collections.gpuops.cluster.plugins.module_utils import common

    def exit_json(self, **kwargs):
        from ansible.module_utils.common.warnings import get_warning_messages

        kwargs["warnings"] = list(get_warning_messages())
        raise Exit(kwargs, False)

    def fail_json(self, **kwargs):
        raise Exit(kwargs, True)

    def connect(module):
        client.dry_run = module.server_side_dry_run
        return client, K8sService(client, module)

    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    monkeypatch.setattr(common, "connect", connect)
    args = dict(args)
    if check:
        args["_ansible_check_mode"] = True
    if diff:
        args["_ansible_diff"] = True
    with patch_module_args(args):
        yield


def run(monkeypatch, main, client, args, check=False, diff=False):
    """Run a module's main() against ``client``; return (result, failed)."""
    try:
        with module_run(monkeypatch, client, args, check=check, diff=diff):
            main()
    except Exit as exc:
        return exc.result, exc.failed
    raise AssertionError("module did not exit")
