/**
 * R (4.2, Debian's r-base-core): packages.txt names CRAN packages, one per line (`#` starts a
 * comment). Those not installed on the build machine already (base, recommended, Debian
 * r-cran-*) are installed with install.packages into /deps/library from the cluster's
 * CRAN-style repository (ALGOHOST_CRAN_REPOSITORY, default the public CRAN; a file://
 * repository is used with no network). install.packages only warns about a package it cannot
 * find or build: the step checks that every listed package loads and fails naming the others.
 * Then every .r/.R file is parsed, which reports syntax errors with file, line and column.
 * Last, the in-algorithm client (runner/lib/algorithmia, `library(algorithmia)`) is installed into
 * the artifact's .algohost/R-library, so that it always matches the harness the build was made
 * with and user code needs no packages.txt line for it.
 * The runner puts that library first on the library path (R_LIBS), then /deps/library: the
 * service's client wins over a CRAN package of the same name, which could not reach the API.
 */
import { fileURLToPath } from 'node:url';
import type { Mount } from '../../sandbox/supervisor.js';
import { INSIDE, RUNNER_INSIDE, type LanguageAdapter, type RunnerContext, type StepContext } from '../adapter.js';

const RSCRIPT = '/usr/bin/Rscript';
const R = '/usr/bin/R';
/** The client package's source (runner/lib/algorithmia), mounted read-only into build steps. */
const CLIENT_DIR = fileURLToPath(new URL('./runner/lib/algorithmia/', import.meta.url));
const CLIENT_INSIDE = '/opt/algohost/harness/r/algorithmia';
/** Where the compile step installs the client, relative to the tree (then the artifact). */
const CLIENT_LIBRARY = '.algohost/R-library';
const LIBRARY = `${INSIDE.deps}/library`;
const DEFAULT_CRAN = 'https://cloud.r-project.org';
/** A CRAN package name: letters, digits and dots, starting with a letter, not ending with a dot. */
const PACKAGE_NAME = /^[A-Za-z][A-Za-z0-9.]*[A-Za-z0-9]$/;

/**
 * Keeps the requests away from user code: R cannot move its own fd 0, so the wrapper does. The
 * service's stdin goes to fd 7, R's stdin becomes /dev/null (what a readLines(file("stdin")) or a
 * system() subprocess reads), and cat copies the requests from fd 7 into a named pipe in the
 * runner's /tmp whose path runner.r gets as its argument; it opens the pipe before the algorithm
 * loads and unlinks it. (Not R reading fd 7 itself: /proc/self/fd/N cannot reopen a socket.)
 */
const REQUESTS_FIFO = '/tmp/.algohost-requests';
const WITH_REQUESTS_FIFO = [
  '/bin/sh',
  '-c',
  'exec 7<&0 </dev/null; f=$1; shift; /usr/bin/mkfifo -m 600 "$f" || exit 70; /bin/cat <&7 >"$f" 2>/dev/null 7<&- & exec "$@" "$f" 7<&-',
  'sh',
  REQUESTS_FIFO,
];

/** The scripts below travel in the environment, so that the build log shows a short command line. */
const RUN_SCRIPT = 'eval(parse(text = Sys.getenv("ALGOHOST_R_SCRIPT")))';

/** Arguments: the repository URL, then the package names. */
const INSTALL = `
args <- commandArgs(trailingOnly = TRUE)
repo <- args[[1]]
wanted <- unique(args[-1])
lib <- "${LIBRARY}"
dir.create(lib, recursive = TRUE, showWarnings = FALSE)
.libPaths(c(lib, .libPaths()))
options(warn = 1, repos = c(CRAN = repo), Ncpus = 2L)
have <- installed.packages()
present <- wanted[wanted %in% rownames(have)]
for (p in present) cat(sprintf("%s %s: installed on the build machine already\\n", p, have[match(p, rownames(have)), "Version"]))
missing <- setdiff(wanted, present)
if (length(missing) > 0) {
  cat(sprintf("Installing %s from %s\\n", paste(missing, collapse = ", "), repo))
  install.packages(missing, lib = lib)
}
failed <- Filter(function(p) !requireNamespace(p, quietly = TRUE), wanted)
if (length(failed) > 0) {
  message(sprintf("packages.txt: could not install %s from %s (not in the repository, or its installation failed: see above)", paste(failed, collapse = ", "), repo))
  quit(status = 1)
}
`;

const PARSE = `
files <- list.files(".", pattern = "\\\\.[rR]$", recursive = TRUE)
bad <- 0L
for (f in files) {
  err <- tryCatch({ parse(f, keep.source = TRUE, encoding = "UTF-8"); NULL }, error = function(e) conditionMessage(e))
  if (!is.null(err)) { message("Error: ", err); bad <- bad + 1L }
}
if (bad > 0L) { message(sprintf("%d of %d R files do not parse", bad, length(files))); quit(status = 1) }
cat(sprintf("%d R files parse\\n", length(files)))
`;

/** The non-comment lines of packages.txt, each with its line number. */
function listedPackages(ctx: StepContext): { line: number; name: string }[] {
  const text = ctx.read('packages.txt') ?? '';
  return text
    .split('\n')
    .map((raw, i) => ({ line: i + 1, name: raw.replace(/#.*/, '').trim() }))
    .filter((p) => p.name !== '');
}

export const rAdapter: LanguageAdapter = {
  folder: 'r',
  languages: ['r4'],
  dependencyFiles: ['packages.txt'],

  /**
   * runner/runner.r (needs jsonlite; the client needs curl: both Debian packages, system-wide), which marks each call's output.
   * --vanilla: no .Rprofile, .RData or .Renviron of the algorithm's tree takes part; the client's library, then the layer's,
   * come first on R_LIBS.
   */
  runner(ctx: RunnerContext) {
    return {
      argv: [...WITH_REQUESTS_FIFO, RSCRIPT, '--vanilla', `${RUNNER_INSIDE.harness}/runner.r`],
      outputMarks: true,
      env: {
        ALGOHOST_ALGORITHM_NAME: ctx.algorithmName,
        R_LIBS: [`${RUNNER_INSIDE.app}/${CLIENT_LIBRARY}`, ...(ctx.hasLayer ? [`${RUNNER_INSIDE.deps}/library`] : [])].join(':'),
      },
    };
  },

  installDependencies(ctx: StepContext) {
    const listed = listedPackages(ctx);
    if (listed.length === 0) return [];
    const invalid = listed.filter((p) => !PACKAGE_NAME.test(p.name));
    if (invalid.length > 0) {
      const why = invalid
        .map((p) => `packages.txt line ${p.line}: "${p.name}" is not a CRAN package name (one name per line, # for comments)`)
        .join('\n');
      // The message goes as an argument, never into the script.
      return [{ title: 'read packages.txt', argv: ['/bin/sh', '-c', 'printf "%s\\n" "$1" >&2; exit 1', 'sh', why], network: false }];
    }
    const repo = ctx.registries.cranRepository || DEFAULT_CRAN;
    return [
      {
        title: `install packages.txt from ${repo}`,
        argv: [RSCRIPT, '--vanilla', '-e', RUN_SCRIPT, repo, ...listed.map((p) => p.name)],
        env: { ALGOHOST_R_SCRIPT: INSTALL },
        // A local repository needs no network: none is given.
        network: !repo.startsWith('file:'),
      },
    ];
  },

  compile() {
    return [
      {
        title: 'parse every .r/.R file',
        argv: [RSCRIPT, '--vanilla', '-e', RUN_SCRIPT],
        env: { ALGOHOST_R_SCRIPT: PARSE },
        network: false,
      },
      {
        title: 'install the in-algorithm client (library(algorithmia))',
        argv: [
          '/bin/sh',
          '-c',
          `rm -rf ${CLIENT_LIBRARY} && mkdir -p ${CLIENT_LIBRARY} && exec ${R} CMD INSTALL --no-docs --no-multiarch --no-test-load --library=${CLIENT_LIBRARY} ${CLIENT_INSIDE}`,
        ],
        network: false,
      },
    ];
  },

  toolchainMounts(): Mount[] {
    return [{ host: CLIENT_DIR, inside: CLIENT_INSIDE }];
  },

  env() {
    return { PATH: '/usr/local/bin:/usr/bin:/bin', R_LIBS: LIBRARY };
  },
};
