package com.algorithmia.internal;

import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The client's own small JSON codec (not API): the client is on every Java and Scala algorithm's
 * class path, so it brings no library that could clash with the algorithm's own.
 * Objects parse to LinkedHashMap, arrays to ArrayList, integral numbers to Long (Double when
 * they do not fit or have a fraction or exponent).
 */
public final class Json {
  private Json() {}

  public static Object parse(String text) throws java.io.IOException {
    Parser p = new Parser(text);
    p.skipSpace();
    Object value = p.value(0);
    p.skipSpace();
    if (p.pos != text.length()) throw p.error("unexpected text after the value");
    return value;
  }

  /** Maps, iterables, arrays, strings, numbers, booleans and null; anything else is refused. */
  public static String write(Object value) {
    StringBuilder sb = new StringBuilder();
    write(sb, value, 0);
    return sb.toString();
  }

  private static void write(StringBuilder sb, Object v, int depth) {
    if (depth > 1000) throw new IllegalArgumentException("the value is nested too deeply for JSON");
    if (v == null) {
      sb.append("null");
    } else if (v instanceof CharSequence || v instanceof Character) {
      string(sb, v.toString());
    } else if (v instanceof Boolean) {
      sb.append(v);
    } else if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) throw new IllegalArgumentException("JSON has no " + d);
      sb.append(d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d));
    } else if (v instanceof Number) {
      sb.append(v);
    } else if (v instanceof Map) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        if (!first) sb.append(',');
        first = false;
        string(sb, String.valueOf(e.getKey()));
        sb.append(':');
        write(sb, e.getValue(), depth + 1);
      }
      sb.append('}');
    } else if (v instanceof Iterable) {
      sb.append('[');
      boolean first = true;
      for (Object item : (Iterable<?>) v) {
        if (!first) sb.append(',');
        first = false;
        write(sb, item, depth + 1);
      }
      sb.append(']');
    } else if (v.getClass().isArray()) {
      sb.append('[');
      for (int i = 0, n = Array.getLength(v); i < n; i++) {
        if (i > 0) sb.append(',');
        write(sb, Array.get(v, i), depth + 1);
      }
      sb.append(']');
    } else {
      throw new IllegalArgumentException(
          "cannot send a " + v.getClass().getName() + " as JSON: pass a String, byte[], Map, List, array, number or boolean, or JSON text to pipeJson");
    }
  }

  public static void string(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"': sb.append("\\\""); break;
        case '\\': sb.append("\\\\"); break;
        case '\n': sb.append("\\n"); break;
        case '\r': sb.append("\\r"); break;
        case '\t': sb.append("\\t"); break;
        default:
          if (c < 0x20 || Character.isSurrogate(c) && !validSurrogate(s, i)) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
      }
    }
    sb.append('"');
  }

  private static boolean validSurrogate(String s, int i) {
    char c = s.charAt(i);
    if (Character.isHighSurrogate(c)) return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
    return i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
  }

  private static final class Parser {
    final String s;
    int pos;

    Parser(String s) {
      this.s = s;
    }

    java.io.IOException error(String why) {
      return new java.io.IOException("invalid JSON at " + pos + ": " + why);
    }

    void skipSpace() {
      while (pos < s.length() && " \t\r\n".indexOf(s.charAt(pos)) >= 0) pos++;
    }

    Object value(int depth) throws java.io.IOException {
      if (depth > 1000) throw error("nested too deeply");
      if (pos >= s.length()) throw error("unexpected end");
      char c = s.charAt(pos);
      switch (c) {
        case '{': return object(depth);
        case '[': return array(depth);
        case '"': return string();
        case 't': return literal("true", Boolean.TRUE);
        case 'f': return literal("false", Boolean.FALSE);
        case 'n': return literal("null", null);
        default: return number();
      }
    }

    Object literal(String word, Object value) throws java.io.IOException {
      if (!s.startsWith(word, pos)) throw error("unexpected character");
      pos += word.length();
      return value;
    }

    Map<String, Object> object(int depth) throws java.io.IOException {
      Map<String, Object> map = new LinkedHashMap<>();
      pos++;
      skipSpace();
      if (pos < s.length() && s.charAt(pos) == '}') {
        pos++;
        return map;
      }
      while (true) {
        skipSpace();
        if (pos >= s.length() || s.charAt(pos) != '"') throw error("expected a key");
        String key = string();
        skipSpace();
        if (pos >= s.length() || s.charAt(pos) != ':') throw error("expected ':'");
        pos++;
        skipSpace();
        map.put(key, value(depth + 1));
        skipSpace();
        if (pos < s.length() && s.charAt(pos) == ',') {
          pos++;
        } else if (pos < s.length() && s.charAt(pos) == '}') {
          pos++;
          return map;
        } else {
          throw error("expected ',' or '}'");
        }
      }
    }

    List<Object> array(int depth) throws java.io.IOException {
      List<Object> list = new ArrayList<>();
      pos++;
      skipSpace();
      if (pos < s.length() && s.charAt(pos) == ']') {
        pos++;
        return list;
      }
      while (true) {
        skipSpace();
        list.add(value(depth + 1));
        skipSpace();
        if (pos < s.length() && s.charAt(pos) == ',') {
          pos++;
        } else if (pos < s.length() && s.charAt(pos) == ']') {
          pos++;
          return list;
        } else {
          throw error("expected ',' or ']'");
        }
      }
    }

    String string() throws java.io.IOException {
      StringBuilder sb = new StringBuilder();
      pos++;
      while (true) {
        if (pos >= s.length()) throw error("unterminated string");
        char c = s.charAt(pos++);
        if (c == '"') return sb.toString();
        if (c != '\\') {
          sb.append(c);
          continue;
        }
        if (pos >= s.length()) throw error("unterminated escape");
        char e = s.charAt(pos++);
        switch (e) {
          case '"': case '\\': case '/': sb.append(e); break;
          case 'b': sb.append('\b'); break;
          case 'f': sb.append('\f'); break;
          case 'n': sb.append('\n'); break;
          case 'r': sb.append('\r'); break;
          case 't': sb.append('\t'); break;
          case 'u':
            if (pos + 4 > s.length()) throw error("short \\u escape");
            try {
              sb.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
            } catch (NumberFormatException ex) {
              throw error("bad \\u escape");
            }
            pos += 4;
            break;
          default: throw error("bad escape");
        }
      }
    }

    Object number() throws java.io.IOException {
      int start = pos;
      if (pos < s.length() && s.charAt(pos) == '-') pos++;
      boolean integral = true;
      while (pos < s.length()) {
        char c = s.charAt(pos);
        if (c >= '0' && c <= '9') {
          pos++;
        } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
          integral = false;
          pos++;
        } else {
          break;
        }
      }
      String text = s.substring(start, pos);
      if (text.isEmpty() || text.equals("-")) throw error("unexpected character");
      try {
        if (integral) {
          try {
            return Long.parseLong(text);
          } catch (NumberFormatException tooBig) {
            return Double.parseDouble(text);
          }
        }
        return Double.parseDouble(text);
      } catch (NumberFormatException ex) {
        throw error("bad number " + text);
      }
    }
  }
}
