package com.algorithmia;

/**
 * The in-algorithm client for Java and Scala algorithms on algohost, on the class path of every
 * build and runner (no dependency to declare):
 *
 * <pre>
 * AlgorithmiaClient client = Algorithmia.client();
 * String greeting = client.algo("owner/name/version").pipe("world").asString();
 * client.file("data://.my/collection/file.txt").put("text");
 * </pre>
 *
 * <p>Address: the apiAddress argument, else {@code $ALGORITHMIA_API}; when
 * {@code $ALGOHOST_API_SOCKET} names a Unix socket every request goes over it. Key: the apiKey
 * argument, else the key of the call in progress, read at each request (the runner sets it only
 * while a call runs, for algorithms with pipeline_enabled), so a client made in load() works.
 */
public final class Algorithmia {
  private Algorithmia() {}

  /** A client with the address and the call's key from the environment. */
  public static AlgorithmiaClient client() {
    return new AlgorithmiaClient(null, null);
  }

  public static AlgorithmiaClient client(String apiKey) {
    return new AlgorithmiaClient(apiKey, null);
  }

  public static AlgorithmiaClient client(String apiKey, String apiAddress) {
    return new AlgorithmiaClient(apiKey, apiAddress);
  }

  /**
   * Where the input of the call in progress came from when an Event Flow made it: {@code source}
   * (kafka, sqs or servicebus), {@code topic}, {@code partition}, {@code offset}, {@code key}
   * (Kafka) or {@code queue}, {@code message_id} (queues), so the algorithm can be idempotent;
   * null for any other call. The runner sets it only while the call runs (the other languages
   * read {@code $ALGOHOST_EVENT}).
   */
  public static java.util.Map<String, String> event() {
    String json = System.getProperty("algohost.event");
    if (json == null || json.isEmpty()) return null;
    try {
      Object parsed = com.algorithmia.internal.Json.parse(json);
      if (!(parsed instanceof java.util.Map)) return null;
      java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
      for (java.util.Map.Entry<?, ?> e : ((java.util.Map<?, ?>) parsed).entrySet()) {
        out.put(String.valueOf(e.getKey()), e.getValue() == null ? null : String.valueOf(e.getValue()));
      }
      return out;
    } catch (java.io.IOException e) {
      return null;
    }
  }
}
