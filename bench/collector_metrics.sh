# Sourced by the benches that run a collector with --metrics 127.0.0.1:0.
# metrics_url LOG: the metrics address the collector logged (the port it
# bound). scrape URL: the metrics text. wait_refreshed URL SECONDS: waits
# until a background refresh has finished and none waits or runs (exit 1
# after SECONDS).
metrics_url() {
  until grep -q 'metrics on http' "$1"; do sleep 0.05; done
  grep -oE 'http://[0-9.]+:[0-9]+/metrics' "$1" | head -1
}
scrape() {
  python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' "$1"
}
wait_refreshed() {
  local start=$SECONDS
  until scrape "$1" | grep -qE '^meridian_collector_refreshes_total\{result="(done|failed)"\} [1-9]' &&
        scrape "$1" | grep -q '^meridian_collector_refresh_waiting 0$'; do
    if [ $((SECONDS - start)) -gt "$2" ]; then
      echo "no background refresh in $2 s" >&2
      return 1
    fi
    sleep 0.05
  done
}
