# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The module_utils of the filter and test plugins, run when a filter first reads from them, not when their file loads.

ansible-core resolves a collection's filter or test by loading every file of the collection's ``plugins/filter``
(``plugins/test``) and asking each for its functions (2.19 ``Jinja2Loader.get_with_context``), in each forked
worker, that is in every task whose templates name one. An import at the top of any filter file is thereby paid by
every such task: 40 ``debug`` tasks each calling one of this collection's filters took 5.1-6.0 s against 1.6 s for
40 without one, most of it importing every role's module_utils (and ``cryptography`` for ``pem_info``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import sys


def lazy_module(name):
    """The module ``name``, its code run when one of its names is first read (the recipe of
    ``importlib.util.LazyLoader``); the module itself when it is already imported."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise ImportError("No module named {0!r}".format(name), name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
