"""The GIL is released while simulating: a whole run is one C call, so other
Python threads run meanwhile, and runs on several threads give the same
results as on one.

Whether the GIL is released is checked without a speed-up threshold: while
a run's C call is under way on one thread, the main thread keeps executing
Python bytecode, so its longest pause is a small part of the run. With the
GIL held for the call, the main thread could not run a single bytecode
until the call returned: its longest pause would be the whole C call,
nearly all of the run. (The speed-up of two threads over one
depends on the machine's load: it is printed, not asserted; the benchmarks
measure throughput, docs/performance.md.)"""
import threading
import time

import drivegraph as dg

# A 120 s full-throttle run at 1 ms (120 000 steps), recording one signal:
# about 0.3 s of C, nearly nothing of Python.
RUN = dict(duration=120, inputs={"throttle": 1.0}, signals=["body.speed"])


def test_gil_released_during_a_run():
    g = dg.Graph.load("graphs/sedan_rwd_automatic.json")
    started, done = threading.Event(), threading.Event()
    results = []

    def run():
        started.set()
        results.append(g.simulate(**RUN).summary["final_values"]["body.speed"])
        done.set()

    t = threading.Thread(target=run)
    t.start()
    started.wait()
    t0 = last = time.perf_counter()
    longest = 0.0
    while not done.is_set():
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
    wall = time.perf_counter() - t0
    t.join()
    print(f"the run took {wall:.3f} s; the main thread's longest pause {longest:.3f} s")
    assert len(results) == 1
    # Released: pauses are the scheduler's (milliseconds; tens on a loaded
    # machine). Held: one pause of the whole C call, > 90 % of the run.
    assert longest < 0.5 * wall


def test_threads_give_the_same_results():
    g = dg.Graph.load("graphs/sedan_rwd_automatic.json")
    results = []

    def one():
        results.append(g.simulate(**RUN).summary["final_values"]["body.speed"])

    one()
    t0 = time.perf_counter()
    one()
    one()
    serial = time.perf_counter() - t0
    ts = [threading.Thread(target=one) for _ in range(2)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    parallel = time.perf_counter() - t0
    print(f"two runs: one thread {serial:.3f} s, two threads {parallel:.3f} s, "
          f"speed-up {serial / parallel:.2f}")
    assert len(results) == 5
    assert len(set(results)) == 1  # every run the same, threads or not
