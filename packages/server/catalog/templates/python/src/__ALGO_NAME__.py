"""{{ALGO_NAME}}: entry point of the algorithm {{ALGO_OWNER}}/{{ALGO_NAME}}.

The runner imports this module, calls load() once at start-up (if defined), then
calls apply(input) for every request. Input arrives as str (text), bytes (binary)
or the parsed JSON value (dict, list, str, int, float, bool or None).
Return str for text, bytes for binary, anything JSON-serializable for JSON.
Raise an exception to report an error to the caller.
"""


def load():
    # Runs once, before the first call: load models or files here.
    # If it returns something other than None, the runner passes that value as
    # the second argument to apply(input, state) when apply takes two arguments.
    return None


def apply(input):
    if isinstance(input, str):
        return "hello " + input
    if isinstance(input, dict) and isinstance(input.get("name"), str):
        return {"greeting": "hello " + input["name"]}
    raise TypeError('Expected a string or a JSON object like {"name": "world"}')
