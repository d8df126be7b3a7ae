package com.algorithmia.algo;

import com.algorithmia.APIException;
import com.algorithmia.AlgorithmException;
import com.algorithmia.AlgorithmiaClient;
import com.algorithmia.internal.Http;
import com.algorithmia.internal.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/** One algorithm, {@code owner/name[/version]}: {@link #pipe} calls it (POST /v1/algo/...). */
public final class Algorithm {
  private final AlgorithmiaClient client;
  private final String path;

  public Algorithm(AlgorithmiaClient client, String ref) {
    this.client = client;
    String r = ref.startsWith("algo://") ? ref.substring("algo://".length()) : ref;
    r = r.replaceAll("^/+", "").replaceAll("/+$", "");
    StringBuilder p = new StringBuilder("/v1/algo");
    for (String segment : r.split("/")) p.append('/').append(AlgorithmiaClient.encode(segment));
    this.path = p.toString();
  }

  /**
   * Calls the algorithm: a String goes as text, a byte[] as binary, anything else as JSON (Map,
   * List, arrays, numbers, booleans, null). A failure of the algorithm comes back as a response
   * whose {@code as…} methods throw {@link AlgorithmException} with its message; failures of
   * the service (no key, not found, limits) throw {@link APIException} here.
   */
  public AlgoResponse pipe(Object input) throws APIException {
    if (input instanceof String) return call("text/plain; charset=utf-8", ((String) input).getBytes(StandardCharsets.UTF_8));
    if (input instanceof byte[]) return call("application/octet-stream", (byte[]) input);
    String json;
    try {
      json = Json.write(input);
    } catch (IllegalArgumentException e) {
      throw new APIException(e.getMessage(), e);
    }
    return pipeJson(json);
  }

  /** Calls the algorithm with JSON text as it is. */
  public AlgoResponse pipeJson(String json) throws APIException {
    return call("application/json", json.getBytes(StandardCharsets.UTF_8));
  }

  private AlgoResponse call(String contentType, byte[] body) throws APIException {
    Http.Response res = client.request("POST", path, null, contentType, null, body);
    Object parsed;
    try {
      parsed = Json.parse(res.text());
    } catch (IOException e) {
      throw new APIException(res.errorMessage());
    }
    if (!(parsed instanceof Map)) throw new APIException("unexpected response from the service: " + res.errorMessage());
    Map<?, ?> envelope = (Map<?, ?>) parsed;
    Object error = envelope.get("error");
    Map<?, ?> metadata = envelope.get("metadata") instanceof Map ? (Map<?, ?>) envelope.get("metadata") : Map.of();
    if (error instanceof Map) {
      Map<?, ?> e = (Map<?, ?>) error;
      // HTTP 200 with an error is the algorithm's own failure; other statuses are the service's.
      if (res.status >= 300) throw new APIException(res.errorMessage());
      Object message = e.get("message");
      Object type = e.get("error_type");
      Object trace = e.get("stacktrace") != null ? e.get("stacktrace") : e.get("stack_trace");
      return AlgoResponse.failure(
          new AlgorithmException(
              message != null ? String.valueOf(message) : res.errorMessage(), type instanceof String ? (String) type : null, trace instanceof String ? (String) trace : null),
          new Metadata(metadata));
    }
    if (error != null || res.status >= 300) throw new APIException(res.errorMessage());
    Metadata meta = new Metadata(metadata);
    Object result = envelope.get("result");
    if ("binary".equals(meta.getContentType()) && result instanceof String) {
      return AlgoResponse.success(Base64.getDecoder().decode((String) result), meta);
    }
    return AlgoResponse.success(result, meta);
  }
}
