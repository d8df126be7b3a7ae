# The in-algorithm client for R algorithms on algohost: `library(algorithmia)` (the build installs
# this package into the artifact and the runner puts it first on the library path).
#
#   client <- getAlgorithmiaClient()
#   client$algo("owner/name/version")$pipe(input)$result
#   client$file("data://.my/collection/file.txt")$put("text"); client$file(...)$getString()
#   client$dir("data://.my/collection")$create(); client$dir(...)$files()
#
# Address: the apiAddress argument, else $ALGORITHMIA_API; when $ALGOHOST_API_SOCKET names a Unix
# socket every request goes over it (base R's socketConnection cannot open one, libcurl can).
# Key: the apiKey argument, else $ALGORITHMIA_API_KEY read at each request, because the runner
# sets it only while a call runs (pipeline_enabled algorithms only): a client made when the
# algorithm loads still uses the key of the call in progress. Failures are conditions of class
# `algorithmia_error` carrying the service's message (and the callee's error_type).

KEY_MISSING <- paste(
  "no API key: calling other algorithms and hosted data from an algorithm needs pipeline_enabled",
  "in the algorithm's settings (ALGORITHMIA_API_KEY is not set)"
)
DEFAULT_TIMEOUT <- 300

algorithmia_error <- function(message, error_type = NULL) {
  structure(
    class = c("algorithmia_error", "error", "condition"),
    list(message = message, call = NULL, error_type = error_type)
  )
}

# One list of the items of every page, each keeping its class.
flatten <- function(lists) {
  out <- do.call(c, lists)
  if (is.null(out)) list() else out
}

non_empty <- function(x) is.character(x) && length(x) == 1L && !is.na(x) && nzchar(x)

# "data://owner/collection/file" (or "owner/...", "/owner/...") -> "/v1/data/owner/collection/file",
# each segment percent-encoded.
data_path <- function(uri) {
  path <- sub("^data://", "", uri)
  path <- gsub("^/+|/+$", "", path)
  segments <- strsplit(path, "/", fixed = TRUE)[[1L]]
  paste0("/v1/data/", paste(vapply(segments, curl::curl_escape, character(1), USE.NAMES = FALSE), collapse = "/"))
}

# The service's reason for a failed response: X-Error-Message, else the JSON error's message.
error_message <- function(res) {
  header <- res$headers[["x-error-message"]]
  if (non_empty(header)) {
    return(header)
  }
  text <- rawToChar(res$content)
  Encoding(text) <- "UTF-8"
  parsed <- tryCatch(jsonlite::parse_json(text, simplifyVector = FALSE), error = function(e) NULL)
  error <- if (is.list(parsed) && !is.null(names(parsed))) parsed[["error"]] else NULL
  if (is.list(error) && non_empty(error[["message"]])) {
    return(error[["message"]])
  }
  if (non_empty(error)) {
    return(error)
  }
  sprintf("HTTP %d%s", res$status, if (nzchar(text)) paste0(": ", substr(text, 1L, 500L)) else "")
}

# Raw vector -> octet-stream, one string -> text/plain, anything else -> JSON.
encode_input <- function(input) {
  if (is.raw(input)) {
    return(list(body = input, type = "application/octet-stream"))
  }
  if (is.character(input) && length(input) == 1L && !is.na(input)) {
    return(list(body = charToRaw(enc2utf8(input)), type = "text/plain; charset=utf-8"))
  }
  json <- as.character(jsonlite::toJSON(input, auto_unbox = TRUE, null = "null", digits = NA))
  list(body = charToRaw(enc2utf8(json)), type = "application/json")
}

getAlgorithmiaClient <- function(apiKey = NULL, apiAddress = NULL) {
  # One HTTP request to the service; returns list(status, headers (lower-case names), content (raw)).
  request <- function(method, path, body = NULL, contentType = NULL, accept = NULL, query = NULL,
                      timeout = DEFAULT_TIMEOUT + 60, extraHeaders = list(), auth = TRUE) {
    key <- if (non_empty(apiKey)) apiKey else Sys.getenv("ALGORITHMIA_API_KEY")
    if (auth && !nzchar(key)) stop(algorithmia_error(KEY_MISSING, "AlgorithmError"))
    address <- if (non_empty(apiAddress)) apiAddress else Sys.getenv("ALGORITHMIA_API")
    socket <- Sys.getenv("ALGOHOST_API_SOCKET")
    if (!nzchar(address) && !nzchar(socket)) stop(algorithmia_error("no API address: ALGORITHMIA_API is not set"))
    url <- paste0(if (nzchar(address)) sub("/+$", "", address) else "http://localhost", path)
    if (length(query) > 0L) {
      url <- paste0(url, "?", paste(names(query), vapply(query, function(v) curl::curl_escape(as.character(v)), character(1)), sep = "=", collapse = "&"))
    }
    handle <- curl::new_handle()
    curl::handle_setopt(handle, customrequest = method, timeout = timeout, connecttimeout = 30)
    if (nzchar(socket)) curl::handle_setopt(handle, unix_socket_path = socket)
    if (identical(method, "HEAD")) curl::handle_setopt(handle, nobody = TRUE)
    headers <- c(list(Expect = ""), extraHeaders)
    if (auth) headers$Authorization <- paste("Simple", key)
    if (!is.null(accept)) headers$Accept <- accept
    if (!is.null(body)) {
      curl::handle_setopt(handle, post = TRUE, postfieldsize = length(body), copypostfields = body)
      headers[["Content-Type"]] <- if (is.null(contentType)) "application/octet-stream" else contentType
    }
    do.call(curl::handle_setheaders, c(list(handle), headers))
    res <- tryCatch(curl::curl_fetch_memory(url, handle = handle), error = function(e) {
      stop(algorithmia_error(paste("cannot reach the algohost API:", conditionMessage(e))))
    })
    parsed <- curl::parse_headers_list(res$headers)
    list(status = res$status_code, headers = parsed, content = res$content)
  }

  # HEAD: TRUE for 200, FALSE for 404, an error otherwise.
  exists_at <- function(path) {
    res <- request("HEAD", path)
    if (res$status == 200L) {
      return(TRUE)
    }
    if (res$status == 404L) {
      return(FALSE)
    }
    stop(algorithmia_error(error_message(res)))
  }

  check <- function(res, ok = function(s) s < 300L) {
    if (!ok(res$status)) stop(algorithmia_error(error_message(res)))
    res
  }

  algo <- function(ref) {
    ref <- sub("^/+", "", sub("^algo://", "", ref))
    path <- paste0("/v1/algo/", paste(vapply(strsplit(ref, "/", fixed = TRUE)[[1L]], curl::curl_escape, character(1), USE.NAMES = FALSE), collapse = "/"))
    pipe <- function(input) {
      encoded <- encode_input(input)
      res <- request("POST", path, body = encoded$body, contentType = encoded$type)
      text <- rawToChar(res$content)
      Encoding(text) <- "UTF-8"
      parsed <- tryCatch(jsonlite::parse_json(text, simplifyVector = FALSE), error = function(e) NULL)
      if (!is.list(parsed) || is.null(names(parsed))) stop(algorithmia_error(error_message(res)))
      error <- parsed[["error"]]
      if (is.list(error)) {
        message <- if (non_empty(error[["message"]])) error[["message"]] else error_message(res)
        stop(algorithmia_error(message, if (non_empty(error[["error_type"]])) error[["error_type"]] else NULL))
      }
      if (!is.null(error)) stop(algorithmia_error(as.character(error)))
      if (res$status >= 300L) stop(algorithmia_error(error_message(res)))
      metadata <- if (is.list(parsed[["metadata"]])) parsed[["metadata"]] else list()
      result <- parsed[["result"]]
      if (identical(metadata[["content_type"]], "binary") && is.character(result)) {
        result <- if (nzchar(result)) jsonlite::base64_dec(result) else raw(0)
      }
      structure(list(result = result, metadata = metadata), class = "AlgoResponse")
    }
    structure(list(ref = ref, pipe = pipe), class = "Algorithm")
  }

  file <- function(uri) {
    path <- data_path(uri)
    name <- sub(".*/", "", gsub("/+$", "", uri))
    self <- list(uri = uri, getName = function() name)
    self$exists <- function() exists_at(path)
    self$getRaw <- function() {
      res <- check(request("GET", path, accept = "application/octet-stream"), function(s) s == 200L)
      if (identical(res$headers[["x-data-type"]], "directory")) stop(algorithmia_error(paste(uri, "is a directory, not a file")))
      res$content
    }
    self$getString <- function() {
      text <- rawToChar(self$getRaw())
      Encoding(text) <- "UTF-8"
      text
    }
    # A raw vector is stored as is, one string as UTF-8 text.
    self$put <- function(data) {
      if (is.raw(data)) {
        body <- data
        type <- "application/octet-stream"
      } else if (is.character(data) && length(data) == 1L && !is.na(data)) {
        body <- charToRaw(enc2utf8(data))
        type <- "text/plain; charset=utf-8"
      } else {
        stop(algorithmia_error("put() takes a raw vector or one string"))
      }
      check(request("PUT", path, body = body, contentType = type))
      invisible(self)
    }
    self$delete <- function() {
      check(request("DELETE", path))
      invisible(TRUE)
    }
    structure(self, class = "DataFile")
  }

  dir <- function(uri) {
    trimmed <- gsub("/+$", "", sub("^data://", "", uri))
    path <- data_path(uri)
    self <- list(uri = paste0("data://", trimmed), getName = function() sub(".*/", "", trimmed))
    self$exists <- function() exists_at(path)
    # POST {"name"} on the parent (data://.my creates a collection of the caller).
    self$create <- function() {
      if (!grepl("/", trimmed, fixed = TRUE)) stop(algorithmia_error(paste0("data://", trimmed, " has no parent to create it in")))
      parent <- sub("/[^/]*$", "", trimmed)
      body <- charToRaw(enc2utf8(as.character(jsonlite::toJSON(list(name = sub(".*/", "", trimmed)), auto_unbox = TRUE))))
      check(request("POST", data_path(parent), body = body, contentType = "application/json"), function(s) s == 200L)
      invisible(self)
    }
    self$delete <- function(force = FALSE) {
      check(request("DELETE", path, query = if (isTRUE(force)) list(force = "true") else NULL))
      invisible(TRUE)
    }
    self$file <- function(name) file(paste0("data://", trimmed, "/", name))
    self$dir <- function(name) dir(paste0("data://", trimmed, "/", name))
    # Every page of the listing (folders and files may come on separate pages).
    pages <- function() {
      out <- list()
      marker <- NULL
      repeat {
        res <- check(request("GET", path, query = if (is.null(marker)) NULL else list(marker = marker)), function(s) s == 200L)
        text <- rawToChar(res$content)
        Encoding(text) <- "UTF-8"
        page <- jsonlite::parse_json(text, simplifyVector = FALSE)
        out[[length(out) + 1L]] <- page
        marker <- page[["marker"]]
        if (!non_empty(marker)) break
      }
      out
    }
    # DataFile objects, each with its size and last_modified.
    self$files <- function() {
      flatten(lapply(pages(), function(page) {
        lapply(page[["files"]], function(entry) {
          f <- self$file(entry[["filename"]])
          f$size <- entry[["size"]]
          f$last_modified <- entry[["last_modified"]]
          f
        })
      }))
    }
    self$dirs <- function() {
      flatten(lapply(pages(), function(page) lapply(page[["folders"]], function(entry) self$dir(entry[["name"]]))))
    }
    structure(self, class = "DataDirectory")
  }

  # Insights: reports metrics (a named list) from a call of a version with insights_enabled, as
  # POST /v1/insights without an Authorization header. Elsewhere (no $ALGOHOST_INSIGHTS_TOKEN, set
  # by the runner only while such a call runs) it does nothing and returns NULL invisibly, so the
  # same code runs whether or not the version has Insights on.
  reportInsights <- function(insights) {
    token <- Sys.getenv("ALGOHOST_INSIGHTS_TOKEN")
    if (!nzchar(token)) {
      return(invisible(NULL))
    }
    report <- lapply(names(insights), function(k) list(insight_key = k, insight_value = insights[[k]]))
    json <- as.character(jsonlite::toJSON(report, auto_unbox = TRUE, null = "null", digits = NA))
    res <- check(request("POST", "/v1/insights",
      body = charToRaw(enc2utf8(json)), contentType = "application/json",
      extraHeaders = list(`X-Algohost-Insights-Token` = token), auth = FALSE
    ))
    jsonlite::parse_json(rawToChar(res$content), simplifyVector = FALSE)
  }

  structure(list(algo = algo, file = file, dir = dir, request = request, reportInsights = reportInsights), class = "AlgorithmiaClient")
}
