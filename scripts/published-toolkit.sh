# Sourced by scripts/run-published-acceptance.sh and run-published-integration.sh: exports the
# toolkit's tests/ folder (as published, from a working tree or a bare git dir) into a scratch
# directory OUTSIDE this repository and installs its own package.json there from the npm registry.
# Nothing of the toolkit is copied into the repository.
#
#   export_toolkit_tests <toolkit> <scratch-dir> <repo-dir>
export_toolkit_tests() {
  local toolkit=$1 scratch=$2 repo=$3
  case "$(cd "$scratch" 2>/dev/null && pwd || echo "$scratch")/" in
    "$repo"/*) echo "scratch dir must be outside the repository ($repo)" >&2; exit 2 ;;
  esac
  mkdir -p "$scratch"
  echo "exporting the toolkit's tests/ into $scratch"
  git -C "$toolkit" archive HEAD tests | tar -x -C "$scratch"
  (cd "$scratch/tests" && npm install --no-audit --no-fund >/dev/null)
}
