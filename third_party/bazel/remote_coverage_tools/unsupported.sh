#!/bin/sh
echo "bazel coverage is not supported in Meridian's offline build" >&2
exit 1
