package algohost.runner;

import java.lang.reflect.Array;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns a request's input into the argument apply's parameter takes: text → String, binary →
 * byte[], JSON → String, boxed or primitive numbers, Boolean, Map/List (LinkedHashMap/ArrayList,
 * elements converted to the declared type arguments), arrays, enums by name, or the parsed value
 * itself for Object. Anything else is an InputError.
 */
final class Inputs {
  private Inputs() {}

  static final class InputError extends Exception {
    private static final long serialVersionUID = 1L;

    InputError(String message) {
      super(message);
    }
  }

  static Object convert(Object contentType, Object data, Type type) throws InputError {
    Class<?> raw = rawClass(type);
    if ("text".equals(contentType)) {
      if (!(data instanceof String)) throw new InputError("text input must be a string");
      if (raw == String.class || raw == Object.class || raw == CharSequence.class) return data;
      throw new InputError("apply takes " + type.getTypeName() + ", which text input cannot be: send JSON (Content-Type: application/json)");
    }
    if ("binary".equals(contentType)) {
      if (!(data instanceof String)) throw new InputError("binary input must be a base64 string");
      byte[] bytes;
      try {
        bytes = Base64.getDecoder().decode((String) data);
      } catch (IllegalArgumentException e) {
        throw new InputError("binary input is not valid base64: " + e.getMessage());
      }
      if (raw == byte[].class || raw == Object.class) return bytes;
      throw new InputError("apply takes " + type.getTypeName() + ", not binary input (declare byte[] to receive bytes)");
    }
    if ("json".equals(contentType)) return fromJson(data, type, "the input");
    throw new InputError("unknown content_type " + contentType + " (json, text or binary)");
  }

  private static Object fromJson(Object v, Type type, String where) throws InputError {
    if (type instanceof WildcardType) {
      return fromJson(v, ((WildcardType) type).getUpperBounds()[0], where);
    }
    if (type instanceof TypeVariable) {
      Type[] bounds = ((TypeVariable<?>) type).getBounds();
      return fromJson(v, bounds.length > 0 ? bounds[0] : Object.class, where);
    }
    if (type instanceof GenericArrayType) {
      Type component = ((GenericArrayType) type).getGenericComponentType();
      return array(v, rawClass(component), component, type, where);
    }
    if (type instanceof ParameterizedType) {
      ParameterizedType p = (ParameterizedType) type;
      Class<?> raw = rawClass(p);
      Type[] args = p.getActualTypeArguments();
      if (v instanceof Map && raw.isAssignableFrom(LinkedHashMap.class) && args.length == 2) {
        if (!rawClass(args[0]).isAssignableFrom(String.class)) {
          throw new InputError(where + " is a JSON object, whose keys are strings, not " + args[0].getTypeName());
        }
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
          String key = (String) e.getKey();
          out.put(key, fromJson(e.getValue(), args[1], where + "[\"" + key + "\"]"));
        }
        return out;
      }
      if (v instanceof List && raw.isAssignableFrom(ArrayList.class) && args.length == 1) {
        List<?> in = (List<?>) v;
        List<Object> out = new ArrayList<>(in.size());
        for (int i = 0; i < in.size(); i++) out.add(fromJson(in.get(i), args[0], where + "[" + i + "]"));
        return out;
      }
      return fromJson(v, raw, where);
    }
    Class<?> c = (Class<?>) type;
    if (v == null) {
      if (c.isPrimitive()) throw new InputError(where + " must be a " + c.getName() + ", not null");
      return null;
    }
    if (c == Object.class) return v;
    if (c.isPrimitive()) c = box(c);
    if (c == String.class || c == CharSequence.class) {
      if (v instanceof String) return v;
    } else if (c == Boolean.class) {
      if (v instanceof Boolean) return v;
    } else if (c == Character.class) {
      if (v instanceof String && ((String) v).length() == 1) return ((String) v).charAt(0);
    } else if (Number.class.isAssignableFrom(c)) {
      if (v instanceof Number) return number((Number) v, c, where);
    } else if (c.isArray()) {
      return array(v, c.getComponentType(), c.getComponentType(), c, where);
    } else if (c.isEnum()) {
      if (v instanceof String) {
        for (Object constant : c.getEnumConstants()) {
          if (((Enum<?>) constant).name().equals(v)) return constant;
        }
        throw new InputError(where + ": \"" + v + "\" is not a constant of " + c.getName());
      }
    } else if (v instanceof Map && c.isAssignableFrom(LinkedHashMap.class)) {
      return v;
    } else if (v instanceof List && c.isAssignableFrom(ArrayList.class)) {
      return v;
    }
    throw new InputError(where + " is " + describe(v) + ", which apply's parameter type " + c.getName() + " cannot take");
  }

  private static Object array(Object v, Class<?> component, Type componentType, Type type, String where) throws InputError {
    if (!(v instanceof List)) throw new InputError(where + " is " + describe(v) + ", not the array " + type.getTypeName() + " needs");
    List<?> in = (List<?>) v;
    Object out = Array.newInstance(component, in.size());
    for (int i = 0; i < in.size(); i++) Array.set(out, i, fromJson(in.get(i), componentType, where + "[" + i + "]"));
    return out;
  }

  private static Object number(Number n, Class<?> c, String where) throws InputError {
    if (c == Number.class) return n;
    if (c == Double.class) return n.doubleValue();
    if (c == Float.class) return n.floatValue();
    if (c == BigDecimal.class) return n instanceof Double ? BigDecimal.valueOf((Double) n) : new BigDecimal(n.toString());
    BigInteger big;
    if (n instanceof Long) {
      big = BigInteger.valueOf((Long) n);
    } else if (n instanceof BigInteger) {
      big = (BigInteger) n;
    } else {
      double d = n.doubleValue();
      if (Double.isInfinite(d) || d != Math.rint(d)) throw new InputError(where + " must be an integer, not " + n);
      big = new BigDecimal(d).toBigInteger();
    }
    if (c == BigInteger.class) return big;
    long min;
    long max;
    if (c == Long.class) {
      min = Long.MIN_VALUE;
      max = Long.MAX_VALUE;
    } else if (c == Integer.class) {
      min = Integer.MIN_VALUE;
      max = Integer.MAX_VALUE;
    } else if (c == Short.class) {
      min = Short.MIN_VALUE;
      max = Short.MAX_VALUE;
    } else if (c == Byte.class) {
      min = Byte.MIN_VALUE;
      max = Byte.MAX_VALUE;
    } else {
      throw new InputError(where + " is a number, which apply's parameter type " + c.getName() + " cannot take");
    }
    if (big.bitLength() > 63 || big.longValue() < min || big.longValue() > max) {
      throw new InputError(where + ": " + n + " is out of range for " + c.getSimpleName());
    }
    long l = big.longValue();
    if (c == Long.class) return l;
    if (c == Integer.class) return (int) l;
    if (c == Short.class) return (short) l;
    return (byte) l;
  }

  static Class<?> rawClass(Type type) {
    if (type instanceof Class) return (Class<?>) type;
    if (type instanceof ParameterizedType) return rawClass(((ParameterizedType) type).getRawType());
    if (type instanceof GenericArrayType) {
      return Array.newInstance(rawClass(((GenericArrayType) type).getGenericComponentType()), 0).getClass();
    }
    if (type instanceof WildcardType) return rawClass(((WildcardType) type).getUpperBounds()[0]);
    if (type instanceof TypeVariable) {
      Type[] bounds = ((TypeVariable<?>) type).getBounds();
      return bounds.length > 0 ? rawClass(bounds[0]) : Object.class;
    }
    return Object.class;
  }

  private static Class<?> box(Class<?> c) {
    if (c == int.class) return Integer.class;
    if (c == long.class) return Long.class;
    if (c == double.class) return Double.class;
    if (c == float.class) return Float.class;
    if (c == boolean.class) return Boolean.class;
    if (c == short.class) return Short.class;
    if (c == byte.class) return Byte.class;
    if (c == char.class) return Character.class;
    return Void.class;
  }

  private static String describe(Object v) {
    if (v instanceof Map) return "a JSON object";
    if (v instanceof List) return "a JSON array";
    if (v instanceof String) return "a JSON string";
    if (v instanceof Boolean) return "a JSON boolean";
    if (v instanceof Number) return "a JSON number";
    return "JSON null";
  }
}
