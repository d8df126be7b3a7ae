package com.algorithmia;

/** A failure reported by the algohost API (or reaching it), with the service's message. */
public class APIException extends Exception {
  private static final long serialVersionUID = 1L;

  public APIException(String message) {
    super(message);
  }

  public APIException(String message, Throwable cause) {
    super(message, cause);
  }
}
