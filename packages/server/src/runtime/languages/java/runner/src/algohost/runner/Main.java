package algohost.runner;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * The runner harness for Java and Scala algorithms (docs/compatibility.md §4, catalog/templates/README.md).
 *
 * Started in the algorithm's directory with target/algorithm.jar and target/lib/* on the class
 * path: finds class algorithmia.Name.Name (Name from algorithmia.conf's algoname, else the first
 * argument), makes one instance, calls its load() once if it has one, prints PIPE_INIT_COMPLETE,
 * then answers one JSON request per stdin line with one JSON line on the response FIFO. What the
 * algorithm prints is left on stdout/stderr; the harness writes only the sentinel there, and with
 * ALGOHOST_OUTPUT_MARK set, that token on both after each request, before its response
 * (catalog/templates/README.md, "Output marks").
 */
public final class Main {
  private static final String SENTINEL = "PIPE_INIT_COMPLETE";
  /** Read by com.algorithmia.AlgorithmiaClient (runner/client/), which names it the same. */
  private static final String CALL_KEY_PROPERTY = "algorithmia.api.key";
  /** Read by com.algorithmia.Algorithmia.event(): where an Event Flow's input came from, as JSON. */
  private static final String EVENT_PROPERTY = "algohost.event";
  /** Read by com.algorithmia.AlgorithmiaClient.reportInsights. */
  private static final String INSIGHTS_PROPERTY = "algohost.insights.token";
  /** Set by harness.sh: the output mark (catalog/templates/README.md, "Output marks"). */
  private static final String MARK_PROPERTY = "algohost.runner.mark";

  private Object instance;
  private Method apply;
  private Type parameterType;
  /** Set when loading failed: every request is answered with it. */
  private String loadingError;

  public static void main(String[] args) throws IOException {
    PrintStream out = System.out;
    PrintStream err = System.err;
    Channels channels = Channels.open();
    // Requests are the harness's: the algorithm reading stdin would take them.
    BufferedReader requests = new BufferedReader(new InputStreamReader(channels.requests, StandardCharsets.UTF_8), 1 << 16);
    System.setIn(new ByteArrayInputStream(new byte[0]));
    String fifo = System.getenv().getOrDefault("ALGOHOST_RESPONSE_FIFO", "/tmp/algoout");
    // The token of ALGOHOST_OUTPUT_MARK, which harness.sh passes as a property instead (out of
    // the environment the algorithm and its subprocesses see); cleared before user code runs.
    String markToken = System.getProperty(MARK_PROPERTY, System.getenv("ALGOHOST_OUTPUT_MARK"));
    System.clearProperty(MARK_PROPERTY);
    byte[] mark = markToken == null || markToken.isEmpty() ? null : markToken.getBytes(StandardCharsets.US_ASCII);

    Main harness = new Main();
    harness.load(args.length > 0 ? args[0] : null);
    // What load() printed comes first; the sentinel goes out even if load() closed System.out.
    flush(out, err);
    channels.writeOut((SENTINEL + "\n").getBytes(StandardCharsets.US_ASCII));

    String line;
    while ((line = requests.readLine()) != null) {
      if (line.isBlank()) continue;
      String response = harness.handle(line);
      // What apply printed belongs to this call: it must leave before the response does, and
      // with output marks, before the marks that end this call's share of stdout and stderr.
      flush(out, err);
      if (mark != null) {
        channels.writeOut(mark);
        channels.writeErr(mark);
      }
      try (OutputStream o = new FileOutputStream(fifo)) {
        o.write((response + "\n").getBytes(StandardCharsets.UTF_8));
      }
    }
    flush(out, err);
    System.exit(0);
  }

  /** Flushes the JVM's own System.out/System.err (given) and whatever the algorithm made them since. */
  private static void flush(PrintStream out, PrintStream err) {
    for (PrintStream stream : new PrintStream[] {System.out, out, System.err, err}) {
      try {
        if (stream != null) stream.flush();
      } catch (RuntimeException e) {
        // a stream of the algorithm's that fails to flush: what it held is lost, the call is not
      }
    }
  }

  /**
   * The harness's own channels: the requests and private copies of stdout and stderr.
   *
   * harness.sh duplicates fds 0, 1 and 2 before the JVM starts (it then points fd 0 at
   * /dev/null) and names the copies in the system property algohost.runner.fds; the JVM is
   * started with java.io opened to the class path so that they can be wrapped here (a
   * FileDescriptor has no public way to name an inherited fd). Writing the sentinel and the
   * output marks through the copies keeps them reaching the service when the algorithm closes
   * System.out or System.err (the JDK then points fd 1 or 2 at /dev/null) or replaces them
   * (System.setOut); reading requests from a copy keeps the algorithm, and the processes it
   * starts, from taking them through fd 0 (the JDK closes fds above 2 in child processes).
   * Without the property (Main started by hand), fds 0, 1 and 2 themselves.
   */
  static final class Channels {
    static final String FDS_PROPERTY = "algohost.runner.fds";
    final InputStream requests;
    private final OutputStream out;
    private final OutputStream err;

    private Channels(InputStream requests, OutputStream out, OutputStream err) {
      this.requests = requests;
      this.out = out;
      this.err = err;
    }

    static Channels open() {
      String fds = System.getProperty(FDS_PROPERTY);
      System.clearProperty(FDS_PROPERTY);
      if (fds != null) {
        String[] parts = fds.split(",");
        try {
          if (parts.length != 3) throw new IllegalArgumentException("three fds expected");
          return new Channels(
              new FileInputStream(descriptor(parts[0])), new FileOutputStream(descriptor(parts[1])), new FileOutputStream(descriptor(parts[2])));
        } catch (ReflectiveOperationException | RuntimeException e) {
          System.err.println("algohost runner: cannot use the fds " + fds + " given in " + FDS_PROPERTY + " (" + e + "): using fds 0, 1 and 2");
        }
      }
      return new Channels(System.in, new FileOutputStream(FileDescriptor.out), new FileOutputStream(FileDescriptor.err));
    }

    private static FileDescriptor descriptor(String number) throws ReflectiveOperationException {
      int fd = Integer.parseInt(number.trim());
      if (fd < 0) throw new IllegalArgumentException("negative fd " + fd);
      FileDescriptor d = new FileDescriptor();
      Field field = FileDescriptor.class.getDeclaredField("fd");
      field.setAccessible(true);
      field.setInt(d, fd);
      return d;
    }

    /** Unbuffered: the bytes are on the service's channel when this returns. Errors (the service went away) are ignored. */
    void writeOut(byte[] bytes) {
      write(out, bytes);
    }

    void writeErr(byte[] bytes) {
      write(err, bytes);
    }

    private static void write(OutputStream stream, byte[] bytes) {
      try {
        stream.write(bytes);
      } catch (IOException e) {
        // the service's end is closed: it no longer reads this runner
      }
    }
  }

  // ---------------------------------------------------------------- loading

  private void load(String fallbackName) {
    try {
      String name = algorithmName(fallbackName);
      String className = "algorithmia." + name + "." + name;
      Class<?> cls;
      try {
        cls = Class.forName(className, false, ClassLoader.getSystemClassLoader());
      } catch (ClassNotFoundException e) {
        loadingError = error("LoadingError", "class " + className + " not found: the algorithm's jar must hold class " + name + " in package algorithmia." + name, "");
        return;
      }
      Method applyMethod = findApply(cls);
      if (applyMethod == null) return;
      Constructor<?> constructor;
      try {
        constructor = cls.getDeclaredConstructor();
      } catch (NoSuchMethodException e) {
        loadingError = error("LoadingError", "class " + className + " needs a public constructor without arguments", "");
        return;
      }
      constructor.setAccessible(true);
      Object made = constructor.newInstance();
      Method load = findLoad(cls);
      if (load != null) {
        load.setAccessible(true);
        load.invoke(Modifier.isStatic(load.getModifiers()) ? null : made);
      }
      applyMethod.setAccessible(true);
      instance = made;
      apply = applyMethod;
      parameterType = applyMethod.getGenericParameterTypes()[0];
    } catch (InvocationTargetException e) {
      loadingError = failure(e.getCause(), "LoadingError");
    } catch (ExceptionInInitializerError e) {
      loadingError = failure(e.getCause() != null ? e.getCause() : e, "LoadingError");
    } catch (Throwable t) {
      loadingError = failure(t, "LoadingError");
    }
  }

  /** algorithmia.conf's algoname; the name the service passed when the file or field is missing. */
  private static String algorithmName(String fallback) {
    try {
      Path conf = Paths.get("algorithmia.conf");
      if (Files.isRegularFile(conf)) {
        Object parsed = Json.parse(new String(Files.readAllBytes(conf), StandardCharsets.UTF_8).trim());
        if (parsed instanceof Map) {
          Object name = ((Map<?, ?>) parsed).get("algoname");
          if (name instanceof String && !((String) name).isEmpty()) return (String) name;
        }
      }
    } catch (IOException | Json.SyntaxError e) {
      // fall back to the name given
    }
    if (fallback == null || fallback.isEmpty()) throw new IllegalStateException("no algoname in algorithmia.conf and no algorithm name given");
    return fallback;
  }

  /** The one public one-argument apply, inherited ones included, bridges excluded. */
  private Method findApply(Class<?> cls) {
    List<Method> instanceMethods = new ArrayList<>();
    List<Method> staticMethods = new ArrayList<>();
    for (Method found : cls.getMethods()) {
      if (!found.getName().equals("apply") || found.getParameterCount() != 1) continue;
      Method m = unbridged(found);
      if (m == null || Modifier.isAbstract(m.getModifiers())) continue;
      List<Method> list = Modifier.isStatic(m.getModifiers()) ? staticMethods : instanceMethods;
      if (!list.contains(m)) list.add(m);
    }
    List<Method> candidates = instanceMethods.isEmpty() ? staticMethods : instanceMethods;
    if (candidates.size() == 1) return candidates.get(0);
    String message;
    if (candidates.isEmpty()) {
      message = "class " + cls.getName() + " has no public method apply with one parameter";
    } else {
      StringBuilder list = new StringBuilder();
      for (Method m : candidates) list.append(list.length() > 0 ? ", " : "").append("apply(").append(m.getGenericParameterTypes()[0].getTypeName()).append(')');
      message = "class " + cls.getName() + " has " + candidates.size() + " public one-argument apply methods (" + list + "): keep exactly one";
    }
    loadingError = error("LoadingError", message, "");
    return null;
  }

  private static Method findLoad(Class<?> cls) {
    Method found = null;
    for (Method candidate : cls.getMethods()) {
      if (!candidate.getName().equals("load") || candidate.getParameterCount() != 0) continue;
      Method m = unbridged(candidate);
      if (m == null || Modifier.isAbstract(m.getModifiers())) continue;
      if (found == null || Modifier.isStatic(found.getModifiers())) found = m;
    }
    return found;
  }

  /**
   * The method itself; for a bridge, the method it stands for. javac makes two kinds: generic
   * bridges (apply(Object) calling apply(String) of the same class: skipped, the real one is
   * listed too) and visibility bridges (a public class re-exposing a public method of its
   * non-public superclass, same signature: the superclass's method).
   */
  private static Method unbridged(Method m) {
    if (!m.isBridge() && !m.isSynthetic()) return m;
    for (Method other : m.getDeclaringClass().getDeclaredMethods()) {
      if (other.getName().equals(m.getName()) && other.getParameterCount() == m.getParameterCount() && !other.isBridge() && !other.isSynthetic()) {
        return null; // a generic bridge to `other`
      }
    }
    for (Class<?> c = m.getDeclaringClass().getSuperclass(); c != null; c = c.getSuperclass()) {
      try {
        Method target = c.getDeclaredMethod(m.getName(), m.getParameterTypes());
        if (!target.isBridge() && !target.isSynthetic()) return target;
      } catch (NoSuchMethodException e) {
        // further up
      }
    }
    return null;
  }

  // ---------------------------------------------------------------- requests

  String handle(String line) {
    Object request;
    try {
      request = Json.parse(line);
    } catch (Json.SyntaxError | StackOverflowError e) {
      return error("InputError", "the request is not valid JSON: " + e.getMessage(), "");
    }
    if (!(request instanceof Map)) return error("InputError", "the request is not a JSON object", "");
    if (loadingError != null) return loadingError;
    Map<?, ?> req = (Map<?, ?>) request;

    Object input;
    try {
      input = Inputs.convert(req.get("content_type"), req.get("data"), parameterType);
    } catch (Inputs.InputError e) {
      return error("InputError", e.getMessage(), "");
    } catch (Throwable t) {
      return failure(t, "InputError");
    }

    // What the service passes for this call only. A JVM cannot change its environment, so the
    // in-algorithm client (com.algorithmia) reads these system properties, set only while the
    // call runs: a key scoped to it (pipeline_enabled algorithms), where an Event Flow's input
    // came from (JSON: topic, partition, offset, key…, so the algorithm can be idempotent) and the
    // Insights token (versions with insights_enabled).
    Map<String, String> callProperties = new java.util.LinkedHashMap<>();
    Object key = req.get("api_key");
    if (key instanceof String && !((String) key).isEmpty()) callProperties.put(CALL_KEY_PROPERTY, (String) key);
    Object event = req.get("event");
    if (event instanceof Map && !((Map<?, ?>) event).isEmpty()) {
      try {
        callProperties.put(EVENT_PROPERTY, Json.write(event));
      } catch (Json.NotSerializable e) {
        return error("InputError", "the request's event cannot be passed on: " + e.getMessage(), "");
      }
    }
    Object insights = req.get("insights_token");
    if (insights instanceof String && !((String) insights).isEmpty()) callProperties.put(INSIGHTS_PROPERTY, (String) insights);
    Map<String, String> previous = new java.util.HashMap<>();
    for (Map.Entry<String, String> p : callProperties.entrySet()) {
      previous.put(p.getKey(), System.getProperty(p.getKey()));
      System.setProperty(p.getKey(), p.getValue());
    }
    Object result;
    try {
      result = apply.invoke(Modifier.isStatic(apply.getModifiers()) ? null : instance, input);
    } catch (InvocationTargetException e) {
      return failure(e.getCause(), null);
    } catch (Throwable t) {
      return failure(t, null);
    } finally {
      for (Map.Entry<String, String> p : previous.entrySet()) {
        if (p.getValue() == null) System.clearProperty(p.getKey());
        else System.setProperty(p.getKey(), p.getValue());
      }
    }

    try {
      return success(result);
    } catch (Json.NotSerializable e) {
      return error("AlgorithmError", "the result of apply cannot be sent as JSON: " + e.getMessage(), "");
    } catch (Throwable t) {
      return error("AlgorithmError", "the result of apply cannot be sent as JSON: " + t, trace(t));
    }
  }

  private static String success(Object result) throws Json.NotSerializable {
    String contentType;
    String value;
    if (result instanceof String) {
      contentType = "text";
      StringBuilder sb = new StringBuilder();
      Json.writeString(sb, (String) result);
      value = sb.toString();
    } else if (result instanceof byte[]) {
      contentType = "binary";
      value = "\"" + Base64.getEncoder().encodeToString((byte[]) result) + "\"";
    } else {
      contentType = "json";
      value = Json.write(result);
    }
    return "{\"result\":" + value + ",\"metadata\":{\"content_type\":\"" + contentType + "\"}}";
  }

  /** An error response for a throwable: its own error type if it carries one, else the given or AlgorithmError. */
  private static String failure(Throwable t, String type) {
    if (t == null) return error(type == null ? "AlgorithmError" : type, "unknown error", "");
    String errorType = type;
    if (errorType == null) errorType = ownErrorType(t);
    if (errorType == null) errorType = t instanceof OutOfMemoryError ? "OutOfMemoryError" : "AlgorithmError";
    String message = t.getMessage() != null ? t.getMessage() : t.toString();
    return error(errorType, message, trace(t));
  }

  /** A string error_type/errorType field, or errorType()/getErrorType() method, of the exception. */
  private static String ownErrorType(Throwable t) {
    for (String name : new String[] {"errorType", "getErrorType", "error_type"}) {
      try {
        Method m = t.getClass().getMethod(name);
        if (m.getReturnType() == String.class) {
          m.setAccessible(true);
          Object v = m.invoke(t);
          if (v instanceof String && !((String) v).isEmpty()) return (String) v;
        }
      } catch (ReflectiveOperationException | RuntimeException e) {
        // not there
      }
    }
    for (Class<?> c = t.getClass(); c != null && c != Throwable.class; c = c.getSuperclass()) {
      for (String name : new String[] {"error_type", "errorType"}) {
        try {
          Field f = c.getDeclaredField(name);
          if (f.getType() != String.class || Modifier.isStatic(f.getModifiers())) continue;
          f.setAccessible(true);
          Object v = f.get(t);
          if (v instanceof String && !((String) v).isEmpty()) return (String) v;
        } catch (ReflectiveOperationException | RuntimeException e) {
          // not there
        }
      }
    }
    return null;
  }

  /** The stack trace without the harness's own frames and the reflection that called apply. */
  private static String trace(Throwable t) {
    StringWriter w = new StringWriter();
    t.printStackTrace(new PrintWriter(w));
    StringBuilder kept = new StringBuilder();
    for (String line : w.toString().split("\n", -1)) {
      String s = line.trim();
      if (s.startsWith("at ")
          && (s.contains("algohost.runner.") || s.contains("jdk.internal.reflect.") || s.contains("java.lang.reflect.Method.invoke"))) {
        continue;
      }
      if (kept.length() > 0) kept.append('\n');
      kept.append(line);
    }
    return kept.toString().trim();
  }

  private static String error(String type, String message, String stacktrace) {
    StringBuilder sb = new StringBuilder("{\"error\":{\"message\":");
    Json.writeString(sb, message);
    sb.append(",\"stacktrace\":");
    Json.writeString(sb, stacktrace);
    sb.append(",\"stack_trace\":");
    Json.writeString(sb, stacktrace);
    sb.append(",\"error_type\":");
    Json.writeString(sb, type);
    return sb.append("}}").toString();
  }
}
