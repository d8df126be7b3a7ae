package algorithmia.{{ALGO_NAME}}

/** Entry point of the algorithm {{ALGO_OWNER}}/{{ALGO_NAME}}.
  *
  * The runner creates one instance with the no-argument constructor, calls `load()`
  * once (if present), then calls the one-argument `apply` method for every request.
  * The parameter type decides how input is converted: `String` takes text (or a JSON
  * string), `Array[Byte]` takes binary, other types take JSON. Return a `String`
  * (text), `Array[Byte]` (binary) or another value (JSON). Throw to report an error.
  */
class {{ALGO_NAME}} {

  /** Runs once before the first call: load models or files here. */
  def load(): Unit = ()

  def apply(input: String): String = "hello " + input
}
