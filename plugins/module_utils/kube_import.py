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
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import re
import sys

try:
    from importlib.machinery import PathFinder
    from importlib.util import find_spec, module_from_spec
except ImportError:  # pragma: no cover - Python 2 (ansible-test sanity's import check only)
    PathFinder = find_spec = module_from_spec = None

PACKAGES = ("kubernetes.client", "kubernetes.client.api", "kubernetes.client.models")
# CoreV1Api -> core_v1_api, V1DeleteOptions -> v1_delete_options (the OpenAPI generator's file names)
_WORD = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def module_name(class_name):
    """The file a generated class lives in: ``V1beta1CSIStorageCapacity`` -> ``v1beta1_csi_storage_capacity``."""
    return re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", _WORD.sub("_", class_name)).lower()


def _has_submodule(package, name):
    return PathFinder.find_spec(package.__name__ + "." + name, package.__path__) is not None


def _run_init(package):
    """The package's own __init__, once (every class it names)."""
    if package.__dict__.pop("__getattr__", None) is not None:
        package.__spec__.loader.exec_module(package)


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
        _run_init(package)
        return getattr(package, name)

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
