"""Records through the Python binding; tests/mpi_capture_recording_test.cc runs
it under `meridian run` and checks what the collector stored.

With MERIDIAN_TEST_FIFOS=DIR it first writes a line to the FIFO DIR/ready and
reads one from DIR/go (the test sends `meridian trace` in between); with
MERIDIAN_TEST_IN_STEP=1 as well, it does so inside step -1, which then
holds a "late" phase and ends after the go."""
import os

import meridian_probe as mp

assert mp.enabled(), "run me under meridian run"
fifos = os.environ.get("MERIDIAN_TEST_FIFOS")
in_step = os.environ.get("MERIDIAN_TEST_IN_STEP") == "1"
if fifos:
    mp.step_begin(-1)  # registers this process with the agent
    if not in_step:
        mp.step_end()
    with open(os.path.join(fifos, "ready"), "w") as ready:
        ready.write("ready\n")
    with open(os.path.join(fifos, "go")) as go:
        go.readline()
    if in_step:
        with mp.phase("late"):
            pass
        mp.step_end()
for s in range(3):
    with mp.step(s):
        with mp.phase("forward"):
            pass
        t0 = mp.now_ns()
        mp.queue_phase("grad.fc1", "NEGOTIATE_ALLREDUCE", t0, t0 + 1000, 4096, 2)
        mp.instant("mark")
        mp.counter("loss", 1.5 * s)
print("python binding: done")
