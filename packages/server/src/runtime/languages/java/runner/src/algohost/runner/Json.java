package algohost.runner;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The harness's own JSON codec: it depends on nothing but the JDK, so it can neither clash with
 * nor be shadowed by the algorithm's libraries (Gson, Jackson, ujson... in target/lib).
 *
 * Parsing gives LinkedHashMap (objects), ArrayList (arrays), String, Long (or BigInteger beyond
 * 64 bits) for integral numbers, Double for the others, Boolean and null.
 *
 * Writing takes what an algorithm returns: maps, iterables, arrays, numbers, booleans, records
 * (by component), Scala collections, options, tuples and case classes (by reflection, since the
 * Scala library is on the algorithm's classpath only), JDK value types by their toString, and
 * other objects by their fields (as Gson would).
 */
final class Json {
  /** Input nested deeper than this is refused (the parser is recursive). */
  static final int MAX_DEPTH = 1000;

  private static final Pattern NUMBER = Pattern.compile("-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?");

  private Json() {}

  static final class SyntaxError extends Exception {
    private static final long serialVersionUID = 1L;

    SyntaxError(String message) {
      super(message);
    }
  }

  /** A result that has no JSON form (NaN, a cycle...). */
  static final class NotSerializable extends Exception {
    private static final long serialVersionUID = 1L;

    NotSerializable(String message) {
      super(message);
    }
  }

  // ---------------------------------------------------------------- parsing

  static Object parse(String text) throws SyntaxError {
    Parser p = new Parser(text);
    p.skipWhitespace();
    Object value = p.value(0);
    p.skipWhitespace();
    if (p.pos != text.length()) throw p.error("unexpected data after the JSON value");
    return value;
  }

  private static final class Parser {
    private final String s;
    private int pos;

    Parser(String s) {
      this.s = s;
    }

    SyntaxError error(String message) {
      return new SyntaxError(message + " at offset " + pos);
    }

    void skipWhitespace() {
      while (pos < s.length()) {
        char c = s.charAt(pos);
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
        pos++;
      }
    }

    private char peek() throws SyntaxError {
      if (pos >= s.length()) throw error("unexpected end of the JSON text");
      return s.charAt(pos);
    }

    private void expect(char c) throws SyntaxError {
      if (peek() != c) throw error("expected '" + c + "'");
      pos++;
    }

    Object value(int depth) throws SyntaxError {
      if (depth > MAX_DEPTH) throw error("JSON nested deeper than " + MAX_DEPTH + " levels");
      char c = peek();
      switch (c) {
        case '{':
          return object(depth);
        case '[':
          return array(depth);
        case '"':
          return string();
        case 't':
          literal("true");
          return Boolean.TRUE;
        case 'f':
          literal("false");
          return Boolean.FALSE;
        case 'n':
          literal("null");
          return null;
        default:
          if (c == '-' || (c >= '0' && c <= '9')) return number();
          throw error("unexpected character '" + c + "'");
      }
    }

    private void literal(String word) throws SyntaxError {
      if (!s.startsWith(word, pos)) throw error("invalid literal");
      pos += word.length();
    }

    private Map<String, Object> object(int depth) throws SyntaxError {
      pos++;
      Map<String, Object> map = new LinkedHashMap<>();
      skipWhitespace();
      if (peek() == '}') {
        pos++;
        return map;
      }
      for (;;) {
        skipWhitespace();
        if (peek() != '"') throw error("expected a string key");
        String key = string();
        skipWhitespace();
        expect(':');
        skipWhitespace();
        map.put(key, value(depth + 1));
        skipWhitespace();
        char c = peek();
        pos++;
        if (c == '}') return map;
        if (c != ',') {
          pos--;
          throw error("expected ',' or '}'");
        }
      }
    }

    private List<Object> array(int depth) throws SyntaxError {
      pos++;
      List<Object> list = new ArrayList<>();
      skipWhitespace();
      if (peek() == ']') {
        pos++;
        return list;
      }
      for (;;) {
        skipWhitespace();
        list.add(value(depth + 1));
        skipWhitespace();
        char c = peek();
        pos++;
        if (c == ']') return list;
        if (c != ',') {
          pos--;
          throw error("expected ',' or ']'");
        }
      }
    }

    private String string() throws SyntaxError {
      pos++; // the opening quote
      int start = pos;
      // Fast path: no escapes.
      while (pos < s.length()) {
        char c = s.charAt(pos);
        if (c == '"') return s.substring(start, pos++);
        if (c == '\\' || c < 0x20) break;
        pos++;
      }
      StringBuilder sb = new StringBuilder(s.length() - start < 64 ? 16 : 64).append(s, start, pos);
      for (;;) {
        char c = peek();
        pos++;
        if (c == '"') return sb.toString();
        if (c < 0x20) {
          pos--;
          throw error("control character in a string");
        }
        if (c != '\\') {
          sb.append(c);
          continue;
        }
        char e = peek();
        pos++;
        switch (e) {
          case '"':
          case '\\':
          case '/':
            sb.append(e);
            break;
          case 'b':
            sb.append('\b');
            break;
          case 'f':
            sb.append('\f');
            break;
          case 'n':
            sb.append('\n');
            break;
          case 'r':
            sb.append('\r');
            break;
          case 't':
            sb.append('\t');
            break;
          case 'u':
            if (pos + 4 > s.length()) throw error("truncated \\u escape");
            int code = 0;
            for (int i = 0; i < 4; i++) {
              int d = Character.digit(s.charAt(pos + i), 16);
              if (d < 0) throw error("invalid \\u escape");
              code = code * 16 + d;
            }
            pos += 4;
            sb.append((char) code);
            break;
          default:
            pos--;
            throw error("invalid escape '\\" + e + "'");
        }
      }
    }

    private Object number() throws SyntaxError {
      int start = pos;
      if (s.charAt(pos) == '-') pos++;
      if (peek() == '0') {
        pos++;
      } else if (peek() >= '1' && peek() <= '9') {
        while (pos < s.length() && isDigit(s.charAt(pos))) pos++;
      } else {
        throw error("invalid number");
      }
      boolean integral = true;
      if (pos < s.length() && s.charAt(pos) == '.') {
        integral = false;
        pos++;
        if (pos >= s.length() || !isDigit(s.charAt(pos))) throw error("invalid number");
        while (pos < s.length() && isDigit(s.charAt(pos))) pos++;
      }
      if (pos < s.length() && (s.charAt(pos) == 'e' || s.charAt(pos) == 'E')) {
        integral = false;
        pos++;
        if (pos < s.length() && (s.charAt(pos) == '+' || s.charAt(pos) == '-')) pos++;
        if (pos >= s.length() || !isDigit(s.charAt(pos))) throw error("invalid number");
        while (pos < s.length() && isDigit(s.charAt(pos))) pos++;
      }
      String text = s.substring(start, pos);
      if (integral) {
        if (text.length() < 19) return Long.parseLong(text);
        BigInteger big = new BigInteger(text);
        return big.bitLength() < 64 ? (Object) big.longValue() : big;
      }
      return Double.parseDouble(text);
    }

    private static boolean isDigit(char c) {
      return c >= '0' && c <= '9';
    }
  }

  // ---------------------------------------------------------------- writing

  static String write(Object value) throws NotSerializable {
    StringBuilder out = new StringBuilder();
    new Writer(out).value(value, 0);
    return out.toString();
  }

  static void writeString(StringBuilder out, String s) {
    out.append('"');
    int n = s.length();
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          out.append("\\\"");
          break;
        case '\\':
          out.append("\\\\");
          break;
        case '\n':
          out.append("\\n");
          break;
        case '\r':
          out.append("\\r");
          break;
        case '\t':
          out.append("\\t");
          break;
        case '\b':
          out.append("\\b");
          break;
        case '\f':
          out.append("\\f");
          break;
        default:
          if (c < 0x20 || c == '\u2028' || c == '\u2029') {
            unicodeEscape(out, c);
          } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
            out.append(c).append(s.charAt(++i));
          } else if (Character.isSurrogate(c)) {
            // A lone surrogate has no UTF-8 form: keep it as an escape rather than a '?'.
            unicodeEscape(out, c);
          } else {
            out.append(c);
          }
      }
    }
    out.append('"');
  }

  private static void unicodeEscape(StringBuilder out, char c) {
    out.append("\\u");
    String hex = Integer.toHexString(c);
    for (int k = hex.length(); k < 4; k++) out.append('0');
    out.append(hex);
  }

  private static final class Writer {
    private final StringBuilder out;
    /** Supertypes of a class by name (the Scala library is reached only this way). */
    private final Map<Class<?>, Map<String, Class<?>>> supertypes = new HashMap<>();

    Writer(StringBuilder out) {
      this.out = out;
    }

    void value(Object v, int depth) throws NotSerializable {
      if (depth > MAX_DEPTH) {
        throw new NotSerializable("the result nests deeper than " + MAX_DEPTH + " levels (does it contain a cycle?)");
      }
      if (v == null) {
        out.append("null");
      } else if (v instanceof String) {
        writeString(out, (String) v);
      } else if (v instanceof Boolean) {
        out.append(((Boolean) v).booleanValue());
      } else if (v instanceof Number) {
        number((Number) v);
      } else if (v instanceof Character || v instanceof CharSequence) {
        writeString(out, v.toString());
      } else if (v instanceof byte[]) {
        // Inside a JSON result, bytes are base64 as in binary results.
        writeString(out, Base64.getEncoder().encodeToString((byte[]) v));
      } else if (v instanceof Map) {
        out.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
          if (!first) out.append(',');
          first = false;
          writeString(out, String.valueOf(e.getKey()));
          out.append(':');
          value(e.getValue(), depth + 1);
        }
        out.append('}');
      } else if (v instanceof Optional) {
        value(((Optional<?>) v).orElse(null), depth + 1);
      } else if (v instanceof Iterable) {
        elements(((Iterable<?>) v).iterator(), depth);
      } else if (v instanceof Iterator) {
        elements((Iterator<?>) v, depth);
      } else if (v.getClass().isArray()) {
        out.append('[');
        int n = Array.getLength(v);
        for (int i = 0; i < n; i++) {
          if (i > 0) out.append(',');
          value(Array.get(v, i), depth + 1);
        }
        out.append(']');
      } else if (v instanceof Enum) {
        writeString(out, ((Enum<?>) v).name());
      } else if (v.getClass().isRecord()) {
        record(v, depth);
      } else if (!scala(v, depth)) {
        String name = v.getClass().getName();
        if (name.startsWith("java.") || name.startsWith("javax.") || name.startsWith("jdk.") || name.startsWith("sun.")) {
          // JDK value types (dates, UUID, URI, Path...) by their usual text form.
          writeString(out, v.toString());
        } else {
          fields(v, depth);
        }
      }
    }

    private void elements(Iterator<?> it, int depth) throws NotSerializable {
      out.append('[');
      boolean first = true;
      while (it.hasNext()) {
        if (!first) out.append(',');
        first = false;
        value(it.next(), depth + 1);
      }
      out.append(']');
    }

    private void number(Number n) throws NotSerializable {
      if (n instanceof Double || n instanceof Float) {
        double d = n.doubleValue();
        if (Double.isNaN(d) || Double.isInfinite(d)) throw new NotSerializable(n + " has no JSON representation");
        out.append(n instanceof Float ? Float.toString(n.floatValue()) : Double.toString(d));
        return;
      }
      String text = n.toString();
      if (NUMBER.matcher(text).matches()) {
        out.append(text);
        return;
      }
      if (n instanceof BigDecimal) {
        out.append(((BigDecimal) n).toString().replace("E", "e"));
        return;
      }
      double d = n.doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) throw new NotSerializable(text + " has no JSON representation");
      out.append(Double.toString(d));
    }

    private void record(Object v, int depth) throws NotSerializable {
      out.append('{');
      boolean first = true;
      for (RecordComponent c : v.getClass().getRecordComponents()) {
        if (!first) out.append(',');
        first = false;
        writeString(out, c.getName());
        out.append(':');
        Method accessor = c.getAccessor();
        try {
          accessor.setAccessible(true);
          value(accessor.invoke(v), depth + 1);
        } catch (ReflectiveOperationException | RuntimeException e) {
          throw new NotSerializable("cannot read component " + c.getName() + " of " + v.getClass().getName() + ": " + e);
        }
      }
      out.append('}');
    }

    /** Other objects: their instance fields, subclass first, as Gson writes them. */
    private void fields(Object v, int depth) throws NotSerializable {
      out.append('{');
      Set<String> seen = new LinkedHashSet<>();
      boolean first = true;
      for (Class<?> c = v.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
        for (Field f : c.getDeclaredFields()) {
          int m = f.getModifiers();
          if (Modifier.isStatic(m) || Modifier.isTransient(m) || f.isSynthetic() || !seen.add(f.getName())) continue;
          Object fieldValue;
          try {
            f.setAccessible(true);
            fieldValue = f.get(v);
          } catch (ReflectiveOperationException | RuntimeException e) {
            continue; // not accessible (a module's private state): leave it out
          }
          if (!first) out.append(',');
          first = false;
          writeString(out, f.getName());
          out.append(':');
          value(fieldValue, depth + 1);
        }
      }
      out.append('}');
    }

    // Scala values, through the Scala library's interfaces found among the value's supertypes.

    private boolean scala(Object v, int depth) throws NotSerializable {
      Map<String, Class<?>> types = supertypesOf(v.getClass());
      try {
        Class<?> option = types.get("scala.Option");
        if (option != null) {
          boolean empty = (Boolean) option.getMethod("isEmpty").invoke(v);
          value(empty ? null : option.getMethod("get").invoke(v), depth + 1);
          return true;
        }
        Class<?> map = types.get("scala.collection.Map");
        if (map != null) {
          out.append('{');
          Iterator<?> it = scalaIterator(v, types.get("scala.collection.IterableOnce"));
          boolean first = true;
          while (it.hasNext()) {
            Object pair = it.next();
            Map<String, Class<?>> pairTypes = supertypesOf(pair.getClass());
            Class<?> tuple2 = pairTypes.get("scala.Tuple2");
            if (!first) out.append(',');
            first = false;
            writeString(out, String.valueOf(tuple2.getMethod("_1").invoke(pair)));
            out.append(':');
            value(tuple2.getMethod("_2").invoke(pair), depth + 1);
          }
          out.append('}');
          return true;
        }
        Class<?> iterableOnce = types.get("scala.collection.IterableOnce");
        if (iterableOnce != null) {
          elements(scalaIterator(v, iterableOnce), depth);
          return true;
        }
        Class<?> product = types.get("scala.Product");
        if (product != null) {
          int arity = (Integer) product.getMethod("productArity").invoke(v);
          Method element = product.getMethod("productElement", int.class);
          boolean tuple = false;
          for (String name : types.keySet()) tuple |= name.matches("scala\\.Tuple[0-9]+");
          if (arity == 0) {
            writeString(out, v.toString()); // case objects, Scala 3 enum cases
          } else if (tuple) {
            out.append('[');
            for (int i = 0; i < arity; i++) {
              if (i > 0) out.append(',');
              value(element.invoke(v, i), depth + 1);
            }
            out.append(']');
          } else {
            Method elementName = product.getMethod("productElementName", int.class);
            out.append('{');
            for (int i = 0; i < arity; i++) {
              if (i > 0) out.append(',');
              writeString(out, (String) elementName.invoke(v, i));
              out.append(':');
              value(element.invoke(v, i), depth + 1);
            }
            out.append('}');
          }
          return true;
        }
      } catch (ReflectiveOperationException e) {
        Throwable cause = e.getCause() != null ? e.getCause() : e;
        throw new NotSerializable("cannot read the Scala value " + v.getClass().getName() + ": " + cause);
      }
      return false;
    }

    private Iterator<?> scalaIterator(Object v, Class<?> iterableOnce) throws ReflectiveOperationException {
      Object it = iterableOnce.getMethod("iterator").invoke(v);
      Class<?> iterator = supertypesOf(it.getClass()).get("scala.collection.Iterator");
      Method hasNext = iterator.getMethod("hasNext");
      Method next = iterator.getMethod("next");
      return new Iterator<Object>() {
        @Override
        public boolean hasNext() {
          try {
            return (Boolean) hasNext.invoke(it);
          } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e.getCause() != null ? e.getCause() : e);
          }
        }

        @Override
        public Object next() {
          try {
            return next.invoke(it);
          } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e.getCause() != null ? e.getCause() : e);
          }
        }
      };
    }

    private Map<String, Class<?>> supertypesOf(Class<?> cls) {
      Map<String, Class<?>> known = supertypes.get(cls);
      if (known != null) return known;
      Map<String, Class<?>> all = new LinkedHashMap<>();
      collect(cls, all);
      supertypes.put(cls, all);
      return all;
    }

    private static void collect(Class<?> c, Map<String, Class<?>> all) {
      if (c == null || all.putIfAbsent(c.getName(), c) != null) return;
      collect(c.getSuperclass(), all);
      for (Class<?> i : c.getInterfaces()) collect(i, all);
    }
  }
}
