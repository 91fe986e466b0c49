# Sourced by the project's scripts: puts a Go new enough for sdk/go (the `go` line of sdk/go/go.mod) first on PATH
# and names it in NOTARY_GO. The machine's go (on PATH, or /usr/local/go where the official archive unpacks) is used
# when it is new enough. Otherwise the Go release in .go-version (NOTARY_GO_VERSION overrides) is taken from the Go
# module proxy as the module golang.org/toolchain, the way the go command's own toolchain switching fetches it, with
# the older go as the bootstrap (Debian's golang-go, which `scripts/install.sh test` installs when there is no go at
# all), and linked at NOTARY_GO_CACHE.
notary_go_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
notary_go_needed="$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$notary_go_root/sdk/go/go.mod")"
notary_go_version="${NOTARY_GO_VERSION:-$(cat "$notary_go_root/.go-version")}"
notary_go_cache="${NOTARY_GO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/notary/go}"

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then export PATH="/usr/local/go/bin:$PATH"; fi

# 0 when the go on PATH is at least the version sdk/go needs (GOTOOLCHAIN=local: the version of that binary itself).
notary_go_new_enough() {
  command -v go >/dev/null 2>&1 || return 1
  local have
  have="$(GOTOOLCHAIN=local go env GOVERSION 2>/dev/null)" || return 1
  have="${have#go}"
  [ "$(printf '%s\n%s\n' "$notary_go_needed" "$have" | sort -V | head -n 1)" = "$notary_go_needed" ]
}

if ! notary_go_new_enough; then
  if [ ! -x "$notary_go_cache/bin/go" ]; then
    command -v go >/dev/null 2>&1 || { echo "notary: a go is needed to fetch Go $notary_go_version for sdk/go (scripts/install.sh test installs Debian's golang-go)" >&2; exit 1; }
    case "$(uname -m)" in x86_64) notary_go_arch=amd64 ;; aarch64 | arm64) notary_go_arch=arm64 ;; *) notary_go_arch="$(uname -m)" ;; esac
    notary_go_module="golang.org/toolchain@v0.0.1-go$notary_go_version.linux-$notary_go_arch"
    echo "notary: $(go version) is older than the Go $notary_go_needed sdk/go needs; fetching $notary_go_module from the Go module proxy" >&2
    # From an empty folder: outside any module, whose go.mod could ask for a newer go than the bootstrap has.
    notary_go_tmp="$(mktemp -d)"
    notary_go_dir="$(cd "$notary_go_tmp" && GOFLAGS= GOTOOLCHAIN=local go mod download -json "$notary_go_module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    rmdir "$notary_go_tmp"
    [ -n "$notary_go_dir" ] && [ -f "$notary_go_dir/bin/go" ] || { echo "notary: could not fetch $notary_go_module" >&2; exit 1; }
    # Module archives carry no file modes: the commands become executable as the go command does on first use.
    find "$notary_go_dir/bin" "$notary_go_dir/pkg/tool" -type f -exec chmod a+x {} +
    mkdir -p "$(dirname "$notary_go_cache")"
    ln -sfn "$notary_go_dir" "$notary_go_cache"
  fi
  export PATH="$notary_go_cache/bin:$PATH"
  echo "notary: using $(GOTOOLCHAIN=local go version) from $notary_go_cache" >&2
fi
NOTARY_GO="$(command -v go)"
export NOTARY_GO
