# {{ALGO_NAME}}: entry point of the algorithm {{ALGO_OWNER}}/{{ALGO_NAME}}.
#
# The runner sources this file once at start-up (top-level code here is the place
# to load models or files), then calls apply(input) for every request.
# Input arrives as a character string (text), a raw vector (binary) or the parsed
# JSON value (jsonlite::fromJSON with simplifyVector = FALSE: objects are named
# lists, arrays are lists). Return a single string (text), a raw vector (binary)
# or anything jsonlite can serialize (JSON). Call stop() to report an error.

apply <- function(input) {
  if (is.character(input) && length(input) == 1) {
    return(paste("hello", input))
  }
  if (is.list(input) && is.character(input$name) && length(input$name) == 1) {
    return(list(greeting = paste("hello", input$name)))
  }
  stop('Expected a string or a JSON object like {"name": "world"}')
}
