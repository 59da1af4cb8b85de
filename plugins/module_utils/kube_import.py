# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The kubernetes client's classes loaded when first used, not all at import.

Every module task of the default engine is a new Python process, and ``import kubernetes`` runs
``kubernetes/client/__init__.py``, which imports all of its API classes and its 718 model modules although the
dynamic client that kubernetes.core uses reads JSON and needs none of the models: 0.2 s of every module task
(README, Benchmarks). :func:`defer_client_classes` puts the packages ``kubernetes.client``,
``kubernetes.client.api`` and ``kubernetes.client.models`` in place without running their ``__init__``; a name
asked of them (``kubernetes.client.Configuration``, ``kubernetes.client.CoreV1Api``, ``V1Pod``) is imported from
the module the package's own ``__init__`` takes it from (``configuration``, ``api/core_v1_api``,
``models/v1_pod``: the generator's snake-case file names). A name not found that way runs the package's own
``__init__`` once and is read from it, so every name resolves to the same object as with a plain import.

:func:`defer_module` does the same for a module that the client or kubernetes.core imports at its top for a path
few runs take (:data:`DEFERRED`): its code runs when a name it defines is first read, or when one of the names a
``from module import name`` takes at import time is first called. Together 0.1 s of every module task (README,
Benchmarks): ``kubernetes/config/kube_config.py`` imports ``google.auth.transport.requests`` (with ``google.oauth2``
and ``cryptography``) for the gcp auth provider, ``oauthlib.oauth2`` and ``requests_oauthlib`` (with ``requests``)
for the oidc provider's token refresh; kubernetes.core imports ``ansible.module_utils.urls`` (with
``cryptography.x509`` and ``email``) for a ``src`` given as a URL.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import re
import sys
import threading

try:
    from importlib.machinery import PathFinder
    from importlib.util import find_spec, module_from_spec
except ImportError:  # pragma: no cover - Python 2 (ansible-test sanity's import check only)
    PathFinder = find_spec = module_from_spec = None

PACKAGES = ("kubernetes.client", "kubernetes.client.api", "kubernetes.client.models")
# module -> the names its importers take with ``from module import name`` (called, never subclassed or compared)
DEFERRED = (
    ("google.auth.transport.requests", ()),  # kube_config: the gcp auth provider
    ("oauthlib.oauth2", ()),  # kube_config: the oidc provider's refresh (its errors)
    ("requests_oauthlib", ("OAuth2Session",)),  # kube_config: the oidc provider's refresh
    ("ansible.module_utils.urls", ("Request",)),  # kubernetes.core: src given as a URL
)
# CoreV1Api -> core_v1_api, V1DeleteOptions -> v1_delete_options (the OpenAPI generator's file names)
_WORD = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def module_name(class_name):
    """The file a generated class lives in: ``V1beta1CSIStorageCapacity`` -> ``v1beta1_csi_storage_capacity``."""
    return re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", _WORD.sub("_", class_name)).lower()


def _has_submodule(package, name):
    return PathFinder.find_spec(package.__name__ + "." + name, package.__path__) is not None


_LOCK = threading.RLock()
_RUNNING = set()


def _run_init(module):
    """The module's own code (a package's __init__: every class it names), once. ``__getattr__`` stays until it has
    run, so that another thread asking meanwhile waits here (validation and diagnosis read in threads); the running
    thread asking for a name not defined yet gets the AttributeError a plain import's half-run module gives."""
    with _LOCK:
        stub = module.__dict__.get("__getattr__")
        if stub is not None and module.__name__ not in _RUNNING:
            _RUNNING.add(module.__name__)
            try:
                module.__spec__.loader.exec_module(module)
            finally:
                _RUNNING.discard(module.__name__)
                if module.__dict__.get("__getattr__") is stub:  # not one the module's own code defined
                    del module.__dict__["__getattr__"]


def _loaded(module, name):
    _run_init(module)
    try:
        return module.__dict__[name]
    except KeyError:
        raise AttributeError("module {0!r} has no attribute {1!r}".format(module.__name__, name))


def _resolver(package, homes, modules=()):
    def resolve(name):
        if not name.startswith("_"):
            if _has_submodule(package, name):  # rest, configuration, api_client, ...
                return importlib.import_module(package.__name__ + "." + name)
            file_name = module_name(name)
            places = [home + "." + file_name for home in homes if _has_submodule(sys.modules[home], file_name)]
            for place in places + list(modules):
                value = getattr(importlib.import_module(place), name, None)
                if value is not None:
                    setattr(package, name, value)
                    return value
        return _loaded(package, name)

    return resolve


def defer_client_classes():
    """Install the deferred packages; nothing when kubernetes is missing or already imported (returns False)."""
    if find_spec is None or any(name in sys.modules for name in ("kubernetes",) + PACKAGES):
        return False
    root = find_spec("kubernetes")
    if root is None or not root.submodule_search_locations:
        return False
    parent_path = root.submodule_search_locations
    packages = {}
    for name in PACKAGES:
        spec = PathFinder.find_spec(name, parent_path)
        if spec is None:  # a layout this does not know: the plain import, unchanged
            return False
        packages[name] = module_from_spec(spec)
        parent_path = packages[PACKAGES[0]].__path__
    client, apis, models = (packages[name] for name in PACKAGES)
    client.api, client.models = apis, models
    # kubernetes.client.X: a model, an API class, or one of the client's own files (Configuration, ApiClient);
    # exceptions.py holds ApiException and its kin.
    client.__getattr__ = _resolver(client, [PACKAGES[2], PACKAGES[1], PACKAGES[0]], [PACKAGES[0] + ".exceptions"])
    apis.__getattr__ = _resolver(apis, [PACKAGES[1]])
    models.__getattr__ = _resolver(models, [PACKAGES[2]])
    sys.modules.update(packages)
    return True


def _forwarder(module, name):
    def call(*args, **kwargs):
        return _loaded(module, name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


def defer_module(name, calls=()):
    """``name`` in sys.modules now (and on its parent package), its code run when a name it defines is first read or
    one of ``calls`` is first called; nothing when it is imported already or cannot be found (returns False). Not
    importlib's LazyLoader: its module runs at the next ``import`` statement of it (the import system reads
    ``__spec__``), as kube_config's own."""
    if find_spec is None or name in sys.modules:
        return False
    try:
        spec = find_spec(name)  # imports the parent packages (google.auth, oauthlib: about a millisecond)
    except Exception:  # pylint: disable=broad-except
        return False  # a broken parent package: the plain import raises its error where it belongs
    if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
        return False
    module = module_from_spec(spec)

    def stub(attr):
        # A package's __path__ is set already: asked here, it is a plain module's, which has none (the import
        # system asks when handling ``from module import name``).
        if attr == "__path__":
            raise AttributeError(attr)
        return _loaded(module, attr)

    module.__getattr__ = stub
    for call in calls:
        setattr(module, call, _forwarder(module, call))
    sys.modules[name] = module
    parent, dummy, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return True


def defer_modules():
    """:func:`defer_module` for each of :data:`DEFERRED`; the names it deferred."""
    return [name for name, calls in DEFERRED if defer_module(name, calls)]
