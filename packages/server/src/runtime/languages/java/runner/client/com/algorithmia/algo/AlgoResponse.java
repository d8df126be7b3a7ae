package com.algorithmia.algo;

import com.algorithmia.AlgorithmException;
import com.algorithmia.internal.Json;
import java.nio.charset.StandardCharsets;

/**
 * The answer of a call: the result (text as String, binary as byte[], JSON as Map, List,
 * String, Long, Double, Boolean or null) or the algorithm's failure, which every accessor throws.
 */
public final class AlgoResponse {
  private final Object result;
  private final AlgorithmException failure;
  private final Metadata metadata;

  private AlgoResponse(Object result, AlgorithmException failure, Metadata metadata) {
    this.result = result;
    this.failure = failure;
    this.metadata = metadata;
  }

  static AlgoResponse success(Object result, Metadata metadata) {
    return new AlgoResponse(result, null, metadata);
  }

  static AlgoResponse failure(AlgorithmException failure, Metadata metadata) {
    return new AlgoResponse(null, failure, metadata);
  }

  public boolean isSuccess() {
    return failure == null;
  }

  public boolean isFailure() {
    return failure != null;
  }

  public Metadata getMetadata() {
    return metadata;
  }

  /** The algorithm's failure, or null. */
  public AlgorithmException getError() {
    return failure;
  }

  /** The result as it came: String, byte[], Map, List, Long, Double, Boolean or null. */
  public Object get() throws AlgorithmException {
    if (failure != null) throw failure;
    return result;
  }

  /** A text result, or a JSON result that is a string. */
  public String asString() throws AlgorithmException {
    Object v = get();
    if (v instanceof String) return (String) v;
    if (v instanceof byte[]) return new String((byte[]) v, StandardCharsets.UTF_8);
    throw new AlgorithmException("the result is " + metadata.getContentType() + ", not a string: use asJsonString() or get()");
  }

  /** A binary result (a text result as its UTF-8 bytes). */
  public byte[] asBytes() throws AlgorithmException {
    Object v = get();
    if (v instanceof byte[]) return (byte[]) v;
    if (v instanceof String && "text".equals(metadata.getContentType())) return ((String) v).getBytes(StandardCharsets.UTF_8);
    throw new AlgorithmException("the result is " + metadata.getContentType() + ", not binary");
  }

  /** The result as JSON text. */
  public String asJsonString() throws AlgorithmException {
    Object v = get();
    if (v instanceof byte[]) throw new AlgorithmException("the result is binary, not JSON: use asBytes()");
    return Json.write(v);
  }

  @Override
  public String toString() {
    return failure != null ? "AlgoResponse(failure: " + failure.getMessage() + ")" : "AlgoResponse(" + metadata.getContentType() + ")";
  }
}
