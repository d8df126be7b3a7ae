# {{ALGO_NAME}}: entry point of the algorithm {{ALGO_OWNER}}/{{ALGO_NAME}}.
#
# The runner loads this file once at start-up (top-level code here is the place
# to load models or files), then calls apply(input) for every request.
# Input arrives as a String (text), a binary String (Encoding::ASCII_8BIT) or the
# parsed JSON value (Hash, Array, String, Integer, Float, true, false, nil).
# Return a String (text), a binary String (binary) or any JSON-serializable value.
# Raise an exception to report an error.

def apply(input)
  return "hello #{input}" if input.is_a?(String)
  return { "greeting" => "hello #{input['name']}" } if input.is_a?(Hash) && input["name"].is_a?(String)

  raise ArgumentError, 'Expected a string or a JSON object like {"name": "world"}'
end
