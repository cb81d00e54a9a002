#!/usr/bin/python3
"""The web page on a large job: page load and interaction times in headless
Chromium (docs/PERFORMANCE.md, "The web page on a 1,024-rank job").

usage: web_bench.py COLLECTOR SYNTH [--ranks N] [--steps S]
A collector with --http and a synthetic job of N ranks (default 1024) on 8
nodes and S steps (default 1000), then, in a browser:
  cold load   the job's page until the step chart, the heatmap and the
              slowest step's critical path are drawn (the collector loads
              the job)
  warm load   the same again (the collector kept the job's analysis)
  step click  a click on another step until its critical path is drawn
  rank pick   another rank in the step chart's menu until its steps came
The last line printed is one JSON object.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from web_test import Collector, fail  # noqa: E402


def main():
    collector_bin, synth_bin = sys.argv[1], sys.argv[2]
    args = sys.argv[3:]
    ranks = int(args[args.index("--ranks") + 1]) if "--ranks" in args else 1024
    steps = int(args[args.index("--steps") + 1]) if "--steps" in args else 1000
    collector = Collector(collector_bin, ["--sync", "normal"])
    try:
        address, web = collector.address, collector.web
        t = time.monotonic()
        sent = subprocess.run(
            [synth_bin, "--collector", address, "--job", "big", "--ranks",
             str(ranks), "--nodes", "8", "--steps", str(steps)],
            check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
        ingest_s = time.monotonic() - t
        print(sent)
        browser = collector.open_browser()
        drawn = ("document.querySelector('#step-chart canvas') && "
                 "document.querySelector('#heatmap canvas') && "
                 "document.querySelectorAll('#path-segments tbody tr').length")

        def load():
            browser.open("about:blank")
            t = time.monotonic()
            browser.open(web + "#/job/big")
            browser.wait("the job's page", drawn)
            return time.monotonic() - t

        cold = load()
        warm = load()
        t = time.monotonic()
        browser.eval("document.querySelector('#slowest tbody tr:nth-child(2)')"
                     ".click()")
        browser.wait("the other step's path",
                     "location.hash.includes('/step/') && " + drawn)
        click = time.monotonic() - t
        t = time.monotonic()
        browser.eval("(() => { const s = document.getElementById('step-rank');"
                     " s.value = '5'; s.dispatchEvent(new Event('change'));"
                     " })()")
        browser.wait("rank 5's steps",
                     "performance.getEntriesByType('resource').some((e) => "
                     "e.name.includes('rank=5') && e.responseEnd > 0)")
        pick = time.monotonic() - t
        sizes = browser.eval(
            "Object.fromEntries(performance.getEntriesByType('resource')"
            ".filter((e) => e.name.includes('/api/')).map((e) => "
            "[e.name.replace(/^.*\\/api\\//, ''), e.encodedBodySize]))")
        if browser.errors:
            fail("console errors: %s" % browser.errors)
        print("ingest %.1f s; cold load %.2f s, warm load %.2f s, step click "
              "%.2f s, rank pick %.2f s" % (ingest_s, cold, warm, click, pick))
        print("bytes per answer: %s" % json.dumps(sizes))
        print(json.dumps({"bench": "web", "ranks": ranks, "steps": steps,
                          "cold_load_s": round(cold, 3),
                          "warm_load_s": round(warm, 3),
                          "step_click_s": round(click, 3),
                          "rank_pick_s": round(pick, 3)}))
    finally:
        collector.close()


if __name__ == "__main__":
    main()
