# -*- coding: utf-8 -*-
"""kube_import: the kubernetes client's classes loaded when first used, and the same objects as a plain import.

Each check runs in a new interpreter (this one has imported kubernetes already).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.kube_import import module_name

DEFER = "from ansible_collections.gpuops.cluster.plugins.module_utils.kube_import import defer_client_classes\n"


def run(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


@pytest.mark.parametrize(
    "name, file_name",
    [
        ("CoreV1Api", "core_v1_api"),
        ("V1DeleteOptions", "v1_delete_options"),
        ("V1beta1CSIStorageCapacity", "v1beta1_csi_storage_capacity"),
        ("ApiClient", "api_client"),
        ("V1PodIP", "v1_pod_ip"),
    ],
)
def test_a_class_name_gives_the_generator_file_name(name, file_name):
    assert module_name(name) == file_name


def test_the_dynamic_client_and_kubernetes_core_load_no_model():
    out = run(
        DEFER + "assert defer_client_classes()\n"
        "from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client\n"
        "from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService\n"
        "import json, sys, kubernetes\n"
        "from kubernetes.dynamic import DynamicClient\n"
        "configuration = kubernetes.client.Configuration()\n"
        "api = kubernetes.client.ApiClient(configuration)\n"
        "models = [m for m in sys.modules if m.startswith('kubernetes.client.models.')]\n"
        "print(json.dumps({'models': len(models), 'deferred': '__getattr__' in vars(kubernetes.client)}))\n"
    )
    assert out == {"models": 0, "deferred": True}


def test_every_name_of_the_client_is_the_object_a_plain_import_gives():
    """Every name kubernetes/client/__init__.py and kubernetes/client/models/__init__.py import, asked of the
    deferred packages, is the class of the file the package's own __init__ takes it from, without running it."""
    out = run(
        DEFER + "assert defer_client_classes()\n"
        "import ast, importlib, json, os, sys\n"
        "import kubernetes.client, kubernetes.client.models, kubernetes.client.api\n"
        "wrong, count = [], 0\n"
        "for package in (kubernetes.client, kubernetes.client.models, kubernetes.client.api):\n"
        "    source = open(os.path.join(package.__path__[0], '__init__.py')).read()\n"
        "    for node in ast.parse(source).body:\n"
        "        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith('kubernetes.'):\n"
        "            for alias in node.names:\n"
        "                count += 1\n"
        "                if getattr(package, alias.name) is not getattr(importlib.import_module(node.module), alias.name):\n"
        "                    wrong.append((package.__name__, alias.name))\n"
        "ran = [p.__name__ for p in (kubernetes.client, kubernetes.client.models, kubernetes.client.api)\n"
        "       if '__getattr__' not in vars(p)]\n"
        "print(json.dumps({'count': count, 'wrong': wrong, 'ran_init': ran}))\n"
    )
    assert out["count"] > 1000 and out["wrong"] == [] and out["ran_init"] == [], out


def test_a_name_not_found_by_file_runs_the_package_init_once():
    out = run(
        DEFER + "assert defer_client_classes()\n"
        "import json, kubernetes.client\n"
        "from kubernetes.client import ApiException\n"
        "from kubernetes.client.rest import ApiException as rest_exception\n"
        "try:\n"
        "    kubernetes.client.NoSuchThing\n"
        "    missing = False\n"
        "except AttributeError:\n"
        "    missing = True\n"
        "print(json.dumps({'same': ApiException is rest_exception, 'missing': missing,\n"
        "                  'ran_init': '__getattr__' not in vars(kubernetes.client),\n"
        "                  'pod': kubernetes.client.V1Pod.__module__}))\n"
    )
    assert out == {"same": True, "missing": True, "ran_init": True, "pod": "kubernetes.client.models.v1_pod"}


def test_nothing_is_deferred_once_kubernetes_is_imported():
    out = run(
        "import json, kubernetes\n" + DEFER + "print(json.dumps({'deferred': defer_client_classes(),\n"
        "                  'pod': kubernetes.client.V1Pod.__module__}))\n"
    )
    assert out == {"deferred": False, "pod": "kubernetes.client.models.v1_pod"}


def test_a_client_layout_it_does_not_know_leaves_the_plain_import():
    """No kubernetes/client package where it looks: nothing is deferred, and kubernetes imports as usual."""
    out = run(
        DEFER + "import json, sys\n"
        "import ansible_collections.gpuops.cluster.plugins.module_utils.kube_import as ki\n"
        "ki.PACKAGES = ('kubernetes.no_such_client',) + ki.PACKAGES[1:]\n"
        "deferred = ki.defer_client_classes()\n"
        "import kubernetes\n"
        "print(json.dumps({'deferred': deferred, 'pod': kubernetes.client.V1Pod.__module__,\n"
        "                  'stub': '__getattr__' in vars(kubernetes.client)}))\n"
    )
    assert out == {"deferred": False, "pod": "kubernetes.client.models.v1_pod", "stub": False}


GCP_NAMES = (
    "import google.auth.transport.requests as m, json\n"
    "names = sorted((k, getattr(v, '__module__', None) or type(v).__name__) for k, v in vars(m).items()\n"
    "               if not k.startswith('__'))\n"
)


def test_the_gcp_auth_transport_runs_when_first_read_with_the_names_of_a_plain_import():
    """kube_config imports google.auth.transport.requests for the gcp auth provider only: nothing of it runs until a
    kubeconfig uses it (google.oauth2 stays unloaded), then the module holds what a plain import gives."""
    deferred = run(
        "from ansible_collections.gpuops.cluster.plugins.module_utils.kube_import import defer_module\n"
        "assert defer_module('google.auth.transport.requests')\n"
        "import sys\n"
        "from ansible_collections.gpuops.cluster.plugins.module_utils import common\n"
        "import kubernetes.config.kube_config as kube_config\n"
        "before = 'google.oauth2.service_account' in sys.modules\n"
        "request = kube_config.google.auth.transport.requests.Request\n"
        "after = 'google.oauth2.service_account' in sys.modules\n" + GCP_NAMES + "try:\n"
        "    m.NoSuchThing\n"
        "    missing = False\n"
        "except AttributeError:\n"
        "    missing = True\n"
        "print(json.dumps({'before': before, 'after': after, 'request': request.__module__, 'missing': missing,\n"
        "                  'stub': '__getattr__' in vars(m), 'names': names}))\n"
    )
    plain = run(GCP_NAMES + "print(json.dumps({'names': names}))\n")
    assert deferred.pop("names") == plain["names"] and len(plain["names"]) > 10
    assert deferred == {
        "before": False,
        "after": True,
        "request": "google.auth.transport.requests",
        "missing": True,
        "stub": False,
    }


def test_the_gcp_auth_transport_is_left_alone_when_imported_or_missing():
    out = run(
        "import json, google.auth.transport.requests\n"
        "import ansible_collections.gpuops.cluster.plugins.module_utils.kube_import as ki\n"
        "print(json.dumps({'imported': ki.defer_module('google.auth.transport.requests'),\n"
        "                  'missing': ki.defer_module('google.no_such.module'),\n"
        "                  'missing_parent': ki.defer_module('no_such_package.module')}))\n"
    )
    assert out == {"imported": False, "missing": False, "missing_parent": False}


def test_a_broken_parent_package_is_left_to_the_plain_import_and_its_error(tmp_path):
    package = tmp_path / "broken_gpuops_package"
    package.mkdir()
    (package / "__init__.py").write_text("raise ValueError('broken install')\n")
    (package / "child.py").write_text("VALUE = 1\n")
    out = run(
        "import json, sys\n"
        "sys.path.insert(0, {0!r})\n"
        "import ansible_collections.gpuops.cluster.plugins.module_utils.kube_import as ki\n"
        "deferred = ki.defer_module('broken_gpuops_package.child')\n"
        "try:\n"
        "    import broken_gpuops_package.child\n"
        "    error = None\n"
        "except ValueError as exc:\n"
        "    error = str(exc)\n"
        "print(json.dumps({{'deferred': deferred, 'in_modules': 'broken_gpuops_package.child' in sys.modules,\n"
        "                  'error': error}}))\n".format(str(tmp_path))
    )
    assert out == {"deferred": False, "in_modules": False, "error": "broken install"}


def test_a_second_thread_waits_for_the_module_code_a_first_one_runs(tmp_path):
    """Validation and diagnosis read in threads: a thread asking while another runs the deferred code gets the name
    once it is defined, not an AttributeError of a half-run module."""
    (tmp_path / "slow_gpuops_module.py").write_text("import time\ntime.sleep(0.5)\nVALUE = 42\n")
    out = run(
        "import json, sys, threading, time\n"
        "sys.path.insert(0, {0!r})\n"
        "import ansible_collections.gpuops.cluster.plugins.module_utils.kube_import as ki\n"
        "assert ki.defer_module('slow_gpuops_module')\n"
        "module = sys.modules['slow_gpuops_module']\n"
        "got = {{}}\n"
        "def read(who):\n"
        "    try:\n"
        "        got[who] = module.VALUE\n"
        "    except AttributeError as exc:\n"
        "        got[who] = str(exc)\n"
        "first = threading.Thread(target=read, args=('first',))\n"
        "first.start()\n"
        "time.sleep(0.2)\n"
        "read('second')\n"
        "first.join()\n"
        "print(json.dumps(got))\n".format(str(tmp_path))
    )
    assert out == {"first": 42, "second": 42}


def test_what_only_some_kubeconfigs_and_sources_need_is_not_run_by_a_module_task():
    """The oidc provider's oauth libraries and ansible's urls (a ``src`` given as a URL) stay unrun through the imports
    of a module task: common, kubernetes.core's client, service and resource, the dynamic client."""
    out = run(
        "import json, sys\n"
        "from ansible_collections.gpuops.cluster.plugins.module_utils import common\n"
        "from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client\n"
        "from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService\n"
        "from ansible_collections.kubernetes.core.plugins.module_utils.k8s.resource import create_definitions\n"
        "from kubernetes.dynamic import DynamicClient\n"
        "import kubernetes.config.kube_config\n"
        "run = {n: '__getattr__' not in vars(sys.modules[n]) for n in\n"
        "       ('oauthlib.oauth2', 'requests_oauthlib', 'ansible.module_utils.urls', 'google.auth.transport.requests')}\n"
        "print(json.dumps({'run': run, 'x509': 'cryptography.x509' in sys.modules}))\n"
    )
    assert out == {
        "run": {
            "oauthlib.oauth2": False,
            "requests_oauthlib": False,
            "ansible.module_utils.urls": False,
            "google.auth.transport.requests": False,
        },
        "x509": False,
    }


def test_a_name_taken_at_import_time_runs_the_module_when_first_called():
    """kube_config does ``from requests_oauthlib import OAuth2Session`` and kubernetes.core ``from
    ansible.module_utils.urls import Request``: the names they hold run the module when called and give what the real
    class gives."""
    out = run(
        "import json, sys\n"
        "from ansible_collections.gpuops.cluster.plugins.module_utils import common\n"
        "import kubernetes.config.kube_config as kube_config\n"
        "from ansible.module_utils.urls import Request\n"
        "before = ['__getattr__' in vars(sys.modules[n]) for n in ('requests_oauthlib', 'ansible.module_utils.urls')]\n"
        "session = kube_config.OAuth2Session(client_id='gpuops')\n"
        "request = Request(timeout=3)\n"
        "import requests_oauthlib, ansible.module_utils.urls as urls\n"
        "print(json.dumps({'before': before, 'session': isinstance(session, requests_oauthlib.OAuth2Session),\n"
        "                  'request': isinstance(request, urls.Request), 'timeout': request.timeout,\n"
        "                  'real': [requests_oauthlib.OAuth2Session.__module__, urls.Request.__module__],\n"
        "                  'after': ['__getattr__' in vars(m) for m in (requests_oauthlib, urls)]}))\n"
    )
    assert out == {
        "before": [True, True],
        "session": True,
        "request": True,
        "timeout": 3,
        "real": ["requests_oauthlib.oauth2_session", "ansible.module_utils.urls"],
        "after": [False, False],
    }


def test_a_plain_module_answers_no_path_without_running_and_keeps_its_own_getattr(tmp_path):
    """The import system asks a module for ``__path__`` on ``from module import name``: a plain module has none, and
    asking must not run it. A module whose code defines ``__getattr__`` keeps that one once run."""
    (tmp_path / "gpuops_own_getattr.py").write_text("RAN = True\n\ndef __getattr__(name):\n    return 'own:' + name\n")
    out = run(
        "import json, sys\n"
        "sys.path.insert(0, {0!r})\n"
        "import ansible_collections.gpuops.cluster.plugins.module_utils.kube_import as ki\n"
        "assert ki.defer_module('gpuops_own_getattr')\n"
        "module = sys.modules['gpuops_own_getattr']\n"
        "has_path = hasattr(module, '__path__')\n"
        "ran_before = 'RAN' in vars(module)\n"
        "ran = module.RAN\n"
        "print(json.dumps({{'has_path': has_path, 'ran_before': ran_before, 'ran': ran, 'other': module.other}}))\n".format(
            str(tmp_path)
        )
    )
    assert out == {"has_path": False, "ran_before": False, "ran": True, "other": "own:other"}
