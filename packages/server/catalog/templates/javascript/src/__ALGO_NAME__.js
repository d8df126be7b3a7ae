// {{ALGO_NAME}}: entry point of the algorithm {{ALGO_OWNER}}/{{ALGO_NAME}}.
//
// The runner requires this file once at start-up (top-level code here is the
// place to load models or files), then calls apply(input, cb) for every request.
// Input arrives as a string (text), a Buffer (binary) or the parsed JSON value.
// Call cb(null, result) with a string (text), a Buffer (binary) or any
// JSON-serializable value; call cb(err) to report an error.

exports.apply = function (input, cb) {
  if (typeof input === "string") {
    return cb(null, "hello " + input);
  }
  if (input && typeof input === "object" && typeof input.name === "string") {
    return cb(null, { greeting: "hello " + input.name });
  }
  cb(new Error('Expected a string or a JSON object like {"name": "world"}'));
};
