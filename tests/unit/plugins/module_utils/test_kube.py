# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import kube


class _Exc(Exception):
    def __init__(self, status=None, body=""):
        super(_Exc, self).__init__("boom")
        self.status = status
        self.body = body


def test_api_message_reads_status_body():
    assert kube.api_message(_Exc(400, '{"message": "bad selector"}')) == "bad selector"
    assert kube.api_message(_Exc(500, "not json\n at all")) == "not json at all"


def test_node_ready_reasons():
    ready = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    assert kube.node_ready(ready) == (True, "")
    assert kube.node_ready({"status": {}})[1] == "node NotReady (no Ready condition)"
    not_ready = {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]}}
    assert kube.node_ready(not_ready) == (False, "node NotReady (KubeletNotReady)")
    cordoned = dict(ready, spec={"unschedulable": True})
    assert kube.node_ready(cordoned)[0] is False
    assert kube.condition_true(ready, "Ready") and not kube.condition_true(ready, "MemoryPressure")


def test_merge_patch_round_trip():
    source = {"a": 1, "b": {"c": 2, "d": 3}, "e": [1]}
    target = {"a": 1, "b": {"c": 5}, "f": "x", "e": [1, 2]}
    patch = kube.create_merge_patch(source, target)
    assert patch == {"b": {"c": 5, "d": None}, "f": "x", "e": [1, 2]}
    assert kube.merge_patch(source, patch) == target


def test_object_contains_tolerates_server_defaults_but_not_bool_int():
    assert kube.object_contains({"a": 1, "b": 2}, {"a": 1})
    assert not kube.object_contains({"a": [1, 2]}, {"a": [1]})
    assert not kube.object_contains({"a": 1}, {"a": True})


def test_parallel_map_keeps_order_and_errors():
    def func(x):
        if x == 2:
            raise ValueError("two")
        return x * 10

    out = kube.parallel_map(func, [1, 2, 3], workers=2)
    assert [(i, r) for i, r, e in out] == [(1, 10), (2, None), (3, 30)]
    assert isinstance(out[1][2], ValueError)
    assert kube.parallel_map(func, [], 4) == []


def test_diff_entry_none_when_equal_and_strips_server_fields():
    obj = {"kind": "ConfigMap", "metadata": {"name": "x", "resourceVersion": "5"}, "data": {"a": "1"}}
    assert (
        kube.diff_entry("ConfigMap ns/x", obj, {"kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "1"}})
        is None
    )
    entry = kube.diff_entry("ConfigMap ns/x", None, obj)
    assert entry["before"] == {} and "resourceVersion" not in entry["after"]["metadata"]


def test_label_selector_and_pool_size():
    assert kube.label_selector({"b": "2", "a": None}) == "a=,b=2"

    class Cfg(object):
        connection_pool_maxsize = 7

    class Client(object):
        configuration = Cfg()

    assert kube.pool_size(Client()) == 7
    assert kube.pool_size(object()) == kube.DEFAULT_POOL


class _Looks(object):
    """A Waiter stand-in that answers True from look number ``ready_at`` on (counting from 1)."""

    def __init__(self, ready_at):
        self.ready_at = ready_at
        self.looks = []

    def wait(self, timeout, sleep, **kwargs):
        assert timeout == 0  # one look per call
        self.looks.append(kwargs)
        return len(self.looks) >= self.ready_at, {"n": len(self.looks)}, 0


def test_wait_backoff_looks_soon_then_every_sleep_and_ends_on_the_first_yes():
    from ansible_collections.gpuops.cluster.plugins.module_utils.kube import wait_backoff

    now = [0.0]
    pauses = []

    def pause(seconds):
        pauses.append(seconds)
        now[0] += seconds

    waiter = _Looks(ready_at=7)
    ok, instance, elapsed = wait_backoff(waiter, 600, 5, clock=lambda: now[0], pause=pause, label_selectors=["a=true"])
    assert ok and instance == {"n": 7} and elapsed == 17
    assert pauses == [0.5, 1, 2, 4, 5, 5]  # then every wait_sleep
    assert waiter.looks[0] == {"label_selectors": ["a=true"]}


def test_wait_backoff_looks_again_soon_while_the_status_moves():
    from ansible_collections.gpuops.cluster.plugins.module_utils.kube import wait_backoff

    pauses = []
    clock, pause = _clock(pauses)

    class Rollout(_Looks):
        # numberReady at each look: nothing for a while, then a rollout, then done
        READY = [0, 0, 0, 0, 40, 80, 100]

        def wait(self, timeout, sleep, **kwargs):
            dummy, dummy2, dummy3 = super(Rollout, self).wait(timeout, sleep, **kwargs)
            ready = self.READY[len(self.looks) - 1]
            return ready == 100, {"status": {"desiredNumberScheduled": 100, "numberReady": ready}}, 0

    ok, instance, elapsed = wait_backoff(Rollout(ready_at=0), 600, 5, clock=clock, pause=pause)
    assert ok and instance["status"]["numberReady"] == 100
    # unchanged: 0.5, 1, 2, 4; the status moved at the fifth look: 1, then moved again: 1
    assert pauses == [0.5, 1, 2, 4, 1, 1] and elapsed == 9

    # A list look (nfd_labels' labelled nodes): the number of matches moving counts as progress.
    class Labelled(_Looks):
        COUNT = [0, 0, 0, 3, 5]

        def wait(self, timeout, sleep, **kwargs):
            super(Labelled, self).wait(timeout, sleep, **kwargs)
            count = self.COUNT[len(self.looks) - 1]
            return count == 5, {"kind": "NodeList", "items": [{}] * count}, 0

    pauses = []
    clock, pause = _clock(pauses)
    ok, dummy, dummy2 = wait_backoff(Labelled(ready_at=0), 600, 5, clock=clock, pause=pause)
    assert ok and pauses == [0.5, 1, 2, 1]


def test_wait_backoff_gives_up_at_the_timeout_with_a_last_look():
    from ansible_collections.gpuops.cluster.plugins.module_utils.kube import wait_backoff

    now = [0.0]

    def pause(seconds):
        now[0] += seconds

    waiter = _Looks(ready_at=10**6)
    ok, instance, elapsed = wait_backoff(waiter, 12, 5, clock=lambda: now[0], pause=pause)
    assert not ok and elapsed == 12
    # looks at 0, 0.5, 1.5, 3.5, 7.5 and the last one at the timeout (12)
    assert len(waiter.looks) == 6


def test_wait_backoff_looks_again_after_a_connection_error_and_raises_it_only_at_the_end():
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException

    from ansible_collections.gpuops.cluster.plugins.module_utils.kube import wait_backoff

    now = [0.0]

    def pause(seconds):
        now[0] += seconds

    class Flaky(_Looks):
        def wait(self, timeout, sleep, **kwargs):
            if len(self.looks) == 1:
                self.looks.append("error")
                raise CoreException("Exception 'connection refused' raised while trying to get resource")
            return super(Flaky, self).wait(timeout, sleep, **kwargs)

    waiter = Flaky(ready_at=3)
    ok, instance, elapsed = wait_backoff(waiter, 60, 5, clock=lambda: now[0], pause=pause)
    assert ok and len(waiter.looks) == 3  # look, error, look that sees it done

    class Down(_Looks):
        def wait(self, timeout, sleep, **kwargs):
            raise CoreException("connection refused")

    now[0] = 0.0
    with pytest.raises(CoreException, match="connection refused"):
        wait_backoff(Down(1), 3, 1, clock=lambda: now[0], pause=pause)


class _Unreachable(object):
    """A waiter whose looks cannot reach the API server from look ``down_from`` to ``up_at`` (excluded)."""

    def __init__(self, down_from, up_at, ready_at):
        self.looks, self.down_from, self.up_at, self.ready_at = 0, down_from, up_at, ready_at

    def wait(self, timeout, sleep, **kwargs):
        from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException

        self.looks += 1
        if self.down_from <= self.looks < self.up_at:
            raise CoreException(
                "Exception 'HTTPSConnectionPool(host='10.0.0.1', port=6443): Max retries exceeded "
                "(Caused by NewConnectionError(... [Errno 111] Connection refused))' raised"
            )
        return self.looks >= self.ready_at, {}, 0


def _clock(pauses=None):
    """A clock and a pause that moves it (each pause appended to ``pauses`` when given): no real sleeping."""
    now = [0.0]

    def pause(seconds):
        if pauses is not None:
            pauses.append(seconds)
        now[0] += seconds

    return (lambda: now[0]), pause


def test_wait_backoff_looks_again_through_a_short_outage():
    from ansible_collections.gpuops.cluster.plugins.module_utils.kube import wait_backoff

    clock, pause = _clock()
    waiter = _Unreachable(down_from=2, up_at=8, ready_at=9)  # unreachable for about 20 s
    ok, dummy, elapsed = wait_backoff(waiter, 900, 5, clock=clock, pause=pause)
    assert ok and waiter.looks == 9 and elapsed < 60


def test_wait_backoff_stops_when_the_api_server_stays_away():
    from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
    from ansible_collections.gpuops.cluster.plugins.module_utils.kube import wait_backoff

    clock, pause = _clock()
    waiter = _Unreachable(down_from=2, up_at=10**6, ready_at=10**6)
    with pytest.raises(GpuopsError) as info:
        wait_backoff(waiter, 900, 5, clock=clock, pause=pause)
    msg = str(info.value)
    # Long before the wait's own 900 s, naming the option to check and how long the API server was away.
    assert clock() < 70
    assert msg.startswith("host: cannot reach the Kubernetes API") and "did not answer for 6" in msg, msg


def test_wait_backoff_raises_an_answer_at_once():
    # A 403 is the API server answering: no outage to wait out.
    from ansible_collections.gpuops.cluster.plugins.module_utils.kube import wait_backoff

    class Forbidden(Exception):
        status = 403

    class Waiter(object):
        def wait(self, timeout, sleep, **kwargs):
            raise Forbidden("forbidden")

    clock, pause = _clock()
    with pytest.raises(Forbidden):
        wait_backoff(Waiter(), 900, 5, clock=clock, pause=pause)
    assert clock() == 0
