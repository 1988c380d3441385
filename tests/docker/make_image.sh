#!/usr/bin/env bash
# The sandbox image build now ships with @terret/exec (exec/sandbox/make_image.sh; `trt sandbox build` runs it for
# a profile). This path stays for .ci/run and the docker lane.
exec bash "$(dirname "$0")/../../exec/sandbox/make_image.sh" "$@"
