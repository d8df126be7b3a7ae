package algorithmia.{{ALGO_NAME}};

/**
 * Entry point of the algorithm {{ALGO_OWNER}}/{{ALGO_NAME}}.
 *
 * <p>The runner creates one instance with the public no-argument constructor, calls
 * {@code load()} once (if present), then calls the one-argument {@code apply} method for
 * every request. The parameter type decides how input is converted: {@code String} takes
 * text (or a JSON string), {@code byte[]} takes binary, other types take JSON.
 * Return a {@code String} (text), {@code byte[]} (binary) or another object (JSON).
 * Throw an exception to report an error.
 */
public class {{ALGO_NAME}} {

    public {{ALGO_NAME}}() {
    }

    /** Runs once before the first call: load models or files here. */
    public void load() {
    }

    public String apply(String input) {
        return "hello " + input;
    }
}
