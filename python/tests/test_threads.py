"""The GIL is released while simulating: a whole run is one C call, so two
Python threads simulate in parallel (the machines this runs on have at
least two cores)."""
import os
import threading
import time

import pytest

import drivegraph as dg

# A 120 s full-throttle run at 1 ms (120 000 steps), recording one signal:
# about 0.3 s of C, nearly nothing of Python.
RUN = dict(duration=120, inputs={"throttle": 1.0}, signals=["body.speed"])


def best_of(n, fn):
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores")
def test_two_threads_faster_than_one():
    g = dg.Graph.load("graphs/sedan_rwd_automatic.json")
    results = []

    def one():
        results.append(g.simulate(**RUN).summary["final_values"]["body.speed"])

    def serial():
        one()
        one()

    def parallel():
        ts = [threading.Thread(target=one) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    one()  # warm up
    t_serial = best_of(3, serial)
    t_parallel = best_of(3, parallel)
    speedup = t_serial / t_parallel
    print(f"two runs: one thread {t_serial:.3f} s, two threads {t_parallel:.3f} s, "
          f"speed-up {speedup:.2f}")
    assert len(set(results)) == 1  # every run the same, threads or not
    assert speedup > 1.3
