package com.algorithmia;

/**
 * An algorithm failed: the message (and error type) of the algorithm called. Left uncaught in
 * apply, it fails this call with the same error type.
 */
public class AlgorithmException extends APIException {
  private static final long serialVersionUID = 1L;
  private final String errorType;
  private final String stacktrace;

  public AlgorithmException(String message) {
    this(message, null, null);
  }

  public AlgorithmException(String message, String errorType, String stacktrace) {
    super(message);
    this.errorType = errorType;
    this.stacktrace = stacktrace;
  }

  /** The callee's error type (AlgorithmError, InputError…), or null when unknown. */
  public String getErrorType() {
    return errorType;
  }

  /** The callee's stack trace, when the caller may see it. */
  public String getStacktrace() {
    return stacktrace;
  }
}
