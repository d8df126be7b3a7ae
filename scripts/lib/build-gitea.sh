#!/usr/bin/env bash
# Builds the Gitea the external-SCM tests run against (a real forge with OAuth2, a REST API and
# signed webhooks) into $ALGOHOST_TEST_CACHE/gitea/VERSION/ (default /var/cache/algohost-test), once: a later call with the binary there does
# nothing. `go install code.gitea.io/gitea@…` is refused because Gitea's go.mod has `replace`
# directives, so a throwaway wrapper module repeats them and builds Gitea as a dependency.
# The first compile takes ~7 min on 2 cores; with a warm Go build cache ~20 s.
# Usage: scripts/lib/build-gitea.sh   (prints the binary's path last)
set -euo pipefail
cd "$(dirname "$0")/../.."

version=1.26.0
out=${ALGOHOST_TEST_CACHE:-/var/cache/algohost-test}/gitea/$version
if [[ -x $out/gitea && -s $out/static-root ]]; then
  echo "$out/gitea"
  exit 0
fi
go=$(command -v go || true)
[[ -n $go ]] || go=/usr/local/go/bin/go
[[ -x $go ]] || { echo "Go is not installed: the Gitea used by the external-SCM tests is built with it" >&2; exit 1; }

mkdir -p "$out"
work=$(mktemp -d /tmp/algohost-gitea-build.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
# The seven replace lines of Gitea 1.26.0's own go.mod; without them its dependencies do not
# resolve to versions that compile together.
cat >go.mod <<MOD
module algohost.test/gitea-wrapper

go 1.26.2

replace github.com/jaytaylor/html2text => github.com/Necoro/html2text v0.0.0-20250804200300-7bf1ce1c7347
replace github.com/nektos/act => gitea.com/gitea/act v0.261.10
replace github.com/urfave/cli/v3 => github.com/urfave/cli/v3 v3.4.1
replace go.yaml.in/yaml/v4 => go.yaml.in/yaml/v4 v4.0.0-rc.3
replace github.com/Azure/azure-sdk-for-go/sdk/azcore => github.com/Azure/azure-sdk-for-go/sdk/azcore v1.19.0
replace github.com/Azure/azure-sdk-for-go/sdk/storage/azblob => github.com/Azure/azure-sdk-for-go/sdk/storage/azblob v1.6.2
replace github.com/microsoft/go-mssqldb => github.com/microsoft/go-mssqldb v1.9.7
MOD
cat >tools.go <<'GO'
//go:build tools

package tools

import _ "code.gitea.io/gitea"
GO
echo "building Gitea $version for the external-SCM tests (first time ~7 min)" >&2
GOFLAGS=-mod=mod GOTOOLCHAIN=local "$go" get "code.gitea.io/gitea@v$version" >&2
CGO_ENABLED=1 GOFLAGS=-mod=mod GOTOOLCHAIN=local "$go" build -tags 'sqlite sqlite_unlock_notify' -o "$out/gitea.tmp" code.gitea.io/gitea
# Gitea serves its templates and assets from the module's source directory.
GOFLAGS=-mod=mod GOTOOLCHAIN=local "$go" list -m -f '{{.Dir}}' code.gitea.io/gitea >"$out/static-root"
mv "$out/gitea.tmp" "$out/gitea"
echo "$out/gitea"
