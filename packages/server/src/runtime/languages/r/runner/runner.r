# The R (4.2) runner harness: the pipe protocol of docs/compatibility.md §4 and the contract of
# catalog/templates/README.md. Started once per warm runner with the built algorithm as the
# working directory; it sources src/<Name>.r (else src/Algorithm.r) once into the global
# environment (its top-level code is the load step), prints PIPE_INIT_COMPLETE, then answers one
# JSON request per stdin line with exactly one JSON line on the response FIFO. The algorithm's
# prints stay on stdout/stderr (the call's stdout); responses go only to the FIFO.
#
# The harness runs in its own environment whose parent is the base package, so that whatever the
# algorithm defines globally (its `apply` masks base::apply, and it may mask anything else) never
# changes the harness; the algorithm's `apply` is fetched from the global environment by name.
local({
  SENTINEL <- "PIPE_INIT_COMPLETE"
  FIFO <- Sys.getenv("ALGOHOST_RESPONSE_FIFO", "/tmp/algoout")
  NAME_FALLBACK <- Sys.getenv("ALGOHOST_ALGORITHM_NAME", "Algorithm")
  # The output mark (templates/README.md, "Output marks"), written after each call's output.
  # Out of the environment before any user code runs: an algorithm (or a subprocess) that prints
  # its environment must not print it.
  MARK <- Sys.getenv("ALGOHOST_OUTPUT_MARK", "")
  Sys.unsetenv("ALGOHOST_OUTPUT_MARK")
  # Where the adapter's wrapper passes the requests: a named pipe that cat fills from the service's
  # stdin, while R's own stdin is /dev/null (R cannot move fd 0 itself). Absent when run by hand.
  REQUESTS <- commandArgs(trailingOnly = TRUE)[1L]

  # A failure of the harness itself (bad input, no entry point) carrying the type to answer.
  failure <- function(error_type, message) {
    structure(class = c("algohost_failure", "error", "condition"), list(message = message, call = NULL, error_type = error_type))
  }

  # algoname from algorithmia.conf, else the name the service passed in.
  algorithm_name <- function() {
    conf <- tryCatch(jsonlite::read_json("algorithmia.conf", simplifyVector = FALSE), error = function(e) NULL)
    name <- if (is.list(conf)) conf[["algoname"]] else NULL
    if (is.character(name) && length(name) == 1L && !is.na(name) && nzchar(name)) name else NAME_FALLBACK
  }

  # Sources the entry once into the global environment; returns the algorithm's apply, or the
  # condition that made loading fail.
  load_algorithm <- function() {
    tryCatch(
      {
        name <- algorithm_name()
        candidates <- c(file.path("src", paste0(name, ".r")), file.path("src", "Algorithm.r"))
        entry <- candidates[file.exists(candidates)][1L]
        if (is.na(entry)) stop(failure("LoadingError", sprintf("the entry point %s does not exist", paste(unique(candidates), collapse = " or "))))
        source(entry, local = globalenv(), encoding = "UTF-8", keep.source = TRUE)
        f <- get0("apply", envir = globalenv(), mode = "function", inherits = FALSE)
        if (is.null(f)) stop(failure("LoadingError", sprintf("%s does not define a function apply(input)", entry)))
        f
      },
      error = function(e) e
    )
  }

  # The request's data as apply receives it: text -> character(1), binary -> raw vector,
  # json -> the parsed value (objects -> named lists, arrays -> lists, null -> NULL).
  convert_input <- function(request) {
    if (!is.list(request) || is.null(names(request))) stop(failure("InputError", "the request is not a JSON object"))
    data <- request[["data"]]
    type <- request[["content_type"]]
    if (identical(type, "json")) {
      return(data)
    }
    if (identical(type, "text")) {
      if (!is.character(data) || length(data) != 1L) stop(failure("InputError", "text input must be a string"))
      return(enc2utf8(data))
    }
    if (identical(type, "binary")) {
      if (!is.character(data) || length(data) != 1L || nchar(data) %% 4L != 0L || !grepl("^[A-Za-z0-9+/]*={0,2}$", data)) {
        stop(failure("InputError", "binary input must be base64"))
      }
      return(if (nzchar(data)) jsonlite::base64_dec(data) else raw(0))
    }
    stop(failure("InputError", sprintf("unknown content_type %s (json, text or binary)", if (is.character(type)) dQuote(type, FALSE) else "missing")))
  }

  json_string <- function(s) as.character(jsonlite::toJSON(unname(enc2utf8(s)), auto_unbox = TRUE))

  # Result classification: raw -> binary, character(1) -> text, else JSON.
  success_response <- function(x) {
    if (is.raw(x)) {
      # jsonlite breaks base64 into lines of 76 characters: one JSON line needs it whole.
      b64 <- gsub("\n", "", jsonlite::base64_enc(as.vector(x)), fixed = TRUE)
      return(paste0('{"result":"', b64, '","metadata":{"content_type":"binary"}}'))
    }
    if (is.character(x) && length(x) == 1L && !is.na(x)) {
      return(paste0('{"result":', json_string(x), ',"metadata":{"content_type":"text"}}'))
    }
    json <- tryCatch(
      as.character(jsonlite::toJSON(x, auto_unbox = TRUE, null = "null", digits = NA)),
      error = function(e) stop(failure("AlgorithmError", paste("the result cannot be serialized as JSON:", conditionMessage(e))))
    )
    paste0('{"result":', json, ',"metadata":{"content_type":"json"}}')
  }

  # The error's own type: a character error_type field or attribute of the condition.
  own_error_type <- function(e) {
    t <- if (is.list(e)) e[["error_type"]] else NULL
    if (is.null(t)) t <- attr(e, "error_type", exact = TRUE)
    if (is.character(t) && length(t) == 1L && !is.na(t) && nzchar(t)) t else NULL
  }

  error_response <- function(e, error_type, trace) {
    message <- paste(enc2utf8(conditionMessage(e)), collapse = "\n")
    trace <- paste(enc2utf8(trace), collapse = "\n")
    as.character(jsonlite::toJSON(
      list(error = list(message = message, stacktrace = trace, stack_trace = trace, error_type = error_type)),
      auto_unbox = TRUE
    ))
  }

  # "Error in <call>: <message>" and the calls, innermost first, each with its source line.
  format_trace <- function(e, calls) {
    call <- conditionCall(e)
    head <- if (is.null(call)) paste("Error:", conditionMessage(e)) else paste0("Error in ", paste(deparse(call, nlines = 1L), collapse = ""), ": ", conditionMessage(e))
    frames <- vapply(rev(seq_along(calls)), function(i) {
      cl <- calls[[i]]
      where <- ""
      ref <- attr(cl, "srcref", exact = TRUE)
      if (!is.null(ref)) {
        file <- attr(ref, "srcfile", exact = TRUE)
        if (!is.null(file) && !is.null(file$filename)) where <- sprintf(" at %s#%d", file$filename, ref[[1L]])
      }
      paste0(i, ": ", paste(deparse(cl, nlines = 1L), collapse = ""), where)
    }, character(1))
    c(head, frames)
  }

  # Calls apply(input); returns list(value) or list(error, trace) with the algorithm's calls.
  invoke <- function(apply, input) {
    force(input) # converted before the call: a bad input is the harness's error, not apply's
    state <- new.env(parent = emptyenv())
    state$calls <- list()
    depth <- sys.nframe()
    tryCatch(
      list(value = withCallingHandlers(apply(input), error = function(e) {
        calls <- sys.calls()
        n <- length(calls) - 1L # the last frame is this handler
        first <- NA_integer_
        for (k in seq_len(n)) {
          if (k > depth && identical(sys.function(k), apply)) {
            first <- k
            break
          }
        }
        if (is.na(first)) return()
        inner <- calls[first:n]
        keep <- !vapply(inner, function(cl) identical(cl[[1L]], quote(.handleSimpleError)), logical(1))
        state$calls <- inner[keep]
      })),
      error = function(e) list(error = e, trace = format_trace(e, state$calls))
    )
  }

  # What the service passes for this call only, in the environment while the call runs and not
  # after: a key scoped to it (pipeline_enabled algorithms; library(algorithmia) reads it), where an
  # Event Flow's input came from (ALGOHOST_EVENT as JSON: topic, partition, offset, key…, so the
  # algorithm can be idempotent) and the Insights token (versions with insights_enabled).
  with_call_env <- function(request, code) {
    event <- request[["event"]]
    values <- list(
      ALGORITHMIA_API_KEY = request[["api_key"]],
      ALGOHOST_EVENT = if (is.list(event) && length(event) > 0L) as.character(jsonlite::toJSON(event, auto_unbox = TRUE)) else NULL,
      ALGOHOST_INSIGHTS_TOKEN = request[["insights_token"]]
    )
    values <- Filter(function(v) is.character(v) && length(v) == 1L && !is.na(v) && nzchar(v), values)
    if (length(values) == 0L) {
      return(code)
    }
    previous <- Sys.getenv(names(values), unset = NA, names = TRUE)
    do.call(Sys.setenv, values)
    on.exit(for (k in names(previous)) if (is.na(previous[[k]])) Sys.unsetenv(k) else do.call(Sys.setenv, stats::setNames(list(previous[[k]]), k)))
    code
  }

  handle <- function(line, algorithm) {
    response <- tryCatch(
      {
        if (inherits(algorithm, "condition")) {
          # The load error's own type never replaces LoadingError.
          trace <- if (inherits(algorithm, "algohost_failure")) character(0) else paste("Error while loading:", conditionMessage(algorithm))
          error_response(algorithm, "LoadingError", trace)
        } else {
          request <- tryCatch(
            jsonlite::parse_json(line, simplifyVector = FALSE),
            error = function(e) stop(failure("InputError", paste("the request is not JSON:", conditionMessage(e))))
          )
          out <- with_call_env(request, invoke(algorithm, convert_input(request)))
          if (!is.null(out$error)) {
            error_response(out$error, if (is.null(own_error_type(out$error))) "AlgorithmError" else own_error_type(out$error), out$trace)
          } else {
            success_response(out$value)
          }
        }
      },
      error = function(e) error_response(e, if (is.null(own_error_type(e))) "AlgorithmError" else own_error_type(e), character(0))
    )
    flush_output()
    write_marks()
    respond(response)
  }

  # R buffers fd 1 (C stdio) on a pipe or socket: pushed to the service before the mark and the
  # response. stdout() and stderr() are the algorithm's sinks when it set some; connections 1 and 2
  # are always fds 1 and 2.
  flush_output <- function() {
    try(flush(stdout()), silent = TRUE)
    try(flush(stderr()), silent = TRUE)
    try(flush(getConnection(1L)), silent = TRUE)
    try(flush(getConnection(2L)), silent = TRUE)
  }

  # Writes to fd 1 even while the algorithm's sink() diverts stdout(): cat to connection 1 itself.
  write_stdout <- function(text) {
    try(
      {
        cat(text, file = getConnection(1L))
        flush(getConnection(1L))
      },
      silent = TRUE
    )
  }

  # Ends this call's output: the mark once on stdout and once on stderr, after flush_output and
  # before the response; nothing without ALGOHOST_OUTPUT_MARK. R cannot duplicate a descriptor:
  # the marks go through connections 1 and 2, which no sink() of the algorithm redirects (a message
  # sink is lifted for the mark and put back).
  write_marks <- function() {
    if (!nzchar(MARK)) {
      return(invisible())
    }
    write_stdout(MARK)
    diverted <- sink.number(type = "message")
    try(
      {
        if (diverted != 2L) sink(type = "message")
        cat(MARK, file = getConnection(2L))
        flush(getConnection(2L))
      },
      silent = TRUE
    )
    if (diverted != 2L) try(sink(getConnection(diverted), type = "message"), silent = TRUE)
    invisible()
  }

  # The request channel: the wrapper's named pipe (unlinked once open, so nothing else can open it),
  # else stdin.
  open_requests <- function() {
    if (!is.na(REQUESTS) && nzchar(REQUESTS) && file.exists(REQUESTS)) {
      con <- fifo(REQUESTS, open = "r", blocking = TRUE)
      unlink(REQUESTS)
      return(con)
    }
    file("stdin", open = "r")
  }

  # One response: open the FIFO, write one line, close it.
  respond <- function(line) {
    con <- file(FIFO, open = "wb", raw = TRUE)
    on.exit(close(con))
    writeBin(charToRaw(paste0(enc2utf8(line), "\n")), con)
  }

  main <- function() {
    # Warnings print when they happen (the call's output), not after the harness returns.
    options(warn = 1L)
    # Before any user code runs: the load step cannot reach the requests either.
    input <- open_requests()
    algorithm <- load_algorithm()
    flush_output()
    # To fd 1 even if the load step set a sink().
    write_stdout(paste0(SENTINEL, "\n"))
    repeat {
      line <- readLines(input, n = 1L, warn = FALSE, encoding = "UTF-8")
      if (length(line) == 0L) break
      if (!nzchar(trimws(line))) next
      handle(line, algorithm)
    }
    flush_output()
    quit(save = "no", status = 0L)
  }

  main()
}, envir = new.env(parent = baseenv()))
