"""Records through the Python binding; tests/mpi_capture_test.cc runs it under
`meridian run` and checks what the collector stored."""
import meridian_probe as mp

assert mp.enabled(), "run me under meridian run"
for s in range(3):
    with mp.step(s):
        with mp.phase("forward"):
            pass
        t0 = mp.now_ns()
        mp.queue_phase("grad.fc1", "NEGOTIATE_ALLREDUCE", t0, t0 + 1000, 4096, 2)
        mp.instant("mark")
        mp.counter("loss", 1.5 * s)
print("python binding: done")
