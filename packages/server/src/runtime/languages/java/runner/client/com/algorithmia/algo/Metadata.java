package com.algorithmia.algo;

import java.util.Map;

/** The metadata of a call: content type of the result, duration, stdout when asked. */
public final class Metadata {
  private final Map<?, ?> all;

  Metadata(Map<?, ?> all) {
    this.all = all;
  }

  /** text, json, binary or void. */
  public String getContentType() {
    Object v = all.get("content_type");
    return v instanceof String ? (String) v : null;
  }

  /** Seconds the call took. */
  public Double getDuration() {
    Object v = all.get("duration");
    return v instanceof Number ? ((Number) v).doubleValue() : null;
  }

  public String getStdout() {
    Object v = all.get("stdout");
    return v instanceof String ? (String) v : null;
  }

  /** Every field the service sent. */
  public Map<?, ?> asMap() {
    return all;
  }

  @Override
  public String toString() {
    return "Metadata" + all;
  }
}
