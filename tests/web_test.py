#!/usr/bin/python3
"""The collector's web page as a person sees it, in headless Chromium.

A real meridian-collector with --http and the scenario jobs whose answers
are known (testing/scenario_job.h), pages opened in Debian's chromium and
driven over the DevTools protocol (python3-websocket): the job list, the
straggler heatmap's hottest cell, the critical path's segments, a click on
a step, a live job's spans arriving, a hung Open MPI job (tests/hang_job.cc
under a real agent and `meridian run`) stalled at the top of the list and
of its page with its diagnosis, a job whose rank 1 gets slower
(tests/slow_job.cc) with that rank listed, no console errors. Screenshots go to
$SCREENSHOTS (docs/web.md's pictures come from here) when it is set.

usage: web_test.py COLLECTOR SYNTH AGENT MERIDIAN HANG_JOB SLOW_JOB
(the programs)
Exits 1 naming the first check that failed.
"""
import base64
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import websocket

DEADLINE_S = 30  # how long a condition may take to become true


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def until(what, condition):
    """Polls `condition` until it returns something true; fails after the
    deadline naming `what`."""
    end = time.monotonic() + DEADLINE_S
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            fail("timed out waiting for " + what)
        time.sleep(0.05)


class Browser:
    """One headless Chromium page, over the DevTools protocol."""

    def __init__(self, profile):
        chromium = shutil.which("chromium") or fail(
            "no chromium (deploy/dependencies.sh installs Debian's)")
        self.process = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--disable-extensions",
             "--remote-debugging-port=0", "--user-data-dir=" + profile,
             "--window-size=1400,1100", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(profile, "DevToolsActivePort")
        until("chromium's DevTools port",
              lambda: os.path.exists(port_file) and
              open(port_file).read().count("\n") >= 1)
        port = int(open(port_file).readline())
        self.port = port
        pages = json.load(urllib.request.urlopen(
            "http://127.0.0.1:%d/json/list" % port))
        page = next(p for p in pages if p["type"] == "page")
        self.ws = websocket.create_connection(
            page["webSocketDebuggerUrl"], timeout=DEADLINE_S,
            suppress_origin=True)
        self.next_id = 0
        self.errors = []
        for domain in ("Runtime", "Page", "Log"):
            self.call(domain + ".enable")

    def close(self):
        self.ws.close()
        self.process.kill()
        self.process.wait()

    def _event(self, message):
        method = message.get("method")
        params = message.get("params", {})
        if method == "Runtime.exceptionThrown":
            self.errors.append(params["exceptionDetails"].get("text", "") +
                               " " + json.dumps(params["exceptionDetails"].get(
                                   "exception", {}).get("description", "")))
        elif method == "Runtime.consoleAPICalled" and params["type"] == "error":
            self.errors.append(" ".join(
                str(a.get("value", a.get("description", "")))
                for a in params["args"]))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.errors.append(params["entry"]["text"])

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method,
                                 "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    fail("%s: %s" % (method, message["error"]))
                return message["result"]
            self._event(message)

    def eval(self, expression, gesture=False):
        result = self.call("Runtime.evaluate", expression=expression,
                           awaitPromise=True, returnByValue=True,
                           userGesture=gesture)
        if "exceptionDetails" in result:
            fail("%s threw %s" % (expression, result["exceptionDetails"]))
        return result["result"].get("value")

    def wait(self, what, expression):
        return until(what, lambda: self.eval(expression))

    def open(self, url):
        self.call("Page.navigate", url=url)
        self.wait("the page to load", "document.readyState === 'complete'")

    def screenshot(self, name):
        folder = os.environ.get("SCREENSHOTS")
        if not folder:
            return
        os.makedirs(folder, exist_ok=True)
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(os.path.join(folder, name), "wb") as f:
            f.write(base64.b64decode(data))


# A stand-in for the Perfetto UI (ui.perfetto.dev is out of reach of the
# test machines) that speaks its postMessage protocol: PONG to a PING, and
# the trace it receives shown in its title.
FAKE_PERFETTO = b"""<!doctype html><title>waiting</title><script>
window.addEventListener('message', (e) => {
  if (e.data === 'PING') { e.source.postMessage('PONG', e.origin); return; }
  const p = e.data && e.data.perfetto;
  if (!p) return;
  const text = new TextDecoder().decode(p.buffer);
  const events = JSON.parse(text).traceEvents.filter((x) => x.ph === 'X');
  document.title = 'received ' + events.length + ' spans: ' + p.title;
});
</script>"""


def serve_fake_perfetto():
    """Serves FAKE_PERFETTO on a loopback port; returns its origin."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(FAKE_PERFETTO)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return "http://127.0.0.1:%d" % server.server_address[1]


class Collector:
    """A meridian-collector with --http on loopback, its store in a temporary
    directory, and a browser opened on demand; close() ends all of it."""

    def __init__(self, collector_bin, flags=()):
        self.work = tempfile.mkdtemp(prefix="meridian-web-")
        self.browser = None
        self.process = subprocess.Popen(
            [collector_bin, "--listen", "127.0.0.1:0", "--db",
             self.work + "/m.db", "--http", "127.0.0.1:0"] + list(flags),
            stdout=subprocess.PIPE,
            stderr=open(self.work + "/collector.log", "w"), text=True)
        line = self.process.stdout.readline().strip()
        m = re.match(r"meridian-collector listening on (\S+), store .*, "
                     r"web (http://\S+/)$", line)
        if not m:
            self.close()
            fail("collector said: " + line)
        self.address, self.web = m.group(1), m.group(2)

    def open_browser(self):
        self.browser = Browser(self.work + "/profile")
        return self.browser

    def close(self):
        if self.browser:
            self.browser.close()
        self.process.terminate()
        self.process.wait()
        shutil.rmtree(self.work, ignore_errors=True)


def texts(browser, selector):
    return browser.eval("[...document.querySelectorAll(%s)].map("
                        "(e) => e.textContent)" % json.dumps(selector))


def rows(browser, table):
    return browser.eval(
        "[...document.querySelectorAll('#%s tbody tr')].map((tr) => "
        "[...tr.children].map((td) => td.textContent))" % table)


def start_agent(work, address, agent_bin):
    """A real agent for the collector at `address`."""
    agent = subprocess.Popen(
        [agent_bin, "--collector", address, "--socket", work + "/agent.sock",
         "--spool", work + "/spool", "--stack-after-ms", "1000"],
        stdout=subprocess.PIPE, stderr=open(work + "/agent.log", "w"),
        text=True)
    agent.stdout.readline()  # it serves once it has said so
    return agent


def start_mpi_job(work, address, meridian_bin, name, np, argv):
    """An Open MPI job under `meridian run` through the agent start_agent
    started, in a session of its own."""
    mpirun = shutil.which("mpirun.openmpi") or shutil.which("mpirun")
    env = dict(os.environ, MERIDIAN_AGENT_SOCKET=work + "/agent.sock")
    env.pop("LD_PRELOAD", None)
    return subprocess.Popen(
        [meridian_bin, "--collector", address, "run", "--job", name, "--",
         mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(np)] +
        argv, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
        stderr=open("%s/%s.log" % (work, name), "w"))


def main():
    collector_bin, synth_bin = sys.argv[1], sys.argv[2]
    agent_bin, meridian_bin, hang_bin, slow_bin = sys.argv[3:7]
    perfetto = serve_fake_perfetto()
    # A job is stalled 2 s after its ranks stop leaving traced calls.
    collector = Collector(collector_bin, ["--perfetto-ui", perfetto,
                                          "--stall-after", "2"])
    agent, jobs = None, []
    try:
        address, web = collector.address, collector.web
        for scenario in ("slow-rank", "p2p-chain", "late-every-other-step"):
            # late-every-other-step with node-1's clock 2 ms ahead, and the
            # clock models that say so.
            offset = ["--node1-offset-ns", "2000000"] if scenario.startswith(
                "late") else []
            subprocess.run([synth_bin, "--collector", address, "--scenario",
                            scenario] + offset, check=True,
                           stdout=subprocess.DEVNULL)
        browser = collector.open_browser()

        # The job list: the three jobs, finished.
        browser.open(web)
        browser.wait("the job list",
                     "document.querySelectorAll('#jobs tbody tr').length === 3")
        listed = rows(browser, "jobs")
        names = [r[0] for r in listed]
        if names != ["late-every-other-step", "p2p-chain", "slow-rank"]:
            fail("jobs listed: %s" % names)
        slow = listed[2]
        # 64 spans (none dropped) in 746 bytes of chunks.
        if slow[3:9] != ["4", "64", "0", "2", "746 B", "finished"]:
            fail("slow-rank's row: %s" % slow)
        browser.screenshot("jobs.png")

        # slow-rank: rank 2 is the straggler; every step's path is rank 2's
        # forward, then rank 0's Allreduce.
        browser.eval("document.querySelector('#jobs a[href=\"#/job/slow-rank\"]')"
                     ".click()")
        browser.wait("the heatmap",
                     "document.querySelector('#heatmap canvas') !== null")
        hottest = browser.eval(
            "document.getElementById('hottest').dataset.rank")
        if hottest != "2":
            fail("the heatmap's hottest rank is %s, not 2" % hottest)
        # Its legend (the visual map) is drawn clear of the grid and of the
        # step axis's labels below it: right of the grid's right edge.
        layout = browser.eval("""(() => {
            const c = echarts.getInstanceByDom(document.getElementById('heatmap'));
            const grid = c.getModel().getComponent('grid').coordinateSystem.getRect();
            const view = c.getViewOfComponentModel(
                c.getModel().getComponent('visualMap'));
            const box = view.group.getBoundingRect().clone();
            box.applyTransform(view.group.getLocalTransform());
            return {grid_right: grid.x + grid.width, legend_left: box.x,
                    legend_width: box.width};
        })()""")
        if not (layout["legend_width"] > 0 and
                layout["legend_left"] >= layout["grid_right"]):
            fail("the heatmap's legend overlaps its grid or axis: %s" % layout)
        browser.wait("the critical path",
                     "document.querySelectorAll('#path-segments tbody tr')"
                     ".length > 0")
        segments = [r[1:] for r in rows(browser, "path-segments")]
        if segments != [["2", "compute", "forward", "5.000"],
                        ["0", "communication", "MPI_Allreduce", "0.100"]]:
            fail("slow-rank's path: %s" % segments)
        if browser.eval("document.querySelector('#step-chart canvas') === null"):
            fail("no step-time chart")
        browser.wait("the statistics",
                     "document.querySelectorAll('#stats-table tbody tr')"
                     ".length > 0")
        # mpitrace's table per rank: rank 2 communicates 2 ms less a step.
        per_rank = [r[0:3] for r in rows(browser, "rank-stats-table")]
        if [r[0] for r in per_rank] != ["0", "1", "2", "3"]:
            fail("ranks' statistics: %s" % per_rank)
        # elapsed is MPI_Init to MPI_Finalize (none here: "-"), traced the
        # first span to the last; the API names the figures' source.
        if [r[4] for r in rows(browser, "rank-stats-table")] != ["-"] * 4:
            fail("elapsed without MPI_Init: %s" % rows(browser, "rank-stats-table"))
        api = json.load(urllib.request.urlopen(
            web.rstrip("/") + "/api/stats?job=slow-rank"))
        if [r["source"] for r in api["ranks"]] != ["spans"] * 4:
            fail("/api/stats sources: %s" % [r["source"] for r in api["ranks"]])
        browser.screenshot("job.png")

        # late-every-other-step: clicking step 2 in the slowest steps puts
        # rank 0's own forward (2 ms) on the path; step 3's is rank 1's 4 ms.
        browser.open(web + "#/job/late-every-other-step")
        browser.wait("late-every-other-step's page",
                     "document.querySelector('h1').textContent === "
                     "'late-every-other-step'")
        if len(rows(browser, "slowest")) != 4:
            fail("slowest steps: %s" % rows(browser, "slowest"))
        # The path is fetched after the steps: wait for it, not only them.
        browser.wait("the first path",
                     "document.getElementById('path-title') !== null")
        title = browser.eval("document.getElementById('path-title').textContent")
        if not title.startswith("Critical path of step 1: 4.100 ms"):
            fail("first path title: " + title)
        browser.eval("document.querySelector('#slowest tr[data-key=\"2\"]')"
                     ".click()")
        browser.wait("step 2's path",
                     "(document.getElementById('path-title') || {textContent:"
                     " ''}).textContent.startsWith('Critical path of step 2')")
        browser.wait("step 2's segments",
                     "document.querySelectorAll('#path-segments tbody tr')"
                     ".length > 0")
        first = rows(browser, "path-segments")[0][1:]
        if first != ["0", "compute", "forward", "2.000"]:
            fail("step 2's path starts with %s" % first)
        # Open in Perfetto: step 2's trace handed over by postMessage.
        browser.eval("document.getElementById('open-perfetto').click()",
                     gesture=True)

        def perfetto_title():
            for target in json.load(urllib.request.urlopen(
                    "http://127.0.0.1:%d/json/list" % browser.port)):
                if target["type"] == "page" and target["url"].startswith(
                        perfetto) and target["title"].startswith("received"):
                    return target["title"]
            return None
        received = until("the Perfetto window", perfetto_title)
        # Step 2: 4 ranks x (forward, MPI_Allreduce).
        if received != "received 8 spans: late-every-other-step step 2":
            fail("Perfetto received: " + received)
        # Its clocks: node-1 2 ms ahead, charted over the job.
        browser.wait("the clocks",
                     "document.querySelectorAll('#clock-table tbody tr')"
                     ".length === 2")
        clock_rows = [r[:3] for r in rows(browser, "clock-table")]
        if clock_rows != [["node-0", "0,1", "0.0"], ["node-1", "2,3", "2000.0"]]:
            fail("clocks: %s" % clock_rows)
        if browser.eval("document.querySelector('#clock-chart canvas') === null"):
            fail("no clock chart")
        browser.screenshot("step.png")

        # Compare: slow-rank against the chain, per operation.
        browser.open(web + "#/compare?a=slow-rank&b=p2p-chain")
        browser.wait("the comparison",
                     "document.querySelectorAll('#compare-table tbody tr')"
                     ".length > 0")
        compared = {r[0]: r for r in rows(browser, "compare-table")}
        if compared.get("MPI_Allreduce", [None] * 6)[4:6] != ["32", "0"]:
            fail("compare: %s" % compared)
        browser.screenshot("compare.png")

        # A running job: its spans arrive while the page shows it.
        synth = subprocess.Popen(
            [synth_bin, "--collector", address, "--job", "live", "--ranks",
             "2", "--nodes", "1", "--steps", "8", "--spans-per-batch", "12",
             "--pace-ms", "700"], stdout=subprocess.DEVNULL)
        browser.open(web)
        browser.wait("the live job in the list",
                     "[...document.querySelectorAll('#jobs .live')].length > 0")
        browser.open(web + "#/job/live")
        browser.wait("the live job's page",
                     "document.querySelector('h1').textContent === 'live'")
        before = browser.wait(
            "the live job's summary",
            "document.getElementById('live') && "
            "document.getElementById('summary').textContent")
        spans = lambda text: int(re.search(r"([\d,]+) spans", text)
                                 .group(1).replace(",", ""))
        browser.wait("more spans without a reload",
                     "(() => { const m = document.getElementById('summary')"
                     ".textContent.match(/([\\d,]+) spans/); return m && "
                     "Number(m[1].replace(/,/g, '')) > %d; })()" % spans(before))
        synth.wait()
        browser.screenshot("live.png")

        # A job getting slower: 4 ranks, 400 steps of 10 ms and an
        # Allreduce, rank 1 computing 16 ms from step 200: listed on its
        # page while it runs.
        agent = start_agent(collector.work, address, agent_bin)
        jobs.append(start_mpi_job(collector.work, address, meridian_bin,
                                  "slow", 4,
                                  [slow_bin, "400", "1", "200", "1.6", "10"]))
        browser.open(web)
        browser.wait("the slow job in the list",
                     "document.querySelector('#jobs a[href=\"#/job/slow\"]') !== null")
        browser.open(web + "#/job/slow")
        browser.wait("rank 1 slower than before",
                     "document.querySelectorAll('#slowdown-ranks tbody tr')"
                     ".length === 1")
        slow = rows(browser, "slowdown-ranks")[0]
        # rank, node, metric, peer (links only), from step, ...
        if slow[0] != "1" or slow[2] != "compute" or slow[3] != "" or \
                abs(int(slow[4]) - 200) > 3:
            fail("the slow rank: %s" % slow)
        # ... and marked on the step chart at its first step.
        marks = browser.eval(
            "echarts.getInstanceByDom(document.getElementById('step-chart'))"
            ".getOption().series.find((s) => s.name === 'iteration')"
            ".markLine.data.map((d) => d.xAxis)")
        if marks != [slow[4]]:
            fail("the step chart's marks: %s (the slowdown from %s)" %
                 (marks, slow[4]))
        browser.screenshot("slowdown.png")
        jobs[-1].wait()

        # A hung job: stalled above the list, and its diagnosis at the top
        # of its page (both ranks sending to the other, rank 0 in MPI_Send,
        # rank 1 in MPI_Wait for its MPI_Isend; both suspect).
        jobs.append(start_mpi_job(collector.work, address, meridian_bin,
                                  "hung", 2, [hang_bin, "deadlock"]))
        browser.open(web)
        browser.wait("the stalled job above the list",
                     "document.getElementById('stalled-jobs') && "
                     "document.getElementById('stalled-jobs').textContent "
                     "=== 'Stalled: hung'")
        state = {r[0]: r[-1] for r in rows(browser, "jobs")}
        if state.get("hung") != "stalled":
            fail("the hung job's state in the list: %s" % state)
        browser.open(web + "#/job/hung")
        banner = browser.wait(
            "the hung job's diagnosis with its stacks",
            "document.getElementById('health') && "
            "document.querySelectorAll('#stall-ranks details').length === 2 && "
            "document.getElementById('health').textContent")
        if not banner.startswith("Stalled for "):
            fail("the banner: %s" % banner)
        stalls = texts(browser, "#health .stall")
        if stalls != ["ranks 0, 1 wait in MPI_Send; no peer posted a matching "
                      "call (suspects: ranks 0, 1)."]:
            fail("the stalls: %s" % stalls)
        ranks = [r[:3] for r in rows(browser, "stall-ranks")]
        if ranks != [["0", "yes", "MPI_Send"],
                     ["1", "yes", "MPI_Wait for MPI_Isend"]]:
            fail("the stall's ranks: %s" % ranks)
        browser.screenshot("stalled.png")

        if browser.errors:
            fail("console errors: %s" % browser.errors)
        print("web_test: 9 pages checked, no console errors")
    finally:
        for job in jobs:
            try:
                os.killpg(job.pid, signal.SIGKILL)  # mpirun and its ranks
            except ProcessLookupError:
                pass
            job.wait()
        if agent:
            agent.terminate()
            agent.wait()
        collector.close()


if __name__ == "__main__":
    main()
