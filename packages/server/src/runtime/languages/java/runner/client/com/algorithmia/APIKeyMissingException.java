package com.algorithmia;

/** The algorithm has no API key: the service gives one only to algorithms with pipeline_enabled. */
public class APIKeyMissingException extends APIException {
  private static final long serialVersionUID = 1L;

  public APIKeyMissingException() {
    super(
        "no API key: calling other algorithms and hosted data from an algorithm needs pipeline_enabled in the algorithm's settings"
            + " (ALGORITHMIA_API_KEY is not set)");
  }
}
